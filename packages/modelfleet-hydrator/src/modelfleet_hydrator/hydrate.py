"""Download a model into a cache directory, once: the script a hydration Job runs.

    hydrate.py --cache-dir=DIR --fingerprint=FP --source=HuggingFace --repo=R [--revision=V]
               [--include=GLOB ...] [--exclude=GLOB ...]
    hydrate.py --cache-dir=DIR --fingerprint=FP --source=S3 --uri=s3://bucket/prefix/
    hydrate.py --cache-dir=DIR --fingerprint=FP --source=OCI --image=REF [--path=/models]

(hydrate.py is the image's launcher, modelfleet_contracts.hydration.SCRIPT_PATH_IN_IMAGE;
`modelfleet-hydrate` takes the same flags.)

Weights land in DIR/FP. Files are fetched into DIR/.staging-FP (kept across attempts, so an
interrupted run resumes), every file is then checked against the size and digest its source
publishes (integrity.py), a completion marker is written only after every file passed, and the
directory is renamed into place: readers never see a half-downloaded or corrupted model. A
file that fails the check is deleted and the attempt fails naming it, so the Job's next attempt
fetches it again. With the marker present a re-run downloads nothing.

A branch or tag is resolved to a commit before anything is fetched; the files are listed and
fetched at that commit, which the marker records. An image's tag is resolved to its manifest's
digest the same way, and its layers are checked against their digests as they stream
(oci_layers.py). An interrupted attempt's staging directory
remembers its commit, so the next attempt finishes the same one.

Pruning keeps the copy in use: after success, the current copy and the previous complete one
(the latest marker other than the current copy's) stay, because replicas serving the previous
copy read it until their rolling update to the new one finishes; older copies this script
created in DIR go. Before a download starts, only the latest complete copy (the one being
served) is kept, so the claim never holds more than two copies: the one served and the one
being staged or just staged.

Only the standard library plus huggingface_hub (HuggingFace) or boto3 (S3) are needed (an
OCI registry is spoken to with the standard library: registry.py); the image pins both.
Values arrive as argv elements and are never handed to a shell.
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
from typing import Any

from modelfleet_hydrator import job_report, sources
from modelfleet_hydrator.integrity import Expected, StreamHasher, verify
from modelfleet_hydrator.oci_layers import RECORD, fetch_image
from modelfleet_hydrator.partials import is_partial, s3_partial_bytes

MARKER = ".modelfleet-complete"
STAGING_PREFIX = ".staging-"
# Inside a staging directory: the commit (or image digest) its files are being fetched at.
STAGED_REVISION = ".modelfleet-revision"
# huggingface_hub's per-file bookkeeping inside local_dir (what makes a re-run skip finished
# files); needed while staging, removed once the copy is complete.
HF_BOOKKEEPING = Path(".cache", "huggingface")
FINGERPRINT = re.compile(r"^[0-9a-f]{6,64}$")
REVISION = re.compile(r"^([0-9a-f]{40}|sha256:[0-9a-f]{64})$")  # a commit or an image digest


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} hydrate: {message}", flush=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="hydrate", allow_abbrev=False)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--fingerprint", required=True)
    parser.add_argument("--source", required=True, choices=["HuggingFace", "S3", "OCI"])
    parser.add_argument("--repo")
    parser.add_argument("--revision")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--uri")
    parser.add_argument("--image")
    parser.add_argument("--path", default="/models")
    # The Job this runs in: progress is reported on it (job_report.py). Without it, nothing is.
    parser.add_argument("--job", default="")
    parser.add_argument("--report-every", type=float, default=10.0, help="seconds")
    args = parser.parse_args(argv)
    if not FINGERPRINT.match(args.fingerprint):
        parser.error(f"fingerprint {args.fingerprint!r} is not a hex digest")
    if not os.path.isabs(args.cache_dir):
        parser.error("--cache-dir must be an absolute path")
    if args.source == "HuggingFace" and not args.repo:
        parser.error("--repo is required for HuggingFace")
    if args.source == "S3" and not (args.uri or "").startswith("s3://"):
        parser.error("--uri must be an s3:// URI for S3")
    if args.source == "OCI" and not args.image:
        parser.error("--image is required for OCI")
    if args.source == "OCI" and not (args.path.startswith("/") and args.path.strip("/")):
        parser.error("--path must be an absolute directory in the image, not /")
    return args


def forget(staging: Path, relative: str) -> None:
    """Delete a downloaded file and huggingface_hub's record of it, so it is fetched again."""
    (staging / relative).unlink(missing_ok=True)
    (staging / HF_BOOKKEEPING / "download" / f"{relative}.metadata").unlink(missing_ok=True)


def model_files(root: Path) -> list[Path]:
    """The downloaded files under `root`, without the downloader's bookkeeping or ours."""
    bookkeeping = root / HF_BOOKKEEPING
    ours = {root / MARKER, root / STAGED_REVISION, root / RECORD}
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
        if path not in wanted:
            why = "a partial file" if is_partial(path.name) else "not in the commit being staged"
            log(f"removing {path.relative_to(staging)}: {why}")
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
    """The commit (or image digest) an interrupted attempt was fetching into `staging`."""
    with contextlib.suppress(OSError):
        commit = (staging / STAGED_REVISION).read_text().strip()
        if REVISION.fullmatch(commit):
            return commit
    return None


def finished_files(staging: Path, expected: list[Expected]) -> list[Expected]:
    """The expected files in place at their full size."""
    found = []
    for want in expected:
        with contextlib.suppress(OSError):
            if (staging / want.path).stat().st_size == want.size:
                found.append(want)
    return found


def partial_bytes(staging: Path, unfinished: list[Expected]) -> int:
    """What the downloaders have written so far of the files not finished yet."""
    done = s3_partial_bytes(staging, [e.path for e in unfinished])
    for partial in (staging / HF_BOOKKEEPING).rglob("*.incomplete"):
        with contextlib.suppress(OSError):
            done += partial.stat().st_size
    return done


def measure(staging: Path, expected: list[Expected]) -> dict[str, str]:
    """Progress figures from what is on disk: finished files at their full size, plus what the
    downloaders have written of the others so far (their partial files).

    A file renamed into place while the partial files are read would be counted neither
    partial nor whole, and the figures would dip: the finished files are looked at before and
    after, and the partial files read again until both looks agree (each retry means another
    file finished, so there are at most as many retries as files)."""
    total = sum(e.size for e in expected)
    finished = finished_files(staging, expected)
    for _ in range(len(expected) + 1):
        partial = partial_bytes(staging, [e for e in expected if e not in finished])
        again = finished_files(staging, expected)
        if again == finished:
            break
        finished = again
    done = sum(want.size for want in finished) + partial
    return job_report.figures(min(done, total), total, len(finished), len(expected))


def fetch(
    args: argparse.Namespace, staging: Path, reporter: "job_report.Reporter", pin: str
) -> tuple[str, list[Expected], dict[str, dict[str, str]], int]:
    """List the model, report its size, download it into `staging` while reporting how far
    it got and hashing what arrives: (the commit, the image digest for OCI, "" for S3; the
    files; their digests as hashed while downloading; the bytes progress counts, which for
    an image are its layers')."""
    if args.source == "OCI":
        return fetch_image(
            args.image,
            args.path,
            (args.include, args.exclude),
            staging,
            reporter,
            pin=pin or staged_revision(staging) or "",
            pinned_file=staging / STAGED_REVISION,
            report_every=args.report_every,
            log=log,
            safe_join=sources.safe_join,
        )
    if args.source == "S3":
        objects = sources.s3_listing(args)
        commit, expected = "", [obj.want for obj in objects]
    else:
        commit, expected = sources.huggingface_listing(
            args, pin or staged_revision(staging) or args.revision
        )
        (staging / STAGED_REVISION).write_text(commit)
        log(f"revision {args.revision or 'default branch'!r} is commit {commit}")
    if not expected:
        return commit, expected, {}, 0
    reporter.send(
        {**measure(staging, expected), **({job_report.REVISION: commit} if commit else {})}
    )
    watcher = job_report.Watcher(reporter, lambda: measure(staging, expected), args.report_every)
    hasher = StreamHasher(staging, staging / HF_BOOKKEEPING, expected if commit else [])
    watcher.start()
    hasher.start()
    streamed: dict[str, dict[str, str]] = {}
    try:
        if args.source == "S3":
            streamed = sources.download_s3(args, objects, staging, log)
        else:
            sources.download_huggingface(args, commit, staging)
    finally:
        watcher.stop()
        streamed.update(hasher.finish())
    return commit, expected, streamed, sum(e.size for e in expected)


def promote(staging: Path, target: Path, record: dict[str, object]) -> None:
    """Mark `staging` complete and move it into place."""
    (staging / STAGED_REVISION).unlink(missing_ok=True)
    (staging / RECORD).unlink(missing_ok=True)
    (staging / MARKER).write_text(json.dumps(record, sort_keys=True))
    if target.exists():
        shutil.rmtree(target)  # an unmarked leftover: never served, safe to replace
    staging.rename(target)
    # Consumers see the model's files only; the bookkeeping served its purpose (the marker
    # now short-circuits every later run).
    shutil.rmtree(target / HF_BOOKKEEPING, ignore_errors=True)
    with contextlib.suppress(OSError):
        (target / HF_BOOKKEEPING.parent).rmdir()  # only if empty: never a repo's own files


def finished(reporter: "job_report.Reporter", record: dict[str, Any]) -> None:
    """Report a complete copy: every byte and file done, and its commit."""
    # An image's progress counts the bytes of its layers (what is downloaded), not its files'.
    size = int(record.get("layer_bytes", record.get("bytes", 0)))
    files = int(record.get("files", 0))
    values = job_report.figures(size, size, files, files)
    if record.get("revision"):
        values[job_report.REVISION] = str(record["revision"])
    reporter.send(values, final=True)
    job_report.termination_message(record)


def complete_record(target: Path) -> dict[str, Any]:
    """What the marker of a complete copy says (empty if it cannot be read)."""
    with contextlib.suppress(OSError, ValueError):
        record = json.loads((target / MARKER).read_text())
        return record if isinstance(record, dict) else {}
    return {}


def failed(message: str) -> int:
    log(f"download failed: {message}")
    job_report.termination_message({"error": message})
    return 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cache_dir = Path(args.cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = sources.safe_join(cache_dir, args.fingerprint)
    staging = sources.safe_join(cache_dir, STAGING_PREFIX + args.fingerprint)
    client = job_report.JobClient.in_cluster(args.job) if args.job else None
    reporter = job_report.Reporter(client, log if args.job else lambda _: None)
    pin = ""  # the commit the function pinned for this cache (HuggingFace only)
    if (target / MARKER).is_file():
        record: dict[str, Any] = complete_record(target)
        staged = str(record.get("revision") or "")
        pin = reporter.pinned_revision() if staged else ""
        if not pin or pin == staged:
            log(f"{target} is complete already; nothing to download")
            finished(reporter, record)
            prune_after_success(cache_dir, args.fingerprint)
            return 0
        # Staged before the pin existed, at another commit (the cluster was never reported
        # Ready for it): stage the pinned commit in its place.
        log(f"{target} holds commit {staged}, but the cache is pinned to {pin}; staging it")
    # The copy being served is the latest complete one; anything older goes before staging
    # another, so the claim holds at most two copies.
    prune(cache_dir, args.fingerprint, latest(completed_copies(cache_dir)))
    what = {"HuggingFace": args.repo, "S3": args.uri, "OCI": args.image}[args.source]
    log(f"downloading {what!r} ({args.source}) into {staging}")
    staging.mkdir(parents=True, exist_ok=True)
    drop_partial_files(staging)
    if args.source != "S3" and not pin:
        pin = reporter.pinned_revision()
    if pin:
        log(f"this cache is pinned to {pin} (resolved first on another cluster)")
    try:
        commit, expected, streamed, transferred = fetch(args, staging, reporter, pin)
    except Exception as exc:  # any download error: report it and let the Job retry
        return failed(f"{type(exc).__name__}: {exc}")
    if not expected:
        # An empty "model" marked complete would be served as Ready: fail visibly instead.
        if args.source == "OCI":
            return failed(
                f"the image holds no file under {args.path} that include/exclude select; "
                "check spec.oci.path and the filters"
            )
        return failed("no file matched; check the repo, revision and include/exclude")
    drop_unlisted(staging, expected)
    problems = verify(staging, expected, streamed)
    if problems:
        for problem in problems:
            log(f"integrity check failed: {problem}")
            forget(staging, problem.split(": ", 1)[0])
        return failed(
            f"{len(problems)} file(s) differ from what the source publishes; first: "
            f"{problems[0]}; they are fetched again on the next attempt"
        )
    size = sum(e.size for e in expected)
    log(
        f"verified {len(expected)} files ({size} bytes) against the published digests "
        f"({len(streamed)} hashed while downloading)"
    )
    pin = reporter.pinned_revision() if commit else ""
    if pin and pin != commit:
        # Another cluster resolved the branch first and the function pinned its commit while
        # this attempt ran: serve that one, never a different commit on this cluster.
        (staging / STAGED_REVISION).unlink(missing_ok=True)
        return failed(f"fetched commit {commit} but the cache is pinned to {pin}; retrying at it")
    record = {
        "fingerprint": args.fingerprint,
        "files": len(expected),
        "bytes": size,
    }
    if commit:
        record["revision"] = commit
    if transferred != size:
        record["layer_bytes"] = transferred
    promote(staging, target, record)
    finished(reporter, record)
    log(f"complete: {len(expected)} files in {target}")
    prune_after_success(cache_dir, args.fingerprint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
