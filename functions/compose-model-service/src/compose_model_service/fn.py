"""The gRPC edge of compose-model-service.

It asks Crossplane for its ModelDeployments (by name, in its own namespace), then for what
they point at: their ModelCaches and the InferenceClusters they serve on; and for every
ModelService (one model name per cluster). Each is read straight from its protobuf Struct into
the few facts the core decides on (views.py), tolerantly: a field of another shape reads as
absent, never raises (a deployment may list a thousand clusters)."""

from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelfleet_contracts.api import API_VERSION, MODEL_CACHE, MODEL_DEPLOYMENT, MODEL_SERVICE
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.clusters import read_cluster_struct
from modelfleet_contracts.edge.now import request_now
from modelfleet_contracts.edge.observed import read_model_cache, read_observed
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.edge.requirements import (
    require_named_clusters,
    resolved,
    resolved_named,
)
from modelfleet_contracts.edge.structs import to_plain
from modelfleet_contracts.fields import as_int, list_at, mapping_at
from modelfleet_contracts.observed import StagedCache

from compose_model_service.core import compose_service
from compose_model_service.status import PROGRESS_REASONS
from compose_model_service.views import ClusterFacts, DeploymentView, RivalService, ServingRow

SERVICES = "model-services"


def deployment_requirement(name: str) -> str:
    return f"model-deployment/{name}"


def cache_requirement(name: str) -> str:
    return f"model-cache/{name}"


def referenced_deployments(xr: dict[str, Any]) -> list[str]:
    """The ModelDeployments `spec.backends` names, each once, in order."""
    found: list[str] = []
    for backend in list_at(mapping_at(xr, "spec"), "backends"):
        name = mapping_at(backend, "modelDeploymentRef").get("name")
        if isinstance(name, str) and name and name not in found:
            found.append(name)
    return found


def _fields(fields: Any, key: str) -> Any:
    v = fields.get(key)
    return v.struct_value.fields if v is not None and v.HasField("struct_value") else {}


def _string(fields: Any, key: str) -> str:
    v = fields.get(key)
    return v.string_value if v is not None and v.HasField("string_value") else ""


def _rows(fields: Any, key: str) -> list[Any]:
    v = fields.get(key)
    if v is None or not v.HasField("list_value"):
        return []
    return [i.struct_value.fields for i in v.list_value.values if i.HasField("struct_value")]


def read_deployment(s: struct_pb2.Struct) -> DeploymentView:
    metadata, spec, status = (_fields(s.fields, k) for k in ("metadata", "spec", "status"))
    rows = tuple(
        ServingRow(
            cluster=_string(row, "name"),
            replicas=as_int(to_plain(row.get("replicas"))),
            phase=_string(row, "phase"),
            message=_string(row, "message"),
            address=_string(row, "address"),
        )
        for row in _rows(status, "clusters")
    )
    return DeploymentView(
        name=_string(metadata, "name"),
        served_model_name=_string(status, "servedModelName"),
        cache_name=_string(_fields(spec, "modelCacheRef"), "name"),
        rows=rows,
    )


def read_cluster_facts(s: struct_pb2.Struct) -> ClusterFacts:
    reason = message = ""
    for condition in _rows(_fields(s.fields, "status"), "conditions"):
        if _string(condition, "type") == "GatewayReady":
            reason, message = _string(condition, "reason"), _string(condition, "message")
            break
    return ClusterFacts(read_cluster_struct(s, node_pools=False), reason, message)


def read_rival(s: struct_pb2.Struct) -> RivalService:
    metadata, spec, status = (_fields(s.fields, k) for k in ("metadata", "spec", "status"))
    return RivalService(
        namespace=_string(metadata, "namespace"),
        name=_string(metadata, "name"),
        model_name=_string(spec, "modelName"),
        created=_string(metadata, "creationTimestamp"),
        clusters=frozenset(_string(row, "name") for row in _rows(status, "clusters")),
    )


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    now = request_now(req, rsp)
    xr = structs.to_dict(req.observed.composite.resource)
    namespace = str(mapping_at(xr, "metadata").get("namespace", ""))
    response.require_resources(rsp, SERVICES, API_VERSION, MODEL_SERVICE, match_labels={})
    wanted = referenced_deployments(xr)
    for name in wanted:
        response.require_resources(
            rsp,
            deployment_requirement(name),
            API_VERSION,
            MODEL_DEPLOYMENT,
            match_name=name,
            namespace=namespace,
        )
    deployments: dict[str, DeploymentView] | None = {}
    for name in wanted:
        items = resolved(req, deployment_requirement(name), read_deployment)
        if items is None:
            deployments = None
            break
        if items and deployments is not None:
            deployments[name] = items[0]
    caches: dict[str, StagedCache | None] | None = None
    clusters = None
    if deployments is not None:
        cache_names = sorted({d.cache_name for d in deployments.values() if d.cache_name})
        for name in cache_names:
            response.require_resources(
                rsp,
                cache_requirement(name),
                API_VERSION,
                MODEL_CACHE,
                match_name=name,
                namespace=namespace,
            )
        caches = {}
        for name in cache_names:
            staged = resolved(req, cache_requirement(name), read_model_cache)
            if staged is None:
                caches = None
                break
            if caches is not None:
                caches[name] = staged[0] if staged else None
        placed = sorted({c for d in deployments.values() for c in d.placed_on})
        require_named_clusters(rsp, placed)
        found = resolved_named(req, placed, read_cluster_facts)
        clusters = {f.view.name: f for f in found} if found is not None else None
    observed = {name: read_observed(r.resource) for name, r in req.observed.resources.items()}
    outcome = compose_service(
        xr, deployments, caches, clusters, resolved(req, SERVICES, read_rival), observed
    )
    apply_outcome(req, rsp, xr, outcome, now=now, progress_reasons=PROGRESS_REASONS)
