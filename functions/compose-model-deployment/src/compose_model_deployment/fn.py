"""The gRPC edge of compose-model-deployment."""

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelfleet_contracts.api import API_VERSION, MODEL_REPLICA
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.clusters import read_cluster_struct
from modelfleet_contracts.edge.now import request_now
from modelfleet_contracts.edge.observed import read_model_cache, read_replica
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.edge.requirements import (
    require_referenced_cache,
    require_selected_clusters,
    resolved,
)
from modelfleet_contracts.fields import mapping_at

from compose_model_deployment.core import compose_deployment
from compose_model_deployment.status import PROGRESS_REASONS
from compose_model_deployment.usage import USAGE_KIND

CLUSTERS = "inference-clusters"
CACHE = "model-cache"
# Every ModelReplica in the fleet, whatever its namespace: capacity is shared by all teams.
REPLICAS = "model-replicas"
# What the core reads of the XR: its status holds a row per cluster, which it never reads
# (the placement is read from the observed ModelReplicas), only its previous conditions.
XR_PATHS: structs.Paths = {
    "metadata": {"name": None, "namespace": None},
    "spec": None,
    "status": {"conditions": None},
}


def _kind(s: struct_pb2.Struct) -> str:
    """The object's kind, read without adding a field to the request."""
    return s.fields["kind"].string_value if "kind" in s.fields else ""


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    now = request_now(req, rsp)
    xr = structs.project(req.observed.composite.resource, XR_PATHS)
    require_selected_clusters(rsp, CLUSTERS, mapping_at(xr, "spec"))
    response.require_resources(rsp, REPLICAS, API_VERSION, MODEL_REPLICA, match_labels={})
    require_referenced_cache(rsp, CACHE, xr)
    # Every resource read straight from protobuf into the few facts the scheduler decides on.
    # What it composed: ModelReplicas, and their Usages (usage.py), told apart by kind.
    observed = req.observed.resources
    usages = frozenset(name for name, r in observed.items() if _kind(r.resource) == USAGE_KIND)
    mine = {name: read_replica(r.resource) for name, r in observed.items() if name not in usages}
    outcome = compose_deployment(
        xr,
        resolved(req, CLUSTERS, read_cluster_struct),
        resolved(req, CACHE, read_model_cache),
        resolved(req, REPLICAS, read_replica),
        mine,
        now,
        usages,
    )
    apply_outcome(req, rsp, xr, outcome, now=now, progress_reasons=PROGRESS_REASONS)
