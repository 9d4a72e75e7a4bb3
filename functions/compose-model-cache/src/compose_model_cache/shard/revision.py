"""One commit for every cluster: the pin.

A branch (`main`) moves. Each hydration Job resolves the cache's revision to a commit before
it fetches anything and reports it (modelfleet_hydrator/job_report.py). The first commit
reported for the current source is pinned in `status.pinnedRevision` and handed to every
hydration Job composed or re-composed from then on (an annotation on the Job, read by the
hydrator when an attempt starts and again before it marks a copy complete), so clusters that
hydrate later fetch the same bytes. A cluster that reports another commit is said so, and
never reported Ready.

An OCI image goes the same way: a tag moves as a branch does, so the hydrator resolves the
reference to its manifest's digest (`sha256:<64 hex>`), reports it as the revision, and the
first digest reported is pinned and handed to every Job; a reference by digest resolves to
itself.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compose_model_cache.rows import FAILED, READY, ClusterPhase, is_revision
from compose_model_cache.shard.progress import JobReport


def _what(value: str) -> str:
    return "digest" if value.startswith("sha256:") else "commit"


@dataclass(frozen=True)
class Pin:
    commit: str
    fingerprint: str  # of the source it was resolved for: a new source starts over
    cluster: str  # where it was resolved first

    def as_status(self) -> dict[str, str]:
        return {"commit": self.commit, "fingerprint": self.fingerprint, "cluster": self.cluster}


def choose_pin(
    previous: Mapping[str, Any],
    fingerprint: str,
    reports: list[tuple[str, JobReport | None]],
    job_name: str,
    *,
    pinnable: bool,
) -> Pin | None:
    """The pin kept from the last reconcile for this source, or else the commit the first
    reporting cluster (by name, when several report at once) resolved; None before any."""
    if not pinnable:
        return None  # an S3 prefix has no commits to pin
    commit = previous.get("commit")
    if previous.get("fingerprint") == fingerprint and is_revision(commit):
        return Pin(str(commit), fingerprint, str(previous.get("cluster") or ""))
    for cluster, report in reports:
        if report and report.job == job_name and report.revision:
            return Pin(report.revision, fingerprint, cluster)
    return None


def revision_check(phase: ClusterPhase, revision: str, pin: Pin | None) -> ClusterPhase:
    """`phase`, unless the cluster reports a commit other than the pinned one."""
    if not pin or not revision or revision == pin.commit:
        return phase
    pinned = f"the cache is pinned to {pin.commit} (resolved first on {pin.cluster})"
    what = _what(pin.commit)
    if phase.phase == READY:
        return ClusterPhase(
            FAILED,
            f"staged {what} {revision}, but {pinned}; not served here: its Job is re-created "
            f"to stage the pinned {what}",
            phase.problem,
        )
    return ClusterPhase(
        phase.phase,
        f"{phase.message}; fetching {what} {revision}, but {pinned}: the next attempt fetches it",
        phase.problem,
    )
