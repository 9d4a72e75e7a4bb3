"""Asking Crossplane for the resources a function reads besides its XR (required
resources), and reading back what it resolved, the same way in every function."""

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER, MODEL_CACHE
from modelfleet_contracts.fields import mapping_at

T = TypeVar("T")
INFERENCE_CLUSTER_KEY = "inference-cluster"


def require_selected_clusters(rsp: fnv1.RunFunctionResponse, key: str, spec: Any) -> None:
    """Ask for the InferenceClusters `spec.clusterSelector` can match. Crossplane selects by
    labels only; the core applies matchExpressions to what comes back."""
    labels = mapping_at(mapping_at(spec, "clusterSelector"), "matchLabels")
    response.require_resources(
        rsp,
        key,
        API_VERSION,
        INFERENCE_CLUSTER,
        match_labels={str(k): str(v) for k, v in labels.items()},
    )


def cluster_requirement(name: str) -> str:
    """The requirement's key for the InferenceCluster `name` (require_named_clusters)."""
    return f"{INFERENCE_CLUSTER_KEY}/{name}"


def require_named_clusters(rsp: fnv1.RunFunctionResponse, names: Iterable[str]) -> None:
    """Ask for each InferenceCluster of `names`, by name (a requirement each: Crossplane
    matches one name per requirement), so nothing is fetched of the rest of the fleet."""
    for name in names:
        response.require_resources(
            rsp, cluster_requirement(name), API_VERSION, INFERENCE_CLUSTER, match_name=name
        )


def resolved_named(
    req: fnv1.RunFunctionRequest, names: Iterable[str], read: Callable[[struct_pb2.Struct], T]
) -> list[T] | None:
    """The InferenceClusters of `names` Crossplane found, each read by `read`; None while it
    has not resolved every requirement yet (one that does not exist is left out)."""
    found: list[T] = []
    for name in names:
        items = resolved(req, cluster_requirement(name), read)
        if items is None:
            return None
        found += items
    return found


def require_referenced_cache(rsp: fnv1.RunFunctionResponse, key: str, xr: Any) -> None:
    """Ask for the ModelCache `spec.modelCacheRef` names, in the XR's own namespace (a
    reference never reaches into another team's namespace); nothing when there is none."""
    name = mapping_at(mapping_at(xr, "spec"), "modelCacheRef").get("name")
    if isinstance(name, str) and name:
        response.require_resources(
            rsp,
            key,
            API_VERSION,
            MODEL_CACHE,
            match_name=name,
            namespace=str(mapping_at(xr, "metadata").get("namespace", "")),
        )


def resolved(
    req: fnv1.RunFunctionRequest, key: str, read: Callable[[struct_pb2.Struct], T]
) -> list[T] | None:
    """What Crossplane resolved for requirement `key`, each read by `read`; None while it has
    not resolved it yet (an empty list: nothing matches)."""
    if key not in req.required_resources:
        return None
    return [read(item.resource) for item in req.required_resources[key].items]
