"""Download a model into a cache directory, once: the script a hydration Job runs.

    hydrate.py --cache-dir=DIR --fingerprint=FP --source=HuggingFace --repo=R [--revision=V]
               [--include=GLOB ...] [--exclude=GLOB ...]
    hydrate.py --cache-dir=DIR --fingerprint=FP --source=S3 --uri=s3://bucket/prefix/

Weights land in DIR/FP. Files are fetched into DIR/.staging-FP (kept across attempts, so an
interrupted run resumes), a completion marker is written only after every file is there,
and the directory is then renamed into place: readers never see a half-downloaded model.
With the marker present a re-run downloads nothing.

Pruning keeps the copy in use: after success, the current copy and the previous complete one
(the latest marker other than the current copy's) stay, because replicas serving the previous
copy read it until their rolling update to the new one finishes; older copies this script
created in DIR go. Before a download starts, only the latest complete copy (the one being
served) is kept, so the claim never holds more than two copies: the one served and the one
being staged or just staged.

Only the standard library plus huggingface_hub (HuggingFace) or boto3 (S3) are needed; the
image pins both. Values arrive as argv elements and are never handed to a shell.
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

MARKER = ".modelfleet-complete"
STAGING_PREFIX = ".staging-"
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


def download_huggingface(args: argparse.Namespace, into: Path) -> None:
    from huggingface_hub import snapshot_download

    # local_dir keeps per-file metadata under into/.cache, which is what lets a cut-off
    # download resume instead of starting again.
    snapshot_download(
        repo_id=args.repo,
        revision=args.revision or None,
        allow_patterns=args.include or None,
        ignore_patterns=args.exclude or None,
        local_dir=str(into),
        token=os.environ.get("HF_TOKEN") or None,
    )


def download_s3(args: argparse.Namespace, into: Path) -> None:
    import boto3

    bucket, _, prefix = args.uri[len("s3://") :].partition("/")
    client = boto3.client("s3")
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
        for item in page.get("Contents", []):
            key = item["Key"]
            relative = key[len(prefix) :].lstrip("/")
            if not relative or relative.endswith("/"):
                continue
            target = safe_join(into, relative)
            if target.exists() and target.stat().st_size == item["Size"]:
                continue  # fetched by an earlier, interrupted attempt
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".part")
            client.download_file(bucket, key, str(partial))
            partial.replace(target)
            log(f"fetched {relative} ({item['Size']} bytes)")


def safe_join(root: Path, relative: str) -> Path:
    """`root/relative`, refusing anything that would land outside `root`."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root.resolve()):
        raise SystemExit(f"refusing to write outside the cache: {relative!r}")
    return target


def model_files(root: Path) -> list[Path]:
    """The downloaded files under `root`, without the downloader's bookkeeping."""
    bookkeeping = root / HF_BOOKKEEPING
    return [p for p in root.rglob("*") if p.is_file() and not p.is_relative_to(bookkeeping)]


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
        if args.source == "HuggingFace":
            download_huggingface(args, staging)
        else:
            download_s3(args, staging)
    except Exception as exc:  # any download error: report it and let the Job retry
        log(f"download failed: {type(exc).__name__}: {exc}")
        return 1
    files = len(model_files(staging))
    if not files:
        # An empty "model" marked complete would be served as Ready: fail visibly instead.
        log("download failed: no file matched; check the repo, revision and include/exclude")
        return 1
    (staging / MARKER).write_text(json.dumps({"fingerprint": args.fingerprint, "files": files}))
    if target.exists():
        shutil.rmtree(target)  # an unmarked leftover: never served, safe to replace
    staging.rename(target)
    # Consumers see the model's files only; the bookkeeping served its purpose (the marker
    # now short-circuits every later run).
    shutil.rmtree(target / HF_BOOKKEEPING, ignore_errors=True)
    with contextlib.suppress(OSError):
        (target / HF_BOOKKEEPING.parent).rmdir()  # only if empty: never a repo's own files
    log(f"complete: {files} files in {target}")
    prune_after_success(cache_dir, args.fingerprint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
