"""What a hydration Job reported about itself, and the figures a cluster's status row shows.

The hydrator writes its figures as annotations on its own Job (modelfleet_hydrator/job_report.py);
provider-kubernetes hands them back in the Object's observed manifest. They are read
tolerantly: an annotation that is missing, not a number, negative or inconsistent (done past
the total) is no figure at all, never an error and never a reason to change what is composed.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.hydration import (
    BYTES_DONE,
    BYTES_TOTAL,
    FILES_DONE,
    FILES_TOTAL,
    REVISION,
)

COMMIT = re.compile(r"^[0-9a-f]{40}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")  # an OCI manifest's
GIB = 1024**3
MIB = 1024**2
MAX_BYTES = 2**53  # what a JSON number holds exactly


@dataclass(frozen=True)
class JobReport:
    """One observed hydration Job: its name and the figures it reported."""

    job: str = ""  # metadata.name of the remote Job (its fingerprint is in it)
    bytes_done: int | None = None
    bytes_total: int | None = None
    files_done: int | None = None
    files_total: int | None = None
    revision: str = ""  # the commit or image digest it resolved, when it is one


def is_revision(value: object) -> bool:
    """A commit (HuggingFace) or a manifest digest (OCI): what a Job resolves its source to."""
    return isinstance(value, str) and bool(COMMIT.match(value) or DIGEST.match(value))


def _count(value: Any) -> int | None:
    if not isinstance(value, str) or not value.isdigit() or len(value) > 16:
        return None
    number = int(value)
    return number if number < MAX_BYTES else None


def _pair(done: Any, total: Any) -> tuple[int | None, int | None]:
    d, t = _count(done), _count(total)
    if t is None:
        return None, None
    return (d if d is not None and d <= t else None), t


def read_report(job: str, annotations: Mapping[str, Any]) -> JobReport:
    bytes_done, bytes_total = _pair(annotations.get(BYTES_DONE), annotations.get(BYTES_TOTAL))
    files_done, files_total = _pair(annotations.get(FILES_DONE), annotations.get(FILES_TOTAL))
    found = annotations.get(REVISION)
    revision = found if isinstance(found, str) and is_revision(found) else ""
    return JobReport(
        job=job,
        bytes_done=bytes_done,
        bytes_total=bytes_total,
        files_done=files_done,
        files_total=files_total,
        revision=revision,
    )


def progress_text(done: int, total: int) -> str:
    """`37.2/120.0 GiB`; MiB below one GiB, so a small model does not read 0.0/0.0."""
    unit, size = ("GiB", GIB) if total >= GIB else ("MiB", MIB)
    return f"{done / size:.1f}/{total / size:.1f} {unit}"


def figures(done: int | None, total: int | None) -> dict[str, Any]:
    """The row fields for `done` of `total` bytes (none without a total)."""
    if total is None:
        return {}
    row: dict[str, Any] = {"bytesTotal": total}
    if done is not None:
        row["bytesDone"] = done
        row["progress"] = progress_text(done, total)
    return row


def carried(previous_row: Mapping[str, Any] | None) -> dict[str, Any]:
    """The figures of a row from the last reconcile (a Ready cluster whose Job is gone)."""
    if not previous_row:
        return {}
    total = previous_row.get("bytesTotal")
    if not isinstance(total, int | float) or isinstance(total, bool) or not 0 <= total < MAX_BYTES:
        return {}
    row = figures(int(total), int(total))
    revision = previous_row.get("resolvedRevision")
    if is_revision(revision):
        row["resolvedRevision"] = revision
    return row


def summary_progress(rows: list[dict[str, Any]]) -> str | None:
    """Bytes staged on all matched clusters out of what they need, once every one of them
    has reported its total (a partial sum would read as further along than it is)."""
    if not rows or any("bytesDone" not in r for r in rows):
        return None
    return progress_text(sum(r["bytesDone"] for r in rows), sum(r["bytesTotal"] for r in rows))


def hydrating_message(progress: str, report: JobReport | None, message: str) -> str:
    """A Hydrating row's message with the Job's figures: `downloading 1.2/2.5 GiB, 0/4
    files`, then what the phase says besides downloading, after `; ` (`...; 1 of 4 attempts
    failed so far`)."""
    files = ""
    if report and report.files_total is not None and report.files_done is not None:
        files = f", {report.files_done}/{report.files_total} files"
    detail = message.removeprefix("downloading").strip().lstrip(";").strip()
    return f"downloading {progress}{files}" + (f"; {detail}" if detail else "")


def cache_status(rows: list[dict[str, Any]], pin: dict[str, Any] | None) -> dict[str, Any]:
    """A cache's (or a shard's) status from its rows: the `ready/matched` summary, the
    fleet's progress once every row reported its total, and the pin."""
    ready = sum(1 for row in rows if row.get("phase") == "Ready")
    summary = {"ready": f"{ready}/{len(rows)}"}
    if progress := summary_progress(rows):
        summary["progress"] = progress
    status: dict[str, Any] = {"summary": summary, "clusters": rows}
    if pin:
        status["pinnedRevision"] = pin
    return status
