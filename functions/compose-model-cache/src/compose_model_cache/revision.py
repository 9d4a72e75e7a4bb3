"""One commit for every cluster: the pin.

A branch (`main`) moves. Each hydration Job resolves the cache's revision to a commit before
it fetches anything and reports it (hydrator/job_report.py). The first commit reported for the
current source is pinned in `status.pinnedRevision` and handed to every hydration Job composed
or re-composed from then on (an annotation on the Job, read by the hydrator when an attempt
starts and again before it marks a copy complete), so clusters that hydrate later fetch the
same bytes. A cluster that reports another commit is said so, and never reported Ready.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compose_model_cache.phases import FAILED, READY, ClusterPhase
from compose_model_cache.progress import JobReport

COMMIT = re.compile(r"^[0-9a-f]{40}$")


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
    hugging_face: bool,
) -> Pin | None:
    """The pin kept from the last reconcile for this source, or else the commit the first
    reporting cluster (by name, when several report at once) resolved; None before any."""
    if not hugging_face:
        return None  # an S3 prefix has no commits to pin
    commit = previous.get("commit")
    if previous.get("fingerprint") == fingerprint and COMMIT.match(str(commit)):
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
    if phase.phase == READY:
        return ClusterPhase(
            FAILED,
            f"staged commit {revision}, but {pinned}; not served here: its Job is re-created "
            "to stage the pinned commit",
            phase.problem,
        )
    return ClusterPhase(
        phase.phase,
        f"{phase.message}; fetching commit {revision}, but {pinned}: the next attempt fetches it",
        phase.problem,
    )
