"""The world of compose-model-service's tests: a ModelService, the ModelDeployments it names as
the scheduler reports them, their ModelCache, the InferenceClusters (with or without a
Gateway) and other ModelServices, and the runner every test calls."""

import copy
from dataclasses import dataclass, field
from typing import Any

from compose_model_service.core import route_key
from compose_model_service.fn import (
    SERVICES,
    cache_requirement,
    deployment_requirement,
    referenced_deployments,
    run_function,
)
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.requirements import cluster_requirement
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.naming import workload_name
from modelfleet_contracts.serving import service_address
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.world import inference_cluster, observed_object

RUNNER = SafeRunner(run_function, "compose-model-service")
NAMESPACE = "ml-team"
MODEL = "Qwen/Qwen3-0.6B"
GATEWAY = {"name": "inference", "namespace": "gateway-system"}
GATEWAY_ADDRESS = {"gke-us": "10.0.0.7", "eks-eu": "10.1.0.9"}


def model_service(
    weights: dict[str, int] | None = None,
    *,
    name: str = "qwen",
    model: str = MODEL,
    namespace: str = NAMESPACE,
    created: str = "2026-11-01T00:00:00Z",
    clusters: tuple[str, ...] = (),
    refs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """`weights`: ModelDeployment name → weight (default qwen-v1 90, qwen-v2 10); `refs`: the
    backends as written, instead. `clusters`: the rows its status lists (a rival's)."""
    weights = weights if weights is not None else {"qwen-v1": 90, "qwen-v2": 10}
    backends = refs or [
        {"modelDeploymentRef": {"name": md}, "weight": w} for md, w in weights.items()
    ]
    xr: dict[str, Any] = {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
        "spec": {"modelName": model, "backends": backends},
    }
    if clusters:
        xr["status"] = {"clusters": [{"name": c, "routed": True} for c in clusters]}
    return xr


def service_of(deployment: str, cluster: str) -> str:
    """The Service compose-model-replica composes for `deployment`'s replica on `cluster`."""
    return workload_name(NAMESPACE, f"{deployment}-{cluster}")


def model_deployment(
    name: str,
    rows: dict[str, str],
    *,
    served: str = MODEL,
    cache: str | None = "qwen3",
    messages: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A ModelDeployment placed on the clusters of `rows` (cluster → phase of its replica
    there), reporting each Ready replica's address as the scheduler does."""
    listed = []
    for cluster, phase in rows.items():
        row: dict[str, Any] = {"name": cluster, "replicas": 1, "nodes": 1, "phase": phase}
        if phase == "Ready":
            row["address"] = service_address(service_of(name, cluster), "modelfleet", 8000)
        if messages and cluster in messages:
            row["message"] = messages[cluster]
        listed.append(row)
    spec: dict[str, Any] = {"replicas": len(rows)}
    if cache:
        spec["modelCacheRef"] = {"name": cache}
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
        "status": {"servedModelName": served, "clusters": listed},
    }


def model_cache(phases: dict[str, str], name: str = "qwen3") -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"source": "HuggingFace", "huggingFace": {"repo": MODEL}},
        "status": {"clusters": [{"name": c, "phase": p} for c, p in phases.items()]},
    }


def cluster(
    name: str, *, gateway: str | None = "Programmed", connected: bool = True
) -> dict[str, Any]:
    """An InferenceCluster; `gateway`: its GatewayReady reason (None: it declares none)."""
    ic = inference_cluster(name, connected=connected)
    if gateway is not None:
        ready = gateway == "Programmed"
        row: dict[str, Any] = {**GATEWAY, "ready": ready}
        if ready:
            row["address"] = GATEWAY_ADDRESS[name]
        ic["status"]["gateway"] = row
        message = {
            "Programmed": f"Gateway gateway-system/inference is Programmed at {row.get('address')}",
            "GatewayNotFound": "Gateway gateway-system/inference not found on the cluster: "
            "create it, or fix spec.gatewayRef",
        }.get(gateway, gateway)
        ic["status"]["conditions"].append(
            {"type": "GatewayReady", "status": str(ready), "reason": gateway, "message": message}
        )
    return ic


def accepted(status: str = "True") -> dict[str, Any]:
    ref = {"group": "gateway.networking.k8s.io", "kind": "Gateway", **GATEWAY}
    cond = {"type": "Accepted", "status": status, "reason": "Accepted"}
    return {"parents": [{"parentRef": ref, "controllerName": "x.io/gw", "conditions": [cond]}]}


@dataclass
class World:
    """Everything the ModelService reads. A name left out of `deployments` does not exist."""

    deployments: list[dict[str, Any]] = field(default_factory=list)
    caches: list[dict[str, Any]] = field(default_factory=list)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    services: list[dict[str, Any]] = field(default_factory=list)
    unresolved: bool = False  # Crossplane has not resolved the deployments yet

    def required(self, xr: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """What Crossplane resolves for the requirements (read as the function names them,
        whatever shape the XR and the world are in)."""
        if self.unresolved:
            return {}
        by_name = {_name(d): d for d in self.deployments}
        out: dict[str, list[dict[str, Any]]] = {SERVICES: [xr, *self.services]}
        for name in referenced_deployments(xr):
            out[deployment_requirement(name)] = [by_name[name]] if name in by_name else []
        for cache in self.caches:
            out[cache_requirement(_name(cache))] = [cache]
        out.setdefault(cache_requirement("qwen3"), [])
        for ic in self.clusters:
            out[cluster_requirement(_name(ic))] = [ic]
        for d in self.deployments:
            for row in list_at(mapping_at(d, "status"), "clusters"):
                if isinstance(row, dict) and isinstance(row.get("name"), str):
                    out.setdefault(cluster_requirement(row["name"]), [])
        return out


def _name(obj: dict[str, Any]) -> str:
    return str(mapping_at(obj, "metadata").get("name"))


def run(
    xr: dict[str, Any], world: World, observed: dict[str, Any] | None = None
) -> fnv1.RunFunctionResponse:
    req = run_function_request(xr, required=world.required(xr), observed=observed)
    return RUNNER.run(req)


def observed_routes(
    rsp: fnv1.RunFunctionResponse, route_status: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The routes of `rsp` as provider-kubernetes reports them once applied (`route_status`:
    the HTTPRoute's status the Gateway wrote)."""
    return {
        key: observed_object(copy.deepcopy(obj), remote_status=route_status, ready=True)
        for key, obj in desired_resources(rsp).items()
    }


def route_on(rsp: fnv1.RunFunctionResponse, cluster_name: str) -> dict[str, Any] | None:
    obj = desired_resources(rsp).get(route_key(cluster_name))
    return obj["spec"]["forProvider"]["manifest"] if obj else None


def routed_weights(rsp: fnv1.RunFunctionResponse, cluster_name: str) -> dict[str, int]:
    """Service name → weight, of the route composed on `cluster_name` ({} when none)."""
    route = route_on(rsp, cluster_name)
    if route is None:
        return {}
    [rule] = route["spec"]["rules"]
    return {b["name"]: b["weight"] for b in rule["backendRefs"]}
