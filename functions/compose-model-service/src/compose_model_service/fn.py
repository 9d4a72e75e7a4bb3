"""The gRPC edge of compose-model-service.

It asks Crossplane for its ModelDeployments (by name, in its own namespace), then for what
they point at: their ModelCaches and the InferenceClusters they serve on; and for every
ModelService (one model name per cluster). The core decides on what comes back."""

from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import API_VERSION, MODEL_CACHE, MODEL_DEPLOYMENT, MODEL_SERVICE
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.observed import read_model_cache, read_observed
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.edge.requirements import (
    require_named_clusters,
    resolved,
    resolved_named,
)
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.observed import StagedCache

from compose_model_service.core import compose_service
from compose_model_service.reading import read_cluster_facts, read_deployment, read_rival
from compose_model_service.status import PROGRESS_REASONS
from compose_model_service.views import DeploymentView

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


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
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
    apply_outcome(req, rsp, xr, outcome, progress_reasons=PROGRESS_REASONS)
