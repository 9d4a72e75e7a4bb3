"""What a model's source publishes (the files of a commit or under a prefix, with their sizes
and digests) and fetching them into a staging directory: the Hugging Face Hub through
huggingface_hub, S3 through boto3 (each imported only when used). Part of the hydrator image.
"""

import argparse
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from modelfleet_contracts.hydration import HF_TOKEN_ENV

from modelfleet_hydrator.integrity import Expected, s3_expected
from modelfleet_hydrator.partials import S3_PART, s3_partials


def safe_join(root: Path, relative: str) -> Path:
    """`root/relative`, refusing anything that would land outside `root`."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root.resolve()):
        raise SystemExit(f"refusing to write outside the cache: {relative!r}")
    return target


def huggingface_listing(
    args: argparse.Namespace, revision: str | None
) -> tuple[str, list[Expected]]:
    """The commit `revision` names now, and the files (after include/exclude) it holds."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile
    from huggingface_hub.utils import filter_repo_objects

    api = HfApi(token=os.environ.get(HF_TOKEN_ENV) or None)
    commit = api.repo_info(args.repo, revision=revision).sha
    if not commit:
        raise RuntimeError(f"the Hub resolved no commit for revision {revision!r}")
    tree = {
        f.path: f
        for f in api.list_repo_tree(args.repo, revision=commit, recursive=True)
        if isinstance(f, RepoFile)
    }
    chosen = filter_repo_objects(
        sorted(tree), allow_patterns=args.include or None, ignore_patterns=args.exclude or None
    )
    expected = []
    for path in chosen:
        entry = tree[path]
        if entry.lfs is not None:
            expected.append(Expected(path, entry.size, sha256=entry.lfs.sha256))
        else:
            expected.append(Expected(path, entry.size, git_blob=entry.blob_id))
    return commit, expected


def download_huggingface(args: argparse.Namespace, commit: str, into: Path) -> None:
    from huggingface_hub import snapshot_download

    # local_dir keeps per-file metadata under into/.cache, which is what lets a cut-off
    # download resume instead of starting again.
    snapshot_download(
        repo_id=args.repo,
        revision=commit,
        allow_patterns=args.include or None,
        ignore_patterns=args.exclude or None,
        local_dir=str(into),
        token=os.environ.get(HF_TOKEN_ENV) or None,
    )


def s3_listing(args: argparse.Namespace) -> list[tuple[str, Expected]]:
    """(key, what it should be) for every object under the URI's prefix."""
    import boto3

    bucket, _, prefix = args.uri[len("s3://") :].partition("/")
    client = boto3.client("s3")
    found = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            relative = item["Key"][len(prefix) :].lstrip("/")
            if relative and not relative.endswith("/"):
                found.append(
                    (item["Key"], s3_expected(relative, item["Size"], item.get("ETag", "")))
                )
    return found


# Objects fetched at once. Each download_file splits an object of 8 MiB or more into ranged
# GETs on up to 10 threads of its own (boto3's defaults), so the many small files of a model
# no longer wait in line behind each other while the large ones still use the link fully.
S3_PARALLEL_OBJECTS = 8


def download_s3(
    args: argparse.Namespace,
    objects: list[tuple[str, Expected]],
    into: Path,
    log: Callable[[str], None],
) -> None:
    """Fetch every object not already in place at its size, several at once, each through a
    partial file renamed into place once complete. The first failure fails the attempt once
    the downloads under way have ended (those that finished are kept for the next one)."""
    import boto3

    bucket = args.uri[len("s3://") :].partition("/")[0]
    client = boto3.client("s3")  # boto3's clients may be shared between threads

    def fetch(key: str, want: Expected) -> None:
        target = safe_join(into, want.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + S3_PART)
        client.download_file(bucket, key, str(partial))
        partial.replace(target)
        log(f"fetched {want.path} ({want.size} bytes)")

    missing = []
    for key, want in objects:
        target = safe_join(into, want.path)
        if not (target.exists() and target.stat().st_size == want.size):
            missing.append((key, want))  # else fetched by an earlier attempt (verified below)
            for leftover in s3_partials(target):  # boto3 never reuses a temporary name
                log(f"removing partial file of an interrupted attempt: {leftover.name}")
                leftover.unlink(missing_ok=True)
    with ThreadPoolExecutor(max_workers=S3_PARALLEL_OBJECTS) as pool:
        futures = [pool.submit(fetch, key, want) for key, want in missing]
        try:
            for future in as_completed(futures):
                future.result()
        finally:
            for future in futures:
                future.cancel()  # those not started: the attempt has failed
