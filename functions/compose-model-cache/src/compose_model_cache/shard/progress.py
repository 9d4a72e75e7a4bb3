"""What a hydration Job reported about itself, and the figures a cluster's status row shows.

The hydrator writes its figures as annotations on its own Job (modelfleet_hydrator/job_report.py);
provider-kubernetes hands them back in the Object's observed manifest. They are read
tolerantly: an annotation that is missing, not a number, negative or inconsistent (done past
the total) is no figure at all, never an error and never a reason to change what is composed.
"""

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

from compose_model_cache.rows import is_revision, progress_text

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


def hydrating_message(progress: str, report: JobReport | None, message: str) -> str:
    """A Hydrating row's message with the Job's figures: `downloading 1.2/2.5 GiB, 0/4
    files`, then what the phase says besides downloading, after `; ` (`...; 1 of 4 attempts
    failed so far`)."""
    files = ""
    if report and report.files_total is not None and report.files_done is not None:
        files = f", {report.files_done}/{report.files_total} files"
    detail = message.removeprefix("downloading").strip().lstrip(";").strip()
    return f"downloading {progress}{files}" + (f"; {detail}" if detail else "")
