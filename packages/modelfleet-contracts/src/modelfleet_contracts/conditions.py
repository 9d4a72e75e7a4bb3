"""Conditions, events on transitions only, and explicit composite readiness."""

from dataclasses import dataclass
from typing import Any

from crossplane.function import resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelfleet_contracts.fields import list_at, mapping_at


@dataclass(frozen=True)
class Status:
    """One condition the function reports on its XR."""

    type: str
    status: bool
    reason: str
    message: str = ""

    @property
    def status_text(self) -> str:
        return "True" if self.status else "False"


def previous_condition(observed_xr: dict[str, Any], typ: str) -> dict[str, Any] | None:
    """The condition of type `typ` the XR carried when this reconcile began."""
    for c in list_at(mapping_at(observed_xr, "status"), "conditions"):
        if isinstance(c, dict) and c.get("type") == typ:
            return c
    return None


def is_transition(observed_xr: dict[str, Any], condition: Status) -> bool:
    """Whether `condition` differs (status or reason) from what the XR already shows."""
    before = previous_condition(observed_xr, condition.type)
    if before is None:
        return True
    return before.get("status") != condition.status_text or before.get("reason") != condition.reason


def report(
    rsp: fnv1.RunFunctionResponse,
    observed_xr: dict[str, Any],
    *conditions: Status,
    events: bool = True,
    progress_reasons: frozenset[str] = frozenset(),
) -> None:
    """Set `conditions` on the XR; for each one that changed, emit an event so
    `kubectl describe` shows transitions only: Normal when True or when False for a reason
    in `progress_reasons` (work under way, e.g. `Hydrating`), Warning otherwise."""
    response.set_conditions(
        rsp,
        *(
            resource.Condition(typ=c.type, status=c.status_text, reason=c.reason, message=c.message)
            for c in conditions
        ),
    )
    if not events:
        return
    for c in conditions:
        if not is_transition(observed_xr, c):
            continue
        text = f"{c.type} {c.reason}: {c.message}" if c.message else f"{c.type} {c.reason}"
        if c.status or c.reason in progress_reasons:
            response.normal(rsp, text)
        else:
            response.warning(rsp, text)


def set_composite_ready(rsp: fnv1.RunFunctionResponse, ready: bool) -> None:
    """Set the XR's readiness explicitly (True when done, False otherwise)."""
    rsp.desired.composite.ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE
