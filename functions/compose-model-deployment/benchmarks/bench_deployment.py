"""Benchmark compose-model-deployment: one ModelDeployment spread over N clusters, placed and
serving, in a fleet where other teams already run 10 ModelReplicas per cluster.

Each cluster has one 32-node 8xH100 pool and RWX storage; the model needs 2-node gangs
(vramGiB 1200); the referenced ModelCache is Ready on every cluster. The deployment asks for
N replicas (one gang per cluster); its N ModelReplicas are observed Ready. The fleet-wide
ModelReplica requirement therefore returns 11·N objects: at 100 clusters that is the
issue's "100 clusters and 1000 existing ModelReplicas" (plus the deployment's own 100).

Run: uv run python functions/compose-model-deployment/benchmarks/bench_deployment.py
[SIZES... | --write-docs]
"""

import copy
import sys
from typing import Any

from compose_model_deployment.fn import CACHE, CLUSTERS, REPLICAS, run_function
from compose_model_deployment.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.bench import Scenario, require_ready, run_script
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.world import H100, inference_cluster, ready_model_cache

RUNNER = SafeRunner(run_function, NAME)
SIZES = (1, 10, 100, 1000)
OTHERS_PER_CLUSTER = 10
POOL = {**H100, "nodeCount": 32}


def model_deployment(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "kimi-k2", "namespace": "ml-team", "uid": "5a6b7c8d"},
        "spec": {
            "replicas": replicas,
            "clusterSelector": {"matchLabels": {"modelfleet.io/tier": "gpu"}},
            "modelCacheRef": {"name": "kimi-k2"},
            "resources": {"vramGiB": 1200},
            "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0"},
        },
    }


def cluster_name(i: int) -> str:
    return f"gpu-{i:04d}"


def other_replica(cluster: str, n: int) -> dict[str, Any]:
    """Another team's 2-node gang on the same pool, Ready."""
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": f"team{n}-llama-{cluster}",
            "namespace": f"team-{n}",
            "labels": {
                "modelfleet.io/modeldeployment": "llama",
                "modelfleet.io/namespace": f"team-{n}",
                "modelfleet.io/cluster": cluster,
            },
        },
        "spec": {
            "clusterName": cluster,
            "nodePool": "h100",
            "replicas": 1,
            "nodes": 2,
            "gpusPerNode": 8,
            "modelCacheRef": {"name": "llama"},
            "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0"},
        },
        "status": {"phase": "Ready", "replicas": 1, "readyReplicas": 1, "message": "1/1 ready"},
    }


def _ready(replica: dict[str, Any]) -> dict[str, Any]:
    observed = copy.deepcopy(replica)
    observed.setdefault("metadata", {}).update({"uid": "0", "resourceVersion": "1"})
    observed["status"] = {"phase": "Ready", "replicas": 1, "readyReplicas": 1, "message": "ok"}
    return observed


def build_request(count: int) -> fnv1.RunFunctionRequest:
    """Steady state: the deployment placed on all `count` clusters, every gang Ready."""
    xr = model_deployment(count)
    fleet = [
        inference_cluster(cluster_name(i), labels={"modelfleet.io/tier": "gpu"}, node_pools=[POOL])
        for i in range(count)
    ]
    others = [
        other_replica(cluster_name(i), n) for i in range(count) for n in range(OTHERS_PER_CLUSTER)
    ]
    required: dict[str, Any] = {
        CLUSTERS: fleet,
        CACHE: [ready_model_cache([cluster_name(i) for i in range(count)])],
        REPLICAS: others,
    }
    first = RUNNER.run(run_function_request(xr, required=required))
    composed = desired_resources(first)
    mine = {n: _ready(r) for n, r in composed.items() if r.get("kind") == "ModelReplica"}
    if len(mine) != count:
        raise SystemExit(f"expected {count} ModelReplicas, the function placed {len(mine)}")
    # The Usages it composes by each replica (of the cache and the cluster), as observed.
    usages = {n: r for n, r in composed.items() if r.get("kind") == "Usage"}
    required[REPLICAS] = others + list(mine.values())
    xr["status"] = {"replicas": {"desired": count, "ready": count}}
    req = run_function_request(xr, observed={**mine, **usages}, required=required)
    require_ready(RUNNER, req, f"ModelDeployment over {count} clusters")
    return req


SCENARIOS = [
    Scenario(
        f"compose-model-deployment: N clusters, N Ready gangs, {OTHERS_PER_CLUSTER} other "
        "teams' ModelReplicas per cluster (N=100: 1000 existing replicas)",
        build_request,
    )
]


def main(argv: list[str] | None = None) -> int:
    return run_script(__doc__, __file__, RUNNER, SCENARIOS, SIZES, argv=argv)


if __name__ == "__main__":
    sys.exit(main())
