"""Benchmark compose-model-cache: a ModelCache over N clusters, and one of its shards.

A ModelCache composes one ModelCacheShard per 32 clusters (SHARD_SIZE) and reports what its
shards report; each shard composes its clusters' claims, token Secrets and hydration Jobs.
So there are two requests to measure at each fleet size N:

- The ModelCache's: N InferenceClusters required, N/32 shards observed, N rows written. Its
  reconcile that sees every shard report every cluster Ready, and its largest response (the
  first reconcile, every shard told its clusters), which must stay under 2 MiB at 5000
  clusters.
- A shard's: min(N, 32) clusters whatever N, each reporting its hydrator ServiceAccount,
  reached the way Crossplane reaches it: reconcile after reconcile, every composed Object
  observed as provider-kubernetes reports it (claims Bound, Jobs Complete; a finished Job's
  Object, once only watching it, still echoing the Job it last saw, pod template and all),
  the status it wrote fed back, until a reconcile changes nothing: that steady-state request,
  which Crossplane sends at every poll of a Ready shard, is the one measured. And its
  largest response: the first reconcile of a gated model (a claim, a token Secret and a Job
  on each of its clusters, under the cluster's hydrator account: no access of its own).

Run: uv run python functions/compose-model-cache/benchmarks/bench_cache.py
[SIZES... | --write-docs]
"""

import sys
from collections import Counter
from typing import Any

from compose_model_cache.cache.shards import SHARD_SIZE
from compose_model_cache.fn import CLUSTERS, run_function
from compose_model_cache.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts import hydration
from modelfleet_contracts.api import MODEL_CACHE_SHARD
from modelfleet_contracts.edge.requirements import cluster_requirement
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.bench import Scenario, require_ready, run_script
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request
from modelfleet_devtools.stored import as_stored, observed_as_stored
from modelfleet_devtools.world import inference_cluster

RUNNER = SafeRunner(run_function, NAME)
SIZES = (1, 10, 100, 1000, 5000)


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
    """The fleet's InferenceClusters as Crossplane sends them (`as_stored`)."""
    return [
        as_stored(
            inference_cluster(
                f"gpu-{i:04d}", labels={"modelfleet.io/tier": "gpu", "region": f"r{i % 7}"}
            )
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
    return None  # a Secret: no status of its own


FINISHED_PROGRESS = {
    hydration.BYTES_DONE: str(900 * 2**30),
    hydration.BYTES_TOTAL: str(900 * 2**30),
    hydration.FILES_DONE: "191",
    hydration.FILES_TOTAL: "191",
}


def _manifest_kind(obj: dict[str, Any]) -> str:
    return str(obj["spec"]["forProvider"]["manifest"]["kind"])


def shards_of(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    return {k: r for k, r in desired_resources(rsp).items() if r["kind"] == MODEL_CACHE_SHARD}


def build_request(count: int) -> fnv1.RunFunctionRequest:
    """The ModelCache's reconcile at which its shards report all `count` clusters Ready."""
    xr, fleet = model_cache(), clusters(count)
    first = RUNNER.run(run_function_request(xr, required={CLUSTERS: fleet}))
    ready = {"type": "ArtifactReady", "status": "True", "reason": "Staged"}
    observed = {}
    # Each cluster's row as its shard reports it once Ready: the names the ModelCache lists
    # while it waits (claim, path, fingerprint), with the figures of a finished download.
    before = {r["name"]: r for r in desired_status(first)["clusters"]}
    for key, shard in shards_of(first).items():
        names = [e["name"] for e in shard["spec"]["clusters"]]
        rows = [
            {
                **before[n],
                "phase": "Ready",
                "progress": "756.0/756.0 GiB",
                "bytesDone": 811748818944,
                "bytesTotal": 811748818944,
                "resolvedRevision": "b" * 40,
            }
            for n in names
        ]
        for row in rows:
            row.pop("message", None)
        status = {"summary": {"ready": f"{len(names)}/{len(names)}"}, "clusters": rows}
        observed[key] = shard | {"status": status | {"conditions": [ready]}}
    xr["status"] = desired_status(first)
    req = run_function_request(xr, observed=observed, required={CLUSTERS: fleet})
    require_ready(RUNNER, req, f"ModelCache over {count} clusters")
    return req


def build_first_request(count: int) -> fnv1.RunFunctionRequest:
    """The ModelCache's first reconcile over `count` clusters: every shard composed."""
    req = run_function_request(model_cache(), required={CLUSTERS: clusters(count)})
    shards = shards_of(RUNNER.run(req))
    if len(shards) != -(-count // SHARD_SIZE):
        raise SystemExit(f"{count} clusters: {len(shards)} shards composed")
    return req


def first_shard(count: int, *, gated: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The shard a ModelCache over `count` clusters composes first (the others are like it),
    and its clusters as Crossplane resolves its requirements: each by name."""
    xr = model_cache()
    if gated:
        xr["spec"]["huggingFace"]["tokenSecretRef"] = {"name": "hf-token", "key": "token"}
    fleet = clusters(min(count, SHARD_SIZE))
    composed = shards_of(RUNNER.run(run_function_request(xr, required={CLUSTERS: fleet})))
    shard = composed["shard-0"]
    shard["metadata"] |= {"name": "llama-405b-7xk2p", "namespace": "ml-platform"}
    return shard, {cluster_requirement(c["metadata"]["name"]): [c] for c in fleet}


def build_shard_request(count: int) -> fnv1.RunFunctionRequest:
    """A Ready shard of a `count`-cluster cache at steady state (`settled_shard`)."""
    shard, named = first_shard(count)
    req = settled_shard(shard, named)
    require_ready(RUNNER, req, f"shard of a ModelCache over {count} clusters")
    return req


def settled_shard(
    shard: dict[str, Any], named: dict[str, list[dict[str, Any]]], runner: Any = RUNNER
) -> fnv1.RunFunctionRequest:
    """The request Crossplane sends a shard once a reconcile changes nothing: reconcile
    after reconcile, what was desired observed done (a new Object done, one whose spec
    changed keeping the remote object it last echoed: a finished Job's), the status the
    function wrote fed back."""
    observed: dict[str, Any] = {}
    before: tuple[Any, ...] | None = None
    for _ in range(8):
        req = run_function_request(shard, observed=observed, required=named)
        rsp = runner.run(req)
        desired, status = desired_resources(rsp), desired_status(rsp)
        ready = rsp.desired.composite.ready == fnv1.READY_TRUE
        if ready and before == (desired, status):
            return req
        before = (desired, status)
        observed = {name: _observed_next(observed.get(name), obj) for name, obj in desired.items()}
        shard["status"] = status
    raise SystemExit(f"shard of {len(named)} clusters: never settled, every Object observed done")


def _observed_next(before: dict[str, Any] | None, desired: dict[str, Any]) -> dict[str, Any]:
    """An Object as Crossplane observes it after applying `desired`: a new one done, one whose
    spec changed (a finished Job's, now only watching it) with the remote object it last
    echoed."""
    if before is None:
        kind = _manifest_kind(desired)
        observed = observed_as_stored(desired, remote_status=_remote_status(kind), ready=True)
        if kind == "Job":  # the progress a finished hydrator left on its Job
            echoed = observed["status"]["atProvider"]["manifest"]["metadata"]
            echoed.setdefault("annotations", {}).update(FINISHED_PROGRESS)
        return observed
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


def build_first_shard_request(count: int) -> fnv1.RunFunctionRequest:
    """A shard's first reconcile of a gated model: nothing observed yet."""
    shard, named = first_shard(count, gated=True)
    req = run_function_request(shard, required=named)
    composed = composed_per_cluster(RUNNER.run(req))
    expected = Counter({HYDRATING: min(count, SHARD_SIZE)})
    if composed != expected:
        raise SystemExit(
            f"{count} clusters: expected {describe(expected)}; got {describe(composed)}"
        )
    return req


def describe(per_cluster: Counter[tuple[str, ...]]) -> str:
    return "; ".join(f"{n} clusters with {', '.join(kinds)}" for kinds, n in per_cluster.items())


SCENARIOS = [
    Scenario(
        "compose-model-cache: one ModelCache over N clusters turning Ready "
        "(N/32 shards report every cluster Ready)",
        build_request,
        table="turning Ready",
    ),
    Scenario(
        "compose-model-cache: first reconcile of a ModelCache over N clusters "
        "(every shard composed, told its clusters: its largest response)",
        build_first_request,
        table="first reconcile",
    ),
    Scenario(
        "compose-model-cache: one Ready ModelCacheShard of a fleet of N clusters at steady "
        f"state (min(N, {SHARD_SIZE}) clusters, every Job finished and only watched: the "
        "request Crossplane sends at every poll)",
        build_shard_request,
        table="shard at steady state",
    ),
    Scenario(
        "compose-model-cache: first reconcile of a gated model on one ModelCacheShard "
        f"(min(N, {SHARD_SIZE}) clusters, each a claim, a token Secret and a Job: a shard's "
        "largest response)",
        build_first_shard_request,
        table="first reconcile of a gated model",
    ),
]


def main(argv: list[str] | None = None) -> int:
    return run_script(__doc__, __file__, RUNNER, SCENARIOS, SIZES, argv=argv)


if __name__ == "__main__":
    sys.exit(main())
