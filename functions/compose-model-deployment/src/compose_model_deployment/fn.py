"""The gRPC edge of compose-model-deployment."""

from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER, MODEL_CACHE, MODEL_REPLICA
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.clusters import read_cluster_struct
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.fields import mapping_at

from compose_model_deployment.core import compose_deployment
from compose_model_deployment.replicas import read_replica
from compose_model_deployment.status import PROGRESS_REASONS

CLUSTERS = "inference-clusters"
CACHE = "model-cache"
# Every ModelReplica in the fleet, whatever its namespace: capacity is shared by all teams.
REPLICAS = "model-replicas"


def _resolved(req: fnv1.RunFunctionRequest, name: str) -> list[Any] | None:
    """The resources Crossplane resolved for requirement `name` (None: not yet)."""
    if name not in req.required_resources:
        return None
    return [item.resource for item in req.required_resources[name].items]


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = structs.to_dict(req.observed.composite.resource)
    spec = mapping_at(xr, "spec")
    labels = mapping_at(mapping_at(spec, "clusterSelector"), "matchLabels")
    response.require_resources(
        rsp,
        CLUSTERS,
        API_VERSION,
        INFERENCE_CLUSTER,
        match_labels={str(k): str(v) for k, v in labels.items()},
    )
    response.require_resources(rsp, REPLICAS, API_VERSION, MODEL_REPLICA, match_labels={})
    cache_name = mapping_at(spec, "modelCacheRef").get("name")
    if isinstance(cache_name, str) and cache_name:
        response.require_resources(
            rsp,
            CACHE,
            API_VERSION,
            MODEL_CACHE,
            match_name=cache_name,
            namespace=str(mapping_at(xr, "metadata").get("namespace", "")),
        )
    observed = {name: structs.to_dict(r.resource) for name, r in req.observed.resources.items()}
    clusters = _resolved(req, CLUSTERS)
    cache = _resolved(req, CACHE)
    replicas = _resolved(req, REPLICAS)
    outcome = compose_deployment(
        xr,
        None if clusters is None else [read_cluster_struct(c) for c in clusters],
        None if cache is None else [structs.to_dict(c) for c in cache],
        None if replicas is None else [read_replica(structs.to_dict(r)) for r in replicas],
        observed,
    )
    apply_outcome(req, rsp, xr, outcome, progress_reasons=PROGRESS_REASONS)
