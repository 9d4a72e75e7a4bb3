"""A replica's phase from the observed Deployment or LeaderWorkerSet."""

from dataclasses import dataclass

from modelfleet_contracts.observed import ObservedObject

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
    kind: str, desired_replicas: int, workload: ObservedObject | None
) -> ReplicaPhase:
    """`workload`: the observed workload Object (None: not observed yet)."""
    what = "gangs" if kind == "LeaderWorkerSet" else "pods"
    if workload is None:
        return ReplicaPhase(PROGRESSING, f"creating the {kind}", desired_replicas, 0)
    ready = workload.remote_ready_replicas
    updated = workload.remote_updated_replicas
    available = workload.remote_condition("Available") is not None
    updating = workload.remote_condition("UpdateInProgress") is not None
    stalled = workload.remote_condition("Progressing", "False")
    if stalled is not None and stalled.reason == "ProgressDeadlineExceeded":
        return ReplicaPhase(
            FAILED,
            f"{kind} made no progress: {stalled.message or 'deadline exceeded'}",
            desired_replicas,
            ready,
        )
    # Deployment: ReplicaFailure (e.g. quota exceeded); other kinds may report Failed.
    for failure in ("ReplicaFailure", "Failed"):
        failed = workload.remote_condition(failure)
        if failed is not None:
            why = failed.message or failed.reason or failure
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
