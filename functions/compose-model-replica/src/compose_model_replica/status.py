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


def _noted(message: str, note: str | None) -> str:
    return f"{message}; {note}" if message and note else message or note or ""


def replica_status(
    phase: ReplicaPhase, address: str | None = None, note: str | None = None
) -> tuple[dict[str, Any], list[Status], bool]:
    """`address`: where a serving group answers (None: none does yet; not reported).
    `note`: what the user should know whatever the phase (a setting composed otherwise than
    asked), added to the message and the condition's."""
    status: dict[str, Any] = {
        "phase": phase.phase,
        "message": _noted(phase.message, note),
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
        message=_noted(phase.message or "serving on every replica", note),
    )
    return status, [condition], ready
