"""Download a model into a cache directory, once: the script a hydration Job runs.

    hydrate.py --cache-dir=DIR --fingerprint=FP --source=HuggingFace --repo=R [--revision=V]
               [--include=GLOB ...] [--exclude=GLOB ...]
    hydrate.py --cache-dir=DIR --fingerprint=FP --source=S3 --uri=s3://bucket/prefix/

Weights land in DIR/FP. Files are fetched into DIR/.staging-FP (kept across attempts, so an
interrupted run resumes), every file is then checked against the size and digest its source
publishes (integrity.py), a completion marker is written only after every file passed, and the
directory is renamed into place: readers never see a half-downloaded or corrupted model. A
file that fails the check is deleted and the attempt fails naming it, so the Job's next attempt
fetches it again. With the marker present a re-run downloads nothing.

A branch or tag is resolved to a commit before anything is fetched; the files are listed and
fetched at that commit, which the marker records. An interrupted attempt's staging directory
remembers its commit, so the next attempt finishes the same one.

Pruning keeps the copy in use: after success, the current copy and the previous complete one
(the latest marker other than the current copy's) stay, because replicas serving the previous
copy read it until their rolling update to the new one finishes; older copies this script
created in DIR go. Before a download starts, only the latest complete copy (the one being
served) is kept, so the claim never holds more than two copies: the one served and the one
being staged or just staged.

Only the standard library plus huggingface_hub (HuggingFace) or boto3 (S3) are needed; the
image pins both and holds this package's other modules beside this script. Values arrive as
argv elements and are never handed to a shell.
"""

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

try:
    from compose_model_cache.hydrator.integrity import Expected, s3_expected, verify
except ImportError:  # in the image: the modules sit beside this script
    from integrity import Expected, s3_expected, verify  # type: ignore[no-redef]

MARKER = ".modelfleet-complete"
STAGING_PREFIX = ".staging-"
# Inside a staging directory: the commit its files are being fetched at.
STAGED_REVISION = ".modelfleet-revision"
# huggingface_hub's per-file bookkeeping inside local_dir (what makes a re-run skip finished
# files); needed while staging, removed once the copy is complete.
HF_BOOKKEEPING = Path(".cache", "huggingface")
FINGERPRINT = re.compile(r"^[0-9a-f]{6,64}$")


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} hydrate: {message}", flush=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hydrate", allow_abbrev=False)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--fingerprint", required=True)
    parser.add_argument("--source", required=True, choices=["HuggingFace", "S3"])
    parser.add_argument("--repo")
    parser.add_argument("--revision")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--uri")
    args = parser.parse_args(argv)
    if not FINGERPRINT.match(args.fingerprint):
        parser.error(f"fingerprint {args.fingerprint!r} is not a hex digest")
    if not os.path.isabs(args.cache_dir):
        parser.error("--cache-dir must be an absolute path")
    if args.source == "HuggingFace" and not args.repo:
        parser.error("--repo is required for HuggingFace")
    if args.source == "S3" and not (args.uri or "").startswith("s3://"):
        parser.error("--uri must be an s3:// URI for S3")
    return args


def huggingface_listing(
    args: argparse.Namespace, revision: str | None
) -> tuple[str, list[Expected]]:
    """The commit `revision` names now, and the files (after include/exclude) it holds."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile
    from huggingface_hub.utils import filter_repo_objects

    api = HfApi(token=os.environ.get("HF_TOKEN") or None)
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
        token=os.environ.get("HF_TOKEN") or None,
    )


def forget(staging: Path, relative: str) -> None:
    """Delete a downloaded file and huggingface_hub's record of it, so it is fetched again."""
    (staging / relative).unlink(missing_ok=True)
    (staging / HF_BOOKKEEPING / "download" / f"{relative}.metadata").unlink(missing_ok=True)


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


def download_s3(args: argparse.Namespace, objects: list[tuple[str, Expected]], into: Path) -> None:
    import boto3

    bucket = args.uri[len("s3://") :].partition("/")[0]
    client = boto3.client("s3")
    for key, want in objects:
        target = safe_join(into, want.path)
        if target.exists() and target.stat().st_size == want.size:
            continue  # fetched by an earlier, interrupted attempt (verified below)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        client.download_file(bucket, key, str(partial))
        partial.replace(target)
        log(f"fetched {want.path} ({want.size} bytes)")


def safe_join(root: Path, relative: str) -> Path:
    """`root/relative`, refusing anything that would land outside `root`."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root.resolve()):
        raise SystemExit(f"refusing to write outside the cache: {relative!r}")
    return target


def model_files(root: Path) -> list[Path]:
    """The downloaded files under `root`, without the downloader's bookkeeping or ours."""
    bookkeeping = root / HF_BOOKKEEPING
    ours = {root / MARKER, root / STAGED_REVISION}
    return [
        p
        for p in root.rglob("*")
        if p.is_file() and p not in ours and not p.is_relative_to(bookkeeping)
    ]


def drop_unlisted(staging: Path, expected: list[Expected]) -> None:
    """Remove files an earlier attempt fetched at another commit that this one does not have:
    a copy holds exactly the files of one commit."""
    wanted = {staging / e.path for e in expected}
    for path in model_files(staging):
        if path not in wanted and not path.name.endswith(".part"):
            log(f"removing {path.relative_to(staging)}: not in the commit being staged")
            path.unlink()


def drop_partial_files(staging: Path) -> None:
    """Remove files a killed attempt was still writing. huggingface_hub writes each file to
    a process-unique `*.incomplete` name and never reuses one, so without this every evicted
    pod would leave up to a whole shard behind on the claim. Only one hydration pod writes a
    staging directory at a time (the Job replaces a pod only once it has failed)."""
    for partial in (staging / HF_BOOKKEEPING).rglob("*.incomplete"):
        log(f"removing partial file of an interrupted attempt: {partial.name}")
        partial.unlink(missing_ok=True)


def completed_copies(cache_dir: Path) -> dict[str, int]:
    """Fingerprint -> when its marker was written (ns), for every complete copy in DIR."""
    copies = {}
    for entry in cache_dir.iterdir():
        marker = entry / MARKER
        if FINGERPRINT.match(entry.name) and entry.is_dir() and marker.is_file():
            copies[entry.name] = marker.stat().st_mtime_ns
    return copies


def latest(completed: dict[str, int], *, besides: str = "") -> set[str]:
    """The most recently completed copy other than `besides` (empty when there is none)."""
    others = sorted((done, name) for name, done in completed.items() if name != besides)
    return {others[-1][1]} if others else set()


def prune(cache_dir: Path, current: str, keep: set[str]) -> None:
    """Remove the copies this script made (marked, or staging for another fingerprint) that
    are not in `keep`. Anything else in DIR is not ours and is left alone."""
    for entry in cache_dir.iterdir():
        if entry.name in keep or entry.name == STAGING_PREFIX + current or not entry.is_dir():
            continue
        ours = (entry / MARKER).is_file() and FINGERPRINT.match(entry.name)
        stale_staging = entry.name.startswith(STAGING_PREFIX) and FINGERPRINT.match(
            entry.name[len(STAGING_PREFIX) :]
        )
        if ours or stale_staging:
            log(f"pruning {entry.name}: superseded (keeping {', '.join(sorted(keep))})")
            shutil.rmtree(entry, ignore_errors=True)


def prune_after_success(cache_dir: Path, current: str) -> None:
    """Keep the current copy and the previous one (replicas may still be rolling off it)."""
    previous = latest(completed_copies(cache_dir), besides=current)
    prune(cache_dir, current, {current, *previous})
    for name in previous:
        log(f"keeping the previous copy {name} for replicas still rolling to {current}")


def staged_revision(staging: Path) -> str | None:
    """The commit an interrupted attempt was fetching into `staging`, if any."""
    with contextlib.suppress(OSError):
        commit = (staging / STAGED_REVISION).read_text().strip()
        if re.fullmatch(r"[0-9a-f]{40}", commit):
            return commit
    return None


def fetch(args: argparse.Namespace, staging: Path) -> tuple[str, list[Expected]]:
    """List and download the model into `staging`: (the commit, "" for S3; its files)."""
    if args.source == "S3":
        objects = s3_listing(args)
        download_s3(args, objects, staging)
        return "", [want for _, want in objects]
    commit, expected = huggingface_listing(args, staged_revision(staging) or args.revision)
    (staging / STAGED_REVISION).write_text(commit)
    log(f"revision {args.revision or 'default branch'!r} is commit {commit}")
    if expected:
        download_huggingface(args, commit, staging)
    return commit, expected


def promote(staging: Path, target: Path, record: dict[str, object]) -> None:
    """Mark `staging` complete and move it into place."""
    (staging / STAGED_REVISION).unlink(missing_ok=True)
    (staging / MARKER).write_text(json.dumps(record, sort_keys=True))
    if target.exists():
        shutil.rmtree(target)  # an unmarked leftover: never served, safe to replace
    staging.rename(target)
    # Consumers see the model's files only; the bookkeeping served its purpose (the marker
    # now short-circuits every later run).
    shutil.rmtree(target / HF_BOOKKEEPING, ignore_errors=True)
    with contextlib.suppress(OSError):
        (target / HF_BOOKKEEPING.parent).rmdir()  # only if empty: never a repo's own files


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cache_dir = Path(args.cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = safe_join(cache_dir, args.fingerprint)
    staging = safe_join(cache_dir, STAGING_PREFIX + args.fingerprint)
    if (target / MARKER).is_file():
        log(f"{target} is complete already; nothing to download")
        prune_after_success(cache_dir, args.fingerprint)
        return 0
    # The copy being served is the latest complete one; anything older goes before staging
    # another, so the claim holds at most two copies.
    prune(cache_dir, args.fingerprint, latest(completed_copies(cache_dir)))
    what = args.repo if args.source == "HuggingFace" else args.uri
    log(f"downloading {what!r} ({args.source}) into {staging}")
    staging.mkdir(parents=True, exist_ok=True)
    drop_partial_files(staging)
    try:
        commit, expected = fetch(args, staging)
    except Exception as exc:  # any download error: report it and let the Job retry
        log(f"download failed: {type(exc).__name__}: {exc}")
        return 1
    if not expected:
        # An empty "model" marked complete would be served as Ready: fail visibly instead.
        log("download failed: no file matched; check the repo, revision and include/exclude")
        return 1
    drop_unlisted(staging, expected)
    problems = verify(staging, expected)
    if problems:
        for problem in problems:
            log(f"integrity check failed: {problem}")
            forget(staging, problem.split(": ", 1)[0])
        log(
            f"download failed: {len(problems)} file(s) differ from what the source publishes; "
            f"first: {problems[0]}; they are fetched again on the next attempt"
        )
        return 1
    size = sum(e.size for e in expected)
    log(f"verified {len(expected)} files ({size} bytes) against the published digests")
    record = {"fingerprint": args.fingerprint, "files": len(expected), "bytes": size}
    if commit:
        record["revision"] = commit
    promote(staging, target, record)
    log(f"complete: {len(expected)} files in {target}")
    prune_after_success(cache_dir, args.fingerprint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
