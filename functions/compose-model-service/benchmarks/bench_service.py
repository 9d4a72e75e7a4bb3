"""Benchmark compose-model-service: a canary (two ModelDeployments at 90/10) over a fleet of N
clusters, routed.

Crossplane calls the function once per ModelService, and that one call reads the whole fleet
the model serves on: both ModelDeployments list a Ready row for each of the N clusters (1, 10,
100, 1000), their ModelCache a Ready row per cluster, and each of the N InferenceClusters
(with its Gateway Programmed) is a requirement of its own. The function composes one weighted
HTTPRoute per cluster, observed Accepted by the Gateway, as provider-kubernetes echoes it.

Run: uv run python functions/compose-model-service/benchmarks/bench_service.py
[SIZES... | --write-docs]
"""

import sys
from typing import Any

from compose_model_service.fn import (
    SERVICES,
    cache_requirement,
    deployment_requirement,
    run_function,
)
from compose_model_service.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.requirements import cluster_requirement
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.naming import workload_name
from modelfleet_contracts.serving import service_address
from modelfleet_devtools.bench import Scenario, require_ready, run_script
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.stored import observed_ready
from modelfleet_devtools.world import inference_cluster, ready_model_cache

RUNNER = SafeRunner(run_function, NAME)
SIZES = (1, 10, 100, 1000)
NAMESPACE = "ml-team"
MODEL = "moonshotai/Kimi-K2-Instruct"
WEIGHTS = {"kimi-k2-v1": 90, "kimi-k2-v2": 10}


def cluster_names(clusters: int) -> list[str]:
    return [f"gpu-{i:04d}" for i in range(clusters)]


def model_service() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelService",
        "metadata": {
            "name": "kimi-k2",
            "namespace": NAMESPACE,
            "creationTimestamp": "2026-11-01T00:00:00Z",
        },
        "spec": {
            "modelName": MODEL,
            "backends": [
                {"modelDeploymentRef": {"name": name}, "weight": weight}
                for name, weight in WEIGHTS.items()
            ],
        },
    }


def model_deployment(name: str, clusters: list[str]) -> dict[str, Any]:
    """A ModelDeployment with a Ready replica and its address on each of `clusters`."""
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"replicas": len(clusters), "modelCacheRef": {"name": "kimi-k2"}},
        "status": {
            "servedModelName": MODEL,
            "summary": {"ready": f"{len(clusters)}/{len(clusters)}"},
            "clusters": [
                {
                    "name": c,
                    "replicas": 1,
                    "nodes": 2,
                    "phase": "Ready",
                    "address": service_address(
                        workload_name(NAMESPACE, f"{name}-{c}"), "modelfleet", 8000
                    ),
                }
                for c in clusters
            ],
        },
    }


def gateway_cluster(name: str, index: int) -> dict[str, Any]:
    ic = inference_cluster(name)
    address = f"10.{index // 250}.{index % 250}.1"
    ic["status"]["gateway"] = {
        "name": "inference",
        "namespace": "gateway-system",
        "ready": True,
        "address": address,
    }
    ic["status"]["conditions"].append(
        {"type": "GatewayReady", "status": "True", "reason": "Programmed"}
    )
    return ic


def _accepted(manifest: dict[str, Any]) -> dict[str, Any]:
    parent = manifest["spec"]["parentRefs"][0]
    return {
        "parents": [
            {
                "parentRef": parent,
                "controllerName": "example.org/gateway",
                "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}],
            }
        ]
    }


def build_request(clusters: int) -> fnv1.RunFunctionRequest:
    """Steady state: a route on every cluster, each observed Accepted."""
    xr = model_service()
    names = cluster_names(clusters)
    required: dict[str, list[dict[str, Any]]] = {
        SERVICES: [xr],
        cache_requirement("kimi-k2"): [ready_model_cache(names)],
        **{deployment_requirement(n): [model_deployment(n, names)] for n in WEIGHTS},
        **{cluster_requirement(c): [gateway_cluster(c, i)] for i, c in enumerate(names)},
    }
    first = RUNNER.run(run_function_request(xr, required=required))
    observed = observed_ready(desired_resources(first), _accepted)
    req = run_function_request(xr, observed=observed, required=required)
    require_ready(RUNNER, req, f"ModelService routed on {clusters} clusters")
    return req


SCENARIOS = [
    Scenario(
        "compose-model-service: a 90/10 canary of two ModelDeployments, both Ready on N "
        "clusters, routed on each",
        build_request,
    )
]


def main(argv: list[str] | None = None) -> int:
    return run_script(__doc__, __file__, RUNNER, SCENARIOS, SIZES, argv=argv)


if __name__ == "__main__":
    sys.exit(main())
