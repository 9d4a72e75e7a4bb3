"""The ModelDeployment test world: deployments, clusters, caches, other teams' replicas."""

from typing import Any

from compose_model_deployment.fn import CACHE, CLUSTERS, REPLICAS, run_function
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request

RUNNER = SafeRunner(run_function, "compose-model-deployment")


def deployment(replicas: int = 1, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "replicas": replicas,
        "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0"},
    }
    body.update(spec)
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "kimi-k2", "namespace": "ml-team"},
        "spec": body,
    }


def cache_on(
    *clusters: str, phase: str = "Ready", spec: dict[str, Any] | None = None
) -> dict[str, Any]:
    cache: dict[str, Any] = {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "kimi-k2", "namespace": "ml-team"},
        "status": {"clusters": [{"name": c, "phase": phase} for c in clusters]},
    }
    if spec is not None:
        cache["spec"] = spec
    return cache


def other_replica(cluster: str, pool: str, replicas: int, nodes: int) -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": f"other-{cluster}",
            "namespace": "other-team",
            "labels": {
                "modelfleet.io/modeldeployment": "other",
                "modelfleet.io/namespace": "other-team",
            },
        },
        "spec": {"clusterName": cluster, "nodePool": pool, "replicas": replicas, "nodes": nodes},
    }


def schedule(
    xr: dict[str, Any],
    clusters: list[dict[str, Any]],
    *,
    cache: dict[str, Any] | None = None,
    others: list[dict[str, Any]] | None = None,
    observed: dict[str, dict[str, Any]] | None = None,
) -> fnv1.RunFunctionResponse:
    required: dict[str, Any] = {CLUSTERS: clusters, REPLICAS: list(others or [])}
    if xr["spec"].get("modelCacheRef"):
        required[CACHE] = [cache] if cache else []
    return RUNNER.run(run_function_request(xr, observed=observed, required=required))


def desired_replicas(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    """The desired ModelReplicas, by composition-resource-name (their Usages left out)."""
    return {k: r for k, r in desired_resources(rsp).items() if r.get("kind") == "ModelReplica"}


def desired_usages(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    """The desired Usages (usage.py), by composition-resource-name."""
    return {k: r for k, r in desired_resources(rsp).items() if r.get("kind") == "Usage"}


def placement(rsp: fnv1.RunFunctionResponse) -> dict[str, int]:
    return {
        r["spec"]["clusterName"]: int(r["spec"]["replicas"])
        for r in desired_resources(rsp).values()
        if r.get("kind") == "ModelReplica"
    }


def rows(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in desired_status(rsp).get("clusters", [])}
