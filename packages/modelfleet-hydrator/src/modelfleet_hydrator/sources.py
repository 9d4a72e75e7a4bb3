"""What a model's source publishes (the files of a commit or under a prefix, with their sizes
and digests) and fetching them into a staging directory: the Hugging Face Hub through
huggingface_hub, S3 through boto3 (s3_download.py; each imported only when used). Part of the
hydrator image.
"""

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from modelfleet_contracts.hydration import HF_TOKEN_ENV

from modelfleet_hydrator import hub_reads, s3_download
from modelfleet_hydrator.integrity import Expected, s3_expected
from modelfleet_hydrator.partials import s3_partials
from modelfleet_hydrator.s3_download import S3Object


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

    hub_reads.read_in_large_pieces()
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


def s3_listing(args: argparse.Namespace) -> list[S3Object]:
    """Every object under the URI's prefix: its key, ETag, and what its file should be."""
    bucket, _, prefix = args.uri[len("s3://") :].partition("/")
    found = []
    pages = (
        s3_download.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    )
    for page in pages:
        for item in page.get("Contents", []):
            relative = item["Key"][len(prefix) :].lstrip("/")
            if relative and not relative.endswith("/"):
                etag = item.get("ETag", "")
                found.append(S3Object(item["Key"], etag, s3_expected(relative, item["Size"], etag)))
    return found


def download_s3(
    args: argparse.Namespace, objects: list[S3Object], into: Path, log: Callable[[str], None]
) -> dict[str, dict[str, str]]:
    """Fetch every object not already in place at its size (s3_download.py); the digests of
    those fetched. A killed attempt's partial files are removed first."""
    bucket = args.uri[len("s3://") :].partition("/")[0]
    missing = []
    for obj in objects:
        target = safe_join(into, obj.want.path)
        if not (target.exists() and target.stat().st_size == obj.want.size):
            missing.append((obj, target))  # else fetched by an earlier attempt (verified later)
            for leftover in s3_partials(target):  # boto3 never reuses a temporary name
                log(f"removing partial file of an interrupted attempt: {leftover.name}")
                leftover.unlink(missing_ok=True)
    if not missing:
        return {}
    return s3_download.download(s3_download.client(), bucket, missing, log)
