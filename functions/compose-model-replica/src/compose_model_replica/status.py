"""The ModelReplica's status and its condition, WorkloadReady, from the replica's phase."""

from typing import Any

from modelfleet_contracts.conditions import Status

from compose_model_replica.phases import (
    PROGRESSING,
    READY,
    WAITING_FOR_CACHE,
    WAITING_FOR_CLUSTER,
    ReplicaPhase,
)

# WorkloadReady reasons that mean "work under way": their transitions are Normal events.
PROGRESS_REASONS = frozenset({PROGRESSING, WAITING_FOR_CACHE, WAITING_FOR_CLUSTER, "Pending"})


def replica_status(
    phase: ReplicaPhase, address: str | None = None
) -> tuple[dict[str, Any], list[Status], bool]:
    """`address`: where a serving group answers (None: none does yet; not reported)."""
    status: dict[str, Any] = {
        "phase": phase.phase,
        "message": phase.message,
        "replicas": phase.replicas,
        "readyReplicas": phase.ready_replicas,
    }
    if address:
        status["address"] = address
    ready = phase.phase == READY
    condition = Status(
        "WorkloadReady",
        status=ready,
        reason=phase.phase,
        message=phase.message or "serving on every replica",
    )
    return status, [condition], ready
