"""Benchmark compose-model-cache: one ModelCache over N clusters, the reconcile that sees
the cache become Ready on every cluster.

Each cluster is connected with ReadWriteMany storage and reports its hydrator ServiceAccount.
The request is reached the way Crossplane reaches it: reconcile after reconcile, every
composed Object observed as provider-kubernetes reports it (claims Bound, Jobs Complete; a
finished Job's Object, once it only watches the Job, still echoing the Job it last saw), and
the status it wrote fed back. At most MAX_HYDRATIONS clusters hydrate at once, so over more
clusters the measured reconcile is the one at which the last wave's Jobs complete: it
computes every phase, turns those Jobs' Objects to watching them, latches Ready and emits
the all-ready event.

A second table measures the first reconcile of a gated model (Hugging Face token), which
composes a claim and a token Secret on every cluster and a hydration Job on as many as hydrate
at once (MAX_HYDRATIONS), and lists the other clusters Pending, waiting for a slot.

Run: uv run python functions/compose-model-cache/benchmarks/bench_cache.py
[SIZES... | --write-docs]
"""

import sys
from collections import Counter
from typing import Any

from compose_model_cache.core import MAX_HYDRATIONS
from compose_model_cache.fn import CLUSTERS, run_function
from compose_model_cache.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.bench import Scenario, observed_as_stored, require_ready, run_script
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request
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


def _remote_status(manifest_kind: str) -> dict[str, Any] | None:
    """What provider-kubernetes echoes of the remote object once it is done."""
    if manifest_kind == "PersistentVolumeClaim":
        return {
            "phase": "Bound",
            "accessModes": ["ReadWriteMany"],
            "capacity": {"storage": "900Gi"},
        }
    if manifest_kind == "Job":
        return {
            "succeeded": 1,
            "startTime": "2026-01-01T00:00:00Z",
            "completionTime": "2026-01-01T02:13:00Z",
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True"},
                {"type": "Complete", "status": "True"},
            ],
        }
    return None  # ServiceAccount, Role, RoleBinding, Secret: no status of their own


def _manifest_kind(obj: dict[str, Any]) -> str:
    return str(obj["spec"]["forProvider"]["manifest"]["kind"])


def build_request(count: int) -> fnv1.RunFunctionRequest:
    """The reconcile at which the cache turns Ready on all `count` clusters."""
    xr = model_cache()
    fleet = clusters(count)
    observed: dict[str, Any] = {}
    # One reconcile composes the claims and a wave of Jobs; each further one completes a wave.
    for _ in range(count // MAX_HYDRATIONS + 3):
        req = run_function_request(xr, observed=observed, required={CLUSTERS: fleet})
        rsp = RUNNER.run(req)
        if rsp.desired.composite.ready == fnv1.READY_TRUE:
            require_ready(RUNNER, req, f"ModelCache over {count} clusters")
            return req
        # What Crossplane observes next: what was desired now, each Object done (one that
        # turned to watching its Job keeps the echo it had); and the status the function wrote.
        observed = {
            name: _observed_next(observed.get(name), obj)
            for name, obj in desired_resources(rsp).items()
        }
        xr["status"] = desired_status(rsp)
    raise SystemExit(f"ModelCache over {count} clusters: never Ready, every wave observed done")


def _observed_next(before: dict[str, Any] | None, desired: dict[str, Any]) -> dict[str, Any]:
    """An Object as Crossplane observes it after applying `desired`: a new one done, one whose
    spec changed (a finished Job's, now only watching it) with the remote object it last
    echoed."""
    if before is None:
        kind = _manifest_kind(desired)
        return observed_as_stored(desired, remote_status=_remote_status(kind), ready=True)
    if before["spec"] != desired["spec"]:
        return {**before, "spec": desired["spec"]}
    return before


def composed_per_cluster(rsp: fnv1.RunFunctionResponse) -> Counter[tuple[str, ...]]:
    """How many clusters got each set of kinds: the desired Objects grouped by the cluster
    (provider config) they land on."""
    kinds: dict[str, list[str]] = {}
    for obj in desired_resources(rsp).values():
        cluster = obj["spec"]["providerConfigRef"]["name"]
        kinds.setdefault(cluster, []).append(_manifest_kind(obj))
    return Counter(tuple(sorted(k)) for k in kinds.values())


STAGED = ("PersistentVolumeClaim", "Secret")
HYDRATING = tuple(sorted((*STAGED, "Job")))


def expected_first_reconcile(count: int) -> Counter[tuple[str, ...]]:
    """A claim and the token Secret on every cluster; on as many as hydrate at once, the Job
    too (under the cluster's hydrator account: no access of its own)."""
    hydrating = min(count, MAX_HYDRATIONS)
    expected = Counter({HYDRATING: hydrating, STAGED: count - hydrating})
    return +expected  # drop a zero count


def build_first_request(count: int) -> fnv1.RunFunctionRequest:
    """The first reconcile of a gated model over `count` clusters: nothing observed yet."""
    xr = model_cache()
    xr["spec"]["huggingFace"]["tokenSecretRef"] = {"name": "hf-token", "key": "token"}
    req = run_function_request(xr, required={CLUSTERS: clusters(count)})
    rsp = RUNNER.run(req)
    composed, expected = composed_per_cluster(rsp), expected_first_reconcile(count)
    if composed != expected:
        raise SystemExit(
            f"{count} clusters: expected {describe(expected)}; got {describe(composed)}"
        )
    waiting = [
        row["name"]
        for row in desired_status(rsp).get("clusters", [])
        if row.get("phase") == "Pending" and "hydration slot" in row.get("message", "")
    ]
    if len(waiting) != count - min(count, MAX_HYDRATIONS):
        raise SystemExit(f"{count} clusters: {len(waiting)} rows wait for a hydration slot")
    return req


def describe(per_cluster: Counter[tuple[str, ...]]) -> str:
    return "; ".join(f"{n} clusters with {', '.join(kinds)}" for kinds, n in per_cluster.items())


SCENARIOS = [
    Scenario(
        "compose-model-cache: one ModelCache over N clusters turning Ready "
        f"(its last wave of at most {MAX_HYDRATIONS} hydrations completing)",
        build_request,
        table="turning Ready",
    ),
    Scenario(
        "compose-model-cache: first reconcile of a gated model over N clusters "
        "(claim and token Secret per cluster, a Job on as many as hydrate at once)",
        build_first_request,
        table="first reconcile of a gated model",
    ),
]


def main(argv: list[str] | None = None) -> int:
    return run_script(__doc__, __file__, RUNNER, SCENARIOS, SIZES, argv=argv)


if __name__ == "__main__":
    sys.exit(main())
