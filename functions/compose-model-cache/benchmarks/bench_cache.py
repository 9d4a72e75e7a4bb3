"""Benchmark compose-model-cache: one ModelCache over N clusters, the reconcile that sees
every cluster become Ready.

Each cluster is connected with ReadWriteMany storage; its claim (Bound) and hydration Job
(Complete) are observed as provider-kubernetes reports them, every Object echoing its remote
manifest and status. The previous status still says Hydrating, so this reconcile computes
every phase, drops the finished Jobs, latches Ready and emits the all-ready event.

A second table measures the largest response the function writes: the first reconcile of a
gated model (Hugging Face token), which composes a claim and a token Secret on every cluster,
a hydration Job with its ServiceAccount, Role and RoleBinding on as many as hydrate at once
(MAX_HYDRATIONS), and lists every cluster Pending with a message.

Run: uv run python functions/compose-model-cache/benchmarks/bench_cache.py
"""

import sys
from typing import Any

from compose_model_cache.core import MAX_HYDRATIONS
from compose_model_cache.fn import CLUSTERS, run_function
from compose_model_cache.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.bench import exit_status, observed_as_stored, require_ready, run_benchmark
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.world import inference_cluster

RUNNER = SafeRunner(run_function, NAME)
SIZES = (1, 10, 100, 1000)


def model_cache() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "llama-405b", "namespace": "ml-platform", "uid": "0f1e2d3c"},
        "spec": {
            "source": "HuggingFace",
            "huggingFace": {
                "repo": "meta-llama/Llama-3.1-405B-Instruct",
                "revision": "main",
                "include": ["*.safetensors", "*.json", "tokenizer*"],
            },
            "sizeGiB": 900,
            "clusterSelector": {"matchLabels": {"modelfleet.io/tier": "gpu"}},
        },
    }


def clusters(count: int) -> list[dict[str, Any]]:
    return [
        inference_cluster(
            f"gpu-{i:04d}", labels={"modelfleet.io/tier": "gpu", "region": f"r{i % 7}"}
        )
        for i in range(count)
    ]


def _remote_status(manifest_kind: str) -> dict[str, Any]:
    if manifest_kind == "PersistentVolumeClaim":
        return {
            "phase": "Bound",
            "accessModes": ["ReadWriteMany"],
            "capacity": {"storage": "900Gi"},
        }
    return {
        "succeeded": 1,
        "startTime": "2026-01-01T00:00:00Z",
        "completionTime": "2026-01-01T02:13:00Z",
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True"},
        ],
    }


def build_request(count: int) -> fnv1.RunFunctionRequest:
    """The reconcile at which all `count` clusters turn Ready."""
    xr = model_cache()
    fleet = clusters(count)
    # What the function composes for this fleet, observed as provider-kubernetes reports it:
    # the claims, and the Jobs of every wave of hydrations (MAX_HYDRATIONS at a time).
    observed: dict[str, Any] = {}
    while True:
        rsp = RUNNER.run(run_function_request(xr, observed=observed, required={CLUSTERS: fleet}))
        new = {
            name: obj
            for name, obj in desired_resources(rsp).items()
            if name not in observed
            and obj["spec"]["forProvider"]["manifest"]["kind"] in ("PersistentVolumeClaim", "Job")
        }
        if not new:
            break
        for name, obj in new.items():
            kind = obj["spec"]["forProvider"]["manifest"]["kind"]
            observed[name] = observed_as_stored(obj, remote_status=_remote_status(kind), ready=True)
    xr["status"] = {
        "summary": {"ready": f"0/{count}"},
        "clusters": [
            {"name": ic["metadata"]["name"], "phase": "Hydrating", "message": "downloading"}
            for ic in fleet
        ],
    }
    req = run_function_request(xr, observed=observed, required={CLUSTERS: fleet})
    require_ready(RUNNER, req, f"ModelCache over {count} clusters")
    return req


def build_first_request(count: int) -> fnv1.RunFunctionRequest:
    """The first reconcile of a gated model over `count` clusters: nothing observed yet."""
    xr = model_cache()
    xr["spec"]["huggingFace"]["tokenSecretRef"] = {"name": "hf-token", "key": "token"}
    req = run_function_request(xr, required={CLUSTERS: clusters(count)})
    composed = len(RUNNER.run(req).desired.resources)
    # A claim and a Secret per cluster; a Job with its ServiceAccount, Role and RoleBinding on
    # as many as hydrate at once.
    expected = 2 * count + 4 * min(count, MAX_HYDRATIONS)
    if composed != expected:
        raise SystemExit(f"expected {expected} objects on {count} clusters, got {composed}")
    return req


def main(sizes: tuple[int, ...] = SIZES) -> int:
    rows = run_benchmark(
        "compose-model-cache: one ModelCache over N clusters, all turning Ready",
        build_request,
        RUNNER,
        sizes,
    )
    rows += run_benchmark(
        "compose-model-cache: first reconcile of a gated model over N clusters "
        "(claim and token Secret per cluster, a Job with its access on as many as hydrate at "
        "once: the largest response)",
        build_first_request,
        RUNNER,
        sizes,
    )
    return exit_status(rows)


if __name__ == "__main__":
    sys.exit(main(tuple(int(a) for a in sys.argv[1:]) or SIZES))
