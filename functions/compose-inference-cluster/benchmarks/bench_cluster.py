"""Benchmark compose-inference-cluster: one InferenceCluster with N GPU node pools, connected.

An InferenceCluster describes one workload cluster, and Crossplane calls the function once
per InferenceCluster: the size of the fleet never enters a request (a fleet of N clusters
costs N independent calls of the 1-pool row). What grows inside one request is the list of
node pools, so that is the axis here: 1, 10 and 64 pools (64 is the XRD's maxItems; a larger
list is rejected as InvalidSpec, which is not the path worth timing), every one validated
and reported. The cluster connects through a kubeconfig Secret, has managed GCP Filestore
storage and the LeaderWorkerSet Helm release; everything composed is observed Ready.

Run: uv run python functions/compose-inference-cluster/benchmarks/bench_cluster.py
[SIZES... | --write-docs]
"""

import sys
from typing import Any

from compose_inference_cluster.fn import run_function
from compose_inference_cluster.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.bench import Scenario, require_ready, run_script
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.stored import observed_ready

RUNNER = SafeRunner(run_function, NAME)
SIZES = (1, 10, 64)


def node_pool(i: int) -> dict[str, Any]:
    return {
        "name": f"h100-{i:04d}",
        "nodeCount": 4,
        "gpu": {"count": 8, "memoryGiB": 80, "product": "NVIDIA-H100-80GB-HBM3"},
        "nodeSelector": {"cloud.google.com/gke-nodepool": f"h100-{i:04d}"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }


def inference_cluster(pools: int) -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "gke-us-central1", "labels": {"modelfleet.io/region": "us"}},
        "spec": {
            "connection": {
                "kubeconfigSecretRef": {
                    "namespace": "crossplane-system",
                    "name": "gke-us-central1-kubeconfig",
                    "key": "kubeconfig",
                }
            },
            "storage": {
                "managed": {
                    "provisioner": "GCPFilestore",
                    "gcpFilestore": {"network": "ml-vpc", "tier": "ENTERPRISE"},
                }
            },
            "leaderWorkerSet": {"install": True},
            "nodePools": [node_pool(i) for i in range(pools)],
        },
    }


def _remote_status(manifest: dict[str, Any]) -> dict[str, Any] | None:
    return {"phase": "Active"} if manifest.get("kind") == "Namespace" else None


def build_request(pools: int) -> fnv1.RunFunctionRequest:
    """Steady state: everything the function composes for this cluster observed Ready."""
    xr = inference_cluster(pools)
    observed: dict[str, dict[str, Any]] = {}
    # Some resources are composed only once others exist; observe until nothing new appears.
    for _ in range(4):
        desired = desired_resources(RUNNER.run(run_function_request(xr, observed=observed)))
        if desired.keys() <= observed.keys():
            break
        observed = observed_ready(desired, _remote_status)
    req = run_function_request(xr, observed=observed)
    require_ready(RUNNER, req, f"InferenceCluster with {pools} node pools")
    return req


SCENARIOS = [
    Scenario(
        "compose-inference-cluster: one InferenceCluster with N GPU node pools, all Ready",
        build_request,
    )
]


def main(argv: list[str] | None = None) -> int:
    return run_script(__doc__, __file__, RUNNER, SCENARIOS, SIZES, axis="node pools", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
