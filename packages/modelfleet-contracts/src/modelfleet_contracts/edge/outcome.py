"""Writing an `Outcome` into the response the same way in every function."""

from datetime import datetime
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelfleet_contracts.conditions import is_transition, previous_condition
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.carry import carry_forward_into
from modelfleet_contracts.edge.readiness import mark_composed_readiness
from modelfleet_contracts.edge.replay import read_the_clock
from modelfleet_contracts.edge.report import report, set_composite_ready
from modelfleet_contracts.edge.runner import keep_observed_resources, keep_observed_status
from modelfleet_contracts.outcome import RESOLVING, Outcome
from modelfleet_contracts.recheck import (
    RECHECK_FIRST,
    RECHECK_SETTLED,
    RESPONSIVE,
    breaker_holds_events,
    recheck_after,
)
from modelfleet_contracts.stamps import Stamp


def events_delivered(observed_xr: dict[str, Any], now: datetime) -> bool:
    """Whether Crossplane runs the XR when its composed resources or its spec change: not
    while its circuit breaker is open (recheck.breaker_holds_events)."""
    responsive = previous_condition(observed_xr, RESPONSIVE)
    if responsive and responsive.get("status") == "False":
        read_the_clock()  # the answer changes once the breaker's cooldown has passed
    return not breaker_holds_events(responsive, now)


def apply_outcome(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    observed_xr: dict[str, Any],
    outcome: Outcome,
    *,
    now: datetime,
    progress_reasons: frozenset[str] = frozenset(),
) -> None:
    """Write `outcome` into `rsp`. `now`: the time the request is decided at (edge/now.py),
    against which rechecks are paced and the circuit breaker's cooldown is measured."""
    if outcome.keep_everything:
        keep_observed_resources(req, rsp)
        keep_observed_status(req, rsp)
    else:
        observed = req.observed.resources
        for name in outcome.kept:
            if name in observed and name not in outcome.desired:
                kept = rsp.desired.resources[name].resource
                carry_forward_into(kept, observed[name].resource)
                for path, value in outcome.kept_changes.get(name, {}).items():
                    structs.set_at(kept, path, value)
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
        # Waiting for Crossplane is work under way in every function: a Normal event.
        progress = progress_reasons | {RESOLVING}
        report(rsp, observed_xr, *outcome.conditions, progress_reasons=progress)
    for text in outcome.happenings:
        response.normal(rsp, text)
    for text in outcome.warnings:
        response.warning(rsp, text)
    set_composite_ready(rsp, outcome.ready and not outcome.keep_everything)
    if outcome.recheck_soon or outcome.recheck_in is not None:
        paces = [outcome.recheck_in] if outcome.recheck_in is not None else []
        if outcome.recheck_soon:
            # A condition this response changes starts a new wait: its age is zero.
            changed = any(is_transition(observed_xr, c) for c in outcome.conditions)
            conditions = (observed_xr.get("status") or {}).get("conditions") or []
            paces.append(RECHECK_FIRST if changed else recheck_after(conditions, now))
        read_the_clock()
        rsp.meta.ttl.FromTimedelta(min(paces))
    elif (
        outcome.settled
        and outcome.ready
        and not outcome.keep_everything
        and events_delivered(observed_xr, now)
    ):
        rsp.meta.ttl.FromTimedelta(RECHECK_SETTLED)
    mark_composed_readiness(req, rsp)
