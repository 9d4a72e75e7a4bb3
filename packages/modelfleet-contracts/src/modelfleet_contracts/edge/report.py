"""Writing conditions, transition events and readiness into a RunFunctionResponse."""

from typing import Any

from crossplane.function import resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelfleet_contracts.conditions import Status, is_transition


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
