"""A replica's phase from the observed Deployment or LeaderWorkerSet."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.conditions import condition_in, condition_true
from modelfleet_contracts.fields import int_at

WAITING_FOR_CLUSTER = "WaitingForCluster"
WAITING_FOR_CACHE = "WaitingForCache"
PROGRESSING = "Progressing"
READY = "Ready"
DEGRADED = "Degraded"
FAILED = "Failed"


@dataclass(frozen=True)
class ReplicaPhase:
    phase: str
    message: str
    replicas: int = 0
    ready_replicas: int = 0


def derive_replica_phase(
    kind: str, desired_replicas: int, status: dict[str, Any] | None
) -> ReplicaPhase:
    """`status`: the workload's observed status (None: not observed yet)."""
    what = "gangs" if kind == "LeaderWorkerSet" else "pods"
    if status is None:
        return ReplicaPhase(PROGRESSING, f"creating the {kind}", desired_replicas, 0)
    ready = int_at(status, "readyReplicas")
    updated = int_at(status, "updatedReplicas")
    available = condition_true(status, "Available")
    progressing = condition_in(status, "Progressing")
    updating = condition_true(status, "UpdateInProgress")
    if (
        progressing.get("status") == "False"
        and progressing.get("reason") == "ProgressDeadlineExceeded"
    ):
        return ReplicaPhase(
            FAILED,
            f"{kind} made no progress: {progressing.get('message', 'deadline exceeded')}",
            desired_replicas,
            ready,
        )
    # Deployment: ReplicaFailure (e.g. quota exceeded); other kinds may report Failed.
    for failure in ("ReplicaFailure", "Failed"):
        failed = condition_in(status, failure)
        if failed.get("status") == "True":
            why = failed.get("message") or failed.get("reason") or failure
            return ReplicaPhase(FAILED, f"{kind} failed: {why}", desired_replicas, ready)
    if available and ready >= desired_replicas and (updated >= desired_replicas) and not updating:
        return ReplicaPhase(READY, "", desired_replicas, ready)
    if updating or updated < desired_replicas:
        return ReplicaPhase(
            PROGRESSING,
            f"rolling out: {updated}/{desired_replicas} {what} updated",
            desired_replicas,
            ready,
        )
    if 0 < ready < desired_replicas or (ready and not available):
        return ReplicaPhase(
            DEGRADED, f"{ready}/{desired_replicas} {what} ready", desired_replicas, ready
        )
    return ReplicaPhase(
        PROGRESSING, f"{ready}/{desired_replicas} {what} ready", desired_replicas, ready
    )
