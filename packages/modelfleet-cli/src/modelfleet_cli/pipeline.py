"""One reconcile of one XR through its Composition's function pipeline, as Crossplane runs it.

Shared by `modelfleet render` (one reconcile, printed) and `modelfleet simulate` (round after
round). What it mirrors from Crossplane v2's composite reconciler:

- steps run in order; each gets the observed state, the desired state the previous step
  returned, the context the previous step returned, and its `input`;
- the requirements loop per step: a function's `requirements` (both `resources` and the
  deprecated `extra_resources`) are resolved from a pool of objects and the function is
  called again with them, until a call returns the same requirements as the call before it,
  at most 6 calls (Crossplane's MaxRequirementsIterations is 5, counted from 0 inclusive);
- a fatal result stops the pipeline and nothing is applied (the XR gets Synced=False);
- afterwards: composed readiness (the functions' word alone: a resource left
  READY_UNSPECIFIED is not ready, Crossplane v2.3 derives nothing from what it observed), the
  XR's Ready condition (the functions' explicit readiness when set, which supersedes; else
  Available, or Creating with "Unready resources: ..."), Synced=ReconcileSuccess, and the
  functions' own conditions (never a system condition: Ready, Synced, Healthy, UpToDate,
  Responsive).

What it does not do: connection details, function credentials, required schemas, claims.
"""

import copy
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.conditions import Status, condition_dict
from modelfleet_contracts.fields import mapping_at

from modelfleet_cli.selectors import Pool, resolve
from modelfleet_cli.xr_conditions import set_conditions, unready_message

Caller = Callable[[str, fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]
"""Calls the named function (a Composition step's `functionRef.name`) with a request."""

MAX_CALLS_PER_STEP = 6
# Conditions Crossplane owns on an XR; a function's conditions of these types are ignored.
SYSTEM_CONDITIONS = frozenset({"Ready", "Synced", "Healthy", "UpToDate", "Responsive"})
# What this "Crossplane" tells functions it supports.
CAPABILITIES = (
    fnv1.CAPABILITY_CAPABILITIES,
    fnv1.CAPABILITY_REQUIRED_RESOURCES,
    fnv1.CAPABILITY_CONDITIONS,
)
# XR status fields Crossplane itself owns; every other status field belongs to the functions.
CROSSPLANE_STATUS_FIELDS = ("conditions", "claimConditionTypes", "connectionDetails")

STATUS_TEXT = {
    fnv1.STATUS_CONDITION_TRUE: "True",
    fnv1.STATUS_CONDITION_FALSE: "False",
}
SEVERITY_TEXT = {
    fnv1.SEVERITY_FATAL: "SEVERITY_FATAL",
    fnv1.SEVERITY_WARNING: "SEVERITY_WARNING",
    fnv1.SEVERITY_NORMAL: "SEVERITY_NORMAL",
}


class PipelineError(RuntimeError):
    """The Composition cannot be run at all (no pipeline, a step without a function)."""


@dataclass
class StepResult:
    """A result (event) and the step that returned it."""

    step: str
    result: fnv1.Result


@dataclass
class PipelineResult:
    """What one reconcile produced.

    `composite`: the XR as Crossplane would store it after this reconcile: the observed XR
    whose function-owned status is what the pipeline desired (server-side apply with the
    functions as the only owner of those fields), plus Ready/Synced and the functions'
    conditions (lastTransitionTime kept when type/status/reason/message are unchanged).

    `resources`: composition-resource-name -> desired composed resource, as the functions
    returned it (no Crossplane metadata; see `composed_metadata`). After a fatal result
    nothing is applied, so `resources` are the observed ones, untouched: callers must not
    delete anything because of a fatal pipeline.
    """

    composite: dict[str, Any]
    resources: dict[str, dict[str, Any]]
    ready: dict[str, bool]
    composite_ready: bool | None
    results: list[fnv1.Result]
    conditions: list[fnv1.Condition]
    fatal: str | None
    fatal_step: str | None = None
    step_results: list[StepResult] = field(default_factory=list)
    requirements: dict[str, fnv1.Requirements] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    desired_composite: dict[str, Any] = field(default_factory=dict)
    xr_conditions: list[dict[str, str]] = field(default_factory=list)
    """The conditions this reconcile sets on the XR (Synced, Ready, then the functions'),
    without lastTransitionTime."""
    ttls: dict[str, timedelta] = field(default_factory=dict)
    """step -> the TTL its last response asked for (`meta.ttl`), for steps that set one:
    how long Crossplane may wait before it runs the XR again unless something it watches
    changes."""

    def unready(self) -> list[str]:
        """The composed resources Crossplane reports "not yet ready" (an event each)."""
        return sorted(name for name, ready in self.ready.items() if not ready)

    @property
    def error(self) -> str | None:
        """The error Crossplane would report for a fatal result, None when there is none."""
        if self.fatal is None:
            return None
        return f"pipeline step {self.fatal_step!r} returned a fatal result: {self.fatal}"

    @property
    def ttl(self) -> timedelta | None:
        """When the XR is run again at the latest: the shortest TTL its steps asked for;
        None when none asked, or after a fatal result (Crossplane then retries with its
        error backoff, whatever the responses said)."""
        if self.fatal is not None or not self.ttls:
            return None
        return min(self.ttls.values())


def run_pipeline(
    xr: Mapping[str, Any],
    composition: Mapping[str, Any],
    call: Caller,
    *,
    observed: Mapping[str, Mapping[str, Any]] | None = None,
    required_pool: Pool = (),
    context: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> PipelineResult:
    """Run every step of `composition`'s pipeline for `xr` once.

    `observed`: composition-resource-name -> observed composed resource. `required_pool`:
    every object a function may require (resolved by apiVersion+kind, then name within a
    namespace or label subset). `context`: the initial function context. `now`: the time
    stamped on conditions that change (default: the current time). Exceptions of `call`
    (a function that cannot be reached) propagate.
    """
    steps = _pipeline_steps(composition)
    observed = {name: dict(obj) for name, obj in (observed or {}).items()}
    observed_state = fnv1.State()
    observed_state.composite.resource.update(dict(xr))
    for name, obj in observed.items():
        observed_state.resources[name].resource.update(obj)

    desired = fnv1.State()
    fn_context: Any = resource.dict_to_struct(dict(context or {}))
    out = PipelineResult(
        composite={},
        resources={},
        ready={},
        composite_ready=None,
        results=[],
        conditions=[],
        fatal=None,
    )
    for step in steps:
        step_name = str(step["step"])
        req = fnv1.RunFunctionRequest(observed=observed_state, desired=desired)
        if fn_context is not None:
            req.context.CopyFrom(fn_context)
        if isinstance(step.get("input"), Mapping):
            req.input.update(dict(step["input"]))
        for name, selector in _bootstrap_selectors(step).items():
            req.required_resources[name].CopyFrom(resolve({name: selector}, required_pool)[name])
        rsp, calls, stable = _run_step(call, str(step["functionRef"]["name"]), req, required_pool)
        out.calls[step_name] = calls
        if rsp.meta.HasField("ttl"):
            out.ttls[step_name] = rsp.meta.ttl.ToTimedelta()
        if rsp.HasField("requirements"):
            out.requirements[step_name] = rsp.requirements
        out.conditions.extend(rsp.conditions)
        fatal = next((r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL), None)
        for r in rsp.results:
            out.results.append(r)
            out.step_results.append(StepResult(step_name, r))
        if fatal is None and not stable:
            fatal = fnv1.Result(
                severity=fnv1.SEVERITY_FATAL,
                message="requirements didn't stabilize after the maximum number of "
                f"iterations ({MAX_CALLS_PER_STEP - 1})",
            )
            out.results.append(fatal)
            out.step_results.append(StepResult(step_name, fatal))
        if fatal is not None:
            out.fatal, out.fatal_step = fatal.message, step_name
            return _failed(out, xr, observed, now)
        desired = rsp.desired
        fn_context = rsp.context if rsp.HasField("context") else None

    out.context = resource.struct_to_dict(fn_context) if fn_context is not None else {}
    out.resources = {
        name: resource.struct_to_dict(r.resource) for name, r in desired.resources.items()
    }
    out.ready = {name: r.ready == fnv1.READY_TRUE for name, r in desired.resources.items()}
    out.composite_ready = _ready(desired.composite.ready)
    out.desired_composite = resource.struct_to_dict(desired.composite.resource)
    out.composite = _reconciled_composite(xr, out.desired_composite, out, now)
    return out


def _pipeline_steps(composition: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = composition.get("spec")
    steps = spec.get("pipeline") if isinstance(spec, Mapping) else None
    name = (composition.get("metadata") or {}).get("name", "?")
    if not isinstance(steps, list) or not steps:
        raise PipelineError(f"Composition {name} has no pipeline steps (spec.pipeline)")
    for i, step in enumerate(steps):
        ref = step.get("functionRef") if isinstance(step, Mapping) else None
        if not isinstance(ref, Mapping) or not ref.get("name") or not step.get("step"):
            raise PipelineError(
                f"Composition {name}: pipeline step {i} needs a `step` name and `functionRef.name`"
            )
    return steps


def _bootstrap_selectors(step: Mapping[str, Any]) -> dict[str, fnv1.ResourceSelector]:
    """A step's `requirements.requiredResources`, resolved before its first call."""
    requirements = step.get("requirements")
    entries = requirements.get("requiredResources") if isinstance(requirements, Mapping) else None
    selectors = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or not entry.get("requirementName"):
            continue
        sel = fnv1.ResourceSelector(
            api_version=str(entry.get("apiVersion", "")), kind=str(entry.get("kind", ""))
        )
        if entry.get("name"):
            sel.match_name = str(entry["name"])
        else:
            sel.match_labels.SetInParent()
            for k, v in (entry.get("matchLabels") or {}).items():
                sel.match_labels.labels[str(k)] = str(v)
        if entry.get("namespace"):
            sel.namespace = str(entry["namespace"])
        selectors[str(entry["requirementName"])] = sel
    return selectors


def _run_step(
    call: Caller,
    function: str,
    req: fnv1.RunFunctionRequest,
    pool: Pool,
) -> tuple[fnv1.RunFunctionResponse, int, bool]:
    """Call `function` until its requirements repeat (or a fatal result), at most
    MAX_CALLS_PER_STEP times. Returns the last response, the number of calls, and whether
    the requirements stabilized."""
    bootstrap = {name: copy.deepcopy(r) for name, r in req.required_resources.items()}
    previous: fnv1.Requirements | None = None
    rsp = fnv1.RunFunctionResponse()
    for calls in range(1, MAX_CALLS_PER_STEP + 1):
        _stamp(req)
        rsp = call(function, req)
        if any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results):
            return rsp, calls, True
        current = rsp.requirements if rsp.HasField("requirements") else None
        if _same_requirements(current, previous):
            return rsp, calls, True
        previous = current
        req.ClearField("extra_resources")
        req.ClearField("required_resources")
        for name, found in bootstrap.items():
            req.required_resources[name].CopyFrom(found)
        if current is not None:
            for name, found in resolve(current.extra_resources, pool).items():
                req.extra_resources[name].CopyFrom(found)
            for name, found in resolve(current.resources, pool).items():
                req.required_resources[name].CopyFrom(found)
        _pass_context(rsp, req)
    return rsp, MAX_CALLS_PER_STEP, False


def _same_requirements(a: fnv1.Requirements | None, b: fnv1.Requirements | None) -> bool:
    """proto.Equal: an absent message equals only an absent one."""
    if a is None or b is None:
        return a is None and b is None
    return bool(a == b)


def _pass_context(rsp: fnv1.RunFunctionResponse, req: fnv1.RunFunctionRequest) -> None:
    if rsp.HasField("context"):
        req.context.CopyFrom(rsp.context)
    else:
        req.ClearField("context")


def _stamp(req: fnv1.RunFunctionRequest) -> None:
    """A tag that changes when the request does (Crossplane hashes the request too)."""
    req.ClearField("meta")
    digest = hashlib.sha256(req.SerializeToString(deterministic=True)).hexdigest()
    req.meta.tag = digest
    req.meta.capabilities.extend(CAPABILITIES)


def _ready(value: int) -> bool | None:
    if value == fnv1.READY_TRUE:
        return True
    if value == fnv1.READY_FALSE:
        return False
    return None


def _reconciled_composite(
    xr: Mapping[str, Any],
    desired_xr: Mapping[str, Any],
    out: PipelineResult,
    now: datetime | None,
) -> dict[str, Any]:
    composite = copy.deepcopy(dict(xr))
    before = mapping_at(composite, "status")
    status = {k: before[k] for k in CROSSPLANE_STATUS_FIELDS if k in before}
    wanted = desired_xr.get("status")
    if isinstance(wanted, Mapping):
        status.update({k: v for k, v in wanted.items() if k not in CROSSPLANE_STATUS_FIELDS})
    composite["status"] = status

    unready = out.unready()
    if out.composite_ready is True:
        ready = Status.true("Ready", "Available")
    elif out.composite_ready is False:
        ready = Status.false("Ready", "Creating")
    elif unready:
        ready = Status.false("Ready", "Creating", unready_message(unready))
    else:
        ready = Status.true("Ready", "Available")
    conditions = [Status.true("Synced", "ReconcileSuccess").as_condition(), ready.as_condition()]
    conditions += [
        condition_dict(c.type, STATUS_TEXT.get(c.status, "Unknown"), c.reason, c.message)
        for c in out.conditions
        if c.type not in SYSTEM_CONDITIONS
    ]
    out.xr_conditions = conditions
    set_conditions(composite, conditions, now)
    return composite


def _failed(
    out: PipelineResult,
    xr: Mapping[str, Any],
    observed: Mapping[str, Mapping[str, Any]],
    now: datetime | None,
) -> PipelineResult:
    """A fatal pipeline: nothing applied, the XR says why on Synced."""
    out.resources = {name: copy.deepcopy(dict(obj)) for name, obj in observed.items()}
    out.composite = copy.deepcopy(dict(xr))
    message = f"cannot compose resources: {out.error}"
    out.xr_conditions = [Status.false("Synced", "ReconcileError", message).as_condition()]
    set_conditions(out.composite, out.xr_conditions, now)
    return out
