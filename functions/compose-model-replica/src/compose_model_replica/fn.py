"""The gRPC edge of compose-model-replica."""

from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER, MODEL_CACHE
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.fields import mapping_at

from compose_model_replica.core import PROGRESS_REASONS, compose_replica

CLUSTER = "inference-cluster"
CACHE = "model-cache"


def _resolved(req: fnv1.RunFunctionRequest, name: str) -> list[dict[str, Any]] | None:
    if name not in req.required_resources:
        return None
    return [structs.to_dict(item.resource) for item in req.required_resources[name].items]


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = structs.to_dict(req.observed.composite.resource)
    spec = mapping_at(xr, "spec")
    cluster_name = spec.get("clusterName")
    cache_name = mapping_at(spec, "modelCacheRef").get("name")
    if isinstance(cluster_name, str) and cluster_name:
        response.require_resources(
            rsp, CLUSTER, API_VERSION, INFERENCE_CLUSTER, match_name=cluster_name
        )
    if isinstance(cache_name, str) and cache_name:
        response.require_resources(
            rsp,
            CACHE,
            API_VERSION,
            MODEL_CACHE,
            match_name=cache_name,
            namespace=str(mapping_at(xr, "metadata").get("namespace", "")),
        )
    observed = {
        name: structs.observed_object(r.resource) for name, r in req.observed.resources.items()
    }
    cache = None
    if CACHE in req.required_resources:
        # Only this cluster's row of the cache's status: the fleet's other rows are not read.
        here = str(cluster_name or "")
        cache = [
            structs.with_named_rows(item.resource, ("status", "clusters"), here)
            for item in req.required_resources[CACHE].items
        ]
    outcome = compose_replica(xr, _resolved(req, CLUSTER), cache, observed)
    apply_outcome(req, rsp, xr, outcome, progress_reasons=PROGRESS_REASONS)
