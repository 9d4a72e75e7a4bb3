"""Benchmark compose-model-replica: one 2-node vLLM gang (LeaderWorkerSet) on one cluster of a
fleet of N clusters, serving.

A ModelReplica is composed per cluster and Crossplane calls the function once per replica,
so the fleet grows the number of calls, not their size, with one exception: the referenced
ModelCache reports a row for every cluster it staged on, and the replica finds its own row
there. That row list is the axis: the cache is Ready on N clusters (1, 10, 100, 1000). The
composed LeaderWorkerSet and Service are observed Ready, as provider-kubernetes echoes them.

Run: uv run python functions/compose-model-replica/benchmarks/bench_replica.py
[SIZES... | --write-docs]
"""

import sys
from typing import Any

from compose_model_replica.fn import CACHE, CLUSTER, run_function
from compose_model_replica.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.bench import Scenario, require_ready, run_script
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.stored import observed_ready
from modelfleet_devtools.world import H100, inference_cluster, ready_model_cache

RUNNER = SafeRunner(run_function, NAME)
SIZES = (1, 10, 100, 1000)
HERE = "gpu-0000"


def model_replica() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": f"kimi-k2-{HERE}", "namespace": "ml-team"},
        "spec": {
            "clusterName": HERE,
            "replicas": 2,
            "nodes": 2,
            "gpusPerNode": 8,
            "nodePool": "h100",
            "nodeSelector": H100["nodeSelector"],
            "tolerations": H100["tolerations"],
            "modelCacheRef": {"name": "kimi-k2"},
            "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0", "port": 8000},
        },
    }


def _remote_status(manifest: dict[str, Any]) -> dict[str, Any] | None:
    if manifest.get("kind") == "Service":
        return {"loadBalancer": {}}
    return {
        "replicas": 2,
        "readyReplicas": 2,
        "updatedReplicas": 2,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "AllGroupsReady"},
            {"type": "Progressing", "status": "False", "reason": "Ready"},
        ],
    }


def build_request(clusters: int) -> fnv1.RunFunctionRequest:
    """Steady state: the gang composed and observed Available."""
    xr = model_replica()
    required = {
        CLUSTER: [inference_cluster(HERE, node_pools=[H100])],
        CACHE: [ready_model_cache([f"gpu-{i:04d}" for i in range(clusters)])],
    }
    first = RUNNER.run(run_function_request(xr, required=required))
    observed = observed_ready(desired_resources(first), _remote_status)
    req = run_function_request(xr, observed=observed, required=required)
    require_ready(RUNNER, req, f"ModelReplica with a cache over {clusters} clusters")
    return req


SCENARIOS = [
    Scenario(
        "compose-model-replica: one Ready 2-node gang; its ModelCache reports N clusters",
        build_request,
    )
]


def main(argv: list[str] | None = None) -> int:
    return run_script(__doc__, __file__, RUNNER, SCENARIOS, SIZES, argv=argv)


if __name__ == "__main__":
    sys.exit(main())
