"""The gRPC edge of compose-model-replica."""

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.clusters import read_cluster_struct
from modelfleet_contracts.edge.now import request_now
from modelfleet_contracts.edge.observed import read_model_cache, read_observed
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.edge.requirements import require_referenced_cache, resolved
from modelfleet_contracts.fields import mapping_at

from compose_model_replica.core import compose_replica
from compose_model_replica.legacy_usages import (
    LEGACY_USAGE_KEYS,
    read_legacy_usage,
    retire_legacy_usages,
)
from compose_model_replica.status import PROGRESS_REASONS

CLUSTER = "inference-cluster"
CACHE = "model-cache"


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    now = request_now(req, rsp)
    xr = structs.to_dict(req.observed.composite.resource)
    spec = mapping_at(xr, "spec")
    cluster_name = spec.get("clusterName")
    if isinstance(cluster_name, str) and cluster_name:
        response.require_resources(
            rsp, CLUSTER, API_VERSION, INFERENCE_CLUSTER, match_name=cluster_name
        )
    require_referenced_cache(rsp, CACHE, xr)
    observed = {name: read_observed(r.resource) for name, r in req.observed.resources.items()}
    # Usages an earlier release composed here, read whole (two small objects at most).
    legacy = {
        key: usage
        for key in LEGACY_USAGE_KEYS
        if key in req.observed.resources
        and (usage := read_legacy_usage(structs.to_dict(req.observed.resources[key].resource)))
    }
    # Only this cluster's row of the cache's status: the fleet's other rows are not read.
    here = str(cluster_name or "")
    outcome = retire_legacy_usages(
        compose_replica(
            xr,
            resolved(req, CLUSTER, read_cluster_struct),
            resolved(req, CACHE, lambda c: read_model_cache(c, cluster=here)),
            observed,
        ),
        legacy,
    )
    apply_outcome(req, rsp, xr, outcome, now=now, progress_reasons=PROGRESS_REASONS)
