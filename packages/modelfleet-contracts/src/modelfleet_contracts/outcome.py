"""What a function's core decides, and writing it into the response the same way everywhere."""

from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelfleet_contracts import structs
from modelfleet_contracts.carry import carry_forward_into
from modelfleet_contracts.conditions import Status, report, set_composite_ready
from modelfleet_contracts.runner import keep_observed_resources, keep_observed_status
from modelfleet_contracts.stamps import Stamp


@dataclass
class Outcome:
    """Desired composed resources, XR status, conditions and readiness.

    `kept`: names of observed composed resources to carry forward unchanged (what the
    function cannot decide about for now); copied at the protobuf level, never converted.
    `keep_everything`: the input could not be acted on (unresolved requirement, invalid
    spec), so every observed composed resource and the previous status are kept as they are
    and only `conditions` say why.
    """

    # Plain data, or a `Stamp` of a shape many resources share (written as a copy).
    desired: dict[str, dict[str, Any] | Stamp] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    status: dict[str, Any] | None = None
    conditions: list[Status] = field(default_factory=list)
    ready: bool = False
    keep_everything: bool = False


def apply_outcome(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    observed_xr: dict[str, Any],
    outcome: Outcome,
    *,
    progress_reasons: frozenset[str] = frozenset(),
) -> None:
    if outcome.keep_everything:
        keep_observed_resources(req, rsp)
        keep_observed_status(req, rsp)
    else:
        observed = req.observed.resources
        for name in outcome.kept:
            if name in observed and name not in outcome.desired:
                carry_forward_into(rsp.desired.resources[name].resource, observed[name].resource)
        shapes: dict[int, Any] = {}
        for name, desired in outcome.desired.items():
            target = rsp.desired.resources[name].resource
            if isinstance(desired, Stamp):
                structs.write_stamp(target, desired, shapes)
            else:
                structs.update(target, desired)
        if outcome.status is not None:
            structs.update(rsp.desired.composite.resource, {"status": outcome.status})
    if outcome.conditions:
        report(rsp, observed_xr, *outcome.conditions, progress_reasons=progress_reasons)
    set_composite_ready(rsp, outcome.ready and not outcome.keep_everything)
