"""Building RunFunctionRequests from plain dicts, for tests and benchmarks."""

from collections.abc import Iterable, Mapping
from typing import Any

from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1


def run_function_request(
    xr: Mapping[str, Any],
    *,
    observed: Mapping[str, Mapping[str, Any]] | None = None,
    required: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    desired: Mapping[str, Mapping[str, Any]] | None = None,
    tag: str = "test",
) -> fnv1.RunFunctionRequest:
    """A request as Crossplane sends it.

    `observed` maps composition-resource-names to observed composed resources; `required`
    maps requirement names to the resources Crossplane resolved for them (pass an empty list
    for "resolved, nothing matched"; leave a name out for "not resolved yet").
    """
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag=tag))
    req.observed.composite.resource.update(dict(xr))
    for name, obj in (observed or {}).items():
        req.observed.resources[name].resource.update(dict(obj))
    for name, obj in (desired or {}).items():
        req.desired.resources[name].resource.update(dict(obj))
    for name, items in (required or {}).items():
        bucket = req.required_resources[name]
        bucket.SetInParent()
        for item in items:
            bucket.items.add().resource.update(dict(item))
    return req


def desired_resources(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    """The desired composed resources of a response, as dicts."""
    return {name: resource.struct_to_dict(r.resource) for name, r in rsp.desired.resources.items()}


def desired_status(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    """The XR status a response asks for."""
    return resource.struct_to_dict(rsp.desired.composite.resource).get("status", {})


def conditions(rsp: fnv1.RunFunctionResponse) -> dict[str, fnv1.Condition]:
    """The conditions a response sets, by type."""
    return {c.type: c for c in rsp.conditions}


def condition_status(c: fnv1.Condition) -> str:
    """`True`, `False` or `Unknown` for a response condition."""
    return {
        fnv1.STATUS_CONDITION_TRUE: "True",
        fnv1.STATUS_CONDITION_FALSE: "False",
    }.get(c.status, "Unknown")


def conditions_as_status(rsp: fnv1.RunFunctionResponse) -> list[dict[str, Any]]:
    """The response's conditions as Crossplane writes them onto the XR's `status.conditions`
    (what the next reconcile reads back)."""
    return [
        {"type": c.type, "status": condition_status(c), "reason": c.reason} for c in rsp.conditions
    ]


def events(rsp: fnv1.RunFunctionResponse) -> list[tuple[str, str]]:
    """(severity, message) of each result: `Normal`, `Warning` or `Fatal`."""
    names = {
        fnv1.SEVERITY_NORMAL: "Normal",
        fnv1.SEVERITY_WARNING: "Warning",
        fnv1.SEVERITY_FATAL: "Fatal",
    }
    return [(names.get(r.severity, "Unspecified"), r.message) for r in rsp.results]


def requirement_names(rsp: fnv1.RunFunctionResponse) -> set[str]:
    """The names of the resources a response requires."""
    return set(rsp.requirements.resources.keys())


READINESS_TEXT = {fnv1.READY_TRUE: "True", fnv1.READY_FALSE: "False"}


def composed_readiness(rsp: fnv1.RunFunctionResponse) -> dict[str, str]:
    """Each desired composed resource's readiness as the function tells Crossplane: `True`,
    `False` or `Unspecified` (which Crossplane reads as not ready)."""
    resources = rsp.desired.resources
    return {name: READINESS_TEXT.get(r.ready, "Unspecified") for name, r in resources.items()}
