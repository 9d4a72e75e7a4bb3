"""The fleet's function work per steady-state cycle, against upstream modelplane's.

A steady-state cycle: every hydration Job finished, every claim Bound, and Crossplane polling
each XR once. Here that costs the ModelCache's call and one call of each of its
ModelCacheShards (N/32 of them); upstream (modelplaneai/modelplane) composes a ModelCache in
one call. Both are called the same way Crossplane calls them: over gRPC on loopback, each
function served by its own console script, with requests built to the state Crossplane
reaches (reconcile after reconcile, what was desired observed done, the status written fed
back, until a reconcile changes nothing). The cycles alternate, ours then upstream's, so a
busy machine slows both alike; the table gives the median of each and their ratio.

Our requests carry the tag Crossplane gives them (xfn.Tag: the SHA-256 of their
deterministic encoding), so a poll that sends a Ready XR the same request again is answered
from the response to it (compose_model_cache.main, modelfleet_contracts.edge.replay). The
last two columns send the same content under a tag never sent in each cycle: every call
decided anew, which is what a poll costs once anything in its request changed.

Upstream is not part of this repository: give a checkout of it whose functions' environment
is synced (`git clone https://github.com/modelplaneai/modelplane DIR && cd DIR && uv sync
--package compose-model-cache`), and this script runs its compose-model-cache from there
(`uv run --package compose-model-cache function --insecure --address ...`), its server
accepting requests as large as ours does: with gRPC's default 4 MiB limit, which upstream
keeps, its own steady-state request at 1000 clusters (6.1 MiB) would be refused.

Run: uv run python functions/compose-model-cache/benchmarks/fleet_vs_upstream.py
--upstream DIR [SIZES...] [--cycles N] [--write-docs]
"""

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compose_model_cache.fn import CLUSTERS
from compose_model_cache.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_cli.functions import MAX_MESSAGE, FunctionServers, LoopbackPort
from modelfleet_contracts.edge.requirements import cluster_requirement
from modelfleet_devtools import docs_sections as docs
from modelfleet_devtools.bench import provenance
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request
from modelfleet_devtools.stored import as_stored

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_cache.py, beside this one
from bench_cache import (
    RUNNER,
    _observed_next,
    clusters,
    model_cache,
    settled_shard,
    shards_of,
)

SIZES = (100, 1000)
CYCLES = 15
SECTION = docs.section_name(__file__)
UPSTREAM = "upstream"
Call = Callable[[str, fnv1.RunFunctionRequest], fnv1.RunFunctionResponse]


def upstream_cache() -> dict[str, Any]:
    """Upstream's ModelCache of the same model over the same fleet (its v1alpha1 schema)."""
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "llama-405b", "namespace": "ml-platform", "uid": "0f1e2d3c"},
        "spec": {
            "huggingFace": {"repo": "meta-llama/Llama-3.1-405B-Instruct", "sizeGiB": 900},
            "clusterSelector": {"matchLabels": {"modelfleet.io/tier": "gpu"}},
        },
    }


def upstream_clusters(count: int) -> list[dict[str, Any]]:
    """The same fleet as upstream's InferenceClusters report it once provisioned, as
    Crossplane sends them (`as_stored`)."""
    return [
        as_stored(
            {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "InferenceCluster",
                "metadata": {
                    "name": f"gpu-{i:04d}",
                    "labels": {"modelfleet.io/tier": "gpu", "region": f"r{i % 7}"},
                },
                "spec": {"cluster": {"source": "GKE", "gke": {"project": "p", "region": "r"}}},
                "status": {
                    "providerConfigRef": {"name": f"gpu-{i:04d}"},
                    "cache": {"storageClassName": "filestore-rwx"},
                },
            }
        )
        for i in range(count)
    ]


def settle(
    call: Callable[[fnv1.RunFunctionRequest], fnv1.RunFunctionResponse],
    xr: dict[str, Any],
    required: dict[str, list[dict[str, Any]]],
    observed: dict[str, Any] | None = None,
    what: str = "",
) -> fnv1.RunFunctionRequest:
    """The request at which `xr`'s reconcile changes nothing and it is Ready: each time,
    what was desired is observed done and the status written fed back."""
    observed = dict(observed or {})
    before: tuple[Any, ...] | None = None
    for _ in range(8):
        req = run_function_request(xr, observed=observed, required=required)
        rsp = call(req)
        desired, status = desired_resources(rsp), desired_status(rsp)
        if rsp.desired.composite.ready == fnv1.READY_TRUE and before == (desired, status):
            return req
        before = (desired, status)
        observed = {name: _done(observed.get(name), obj) for name, obj in desired.items()}
        xr["status"] = status
    raise SystemExit(f"{what}: never settled")


def _done(before: dict[str, Any] | None, desired: dict[str, Any]) -> dict[str, Any]:
    """A composed resource as observed once done: an Object as provider-kubernetes reports
    it (bench_cache); an XR (a shard) as given."""
    if desired.get("kind") == "Object":
        observed = _observed_next(before, desired)
        for condition in observed["status"]["conditions"]:  # as the API server has them
            condition.setdefault("lastTransitionTime", "2026-01-01T00:00:00Z")
        return observed
    return before if before is not None else desired


def our_cycle(count: int) -> list[tuple[str, fnv1.RunFunctionRequest]]:
    """The ModelCache's steady-state request and each of its shards'."""
    xr, fleet = model_cache(), clusters(count)
    first = RUNNER.run(run_function_request(xr, required={CLUSTERS: fleet}))
    by_name = {c["metadata"]["name"]: c for c in fleet}
    requests, observed = [], {}
    for key, shard in shards_of(first).items():
        shard["metadata"] |= {"name": f"llama-405b-{key}", "namespace": "ml-platform"}
        names = [e["name"] for e in shard["spec"]["clusters"]]
        named = {cluster_requirement(n): [by_name[n]] for n in names}
        req = settled_shard(shard, named)
        requests.append((key, req))
        ready = {"type": "Ready", "status": "True", "reason": "Available"}
        status = shard["status"]
        observed[key] = shard | {
            "status": status | {"conditions": [*status.get("conditions", []), ready]}
        }
    cache = settle(RUNNER.run, xr, {CLUSTERS: fleet}, observed, f"ModelCache over {count}")
    return [("cache", cache), *requests]


def upstream_cycle(count: int, call: Call) -> fnv1.RunFunctionRequest:
    """Upstream's steady-state request: every claim Bound, every cluster Ready (its Jobs
    left out of the composition once their cluster is Ready)."""
    return settle(
        lambda req: call(UPSTREAM, req),
        upstream_cache(),
        {"clusters": upstream_clusters(count)},
        what=f"upstream's ModelCache over {count}",
    )


# Upstream's own entry point (function.main:cli), its server accepting requests as large as
# ours does (MAX_MESSAGE): upstream serves with gRPC's default 4 MiB limit, under its
# steady-state request at 1000 clusters (a real control plane's calls would fail there).
UPSTREAM_MAIN = f"""
import functools, sys
from crossplane.function import runtime
options = [("grpc.max_receive_message_length", {MAX_MESSAGE}),
           ("grpc.max_send_message_length", {MAX_MESSAGE})]
runtime.serve = functools.partial(runtime.serve, options=options)
from function.main import cli
sys.argv[0] = "function"
cli()
"""


@contextmanager
def upstream_server(checkout: Path) -> Iterator[str]:
    """Upstream's compose-model-cache served from `checkout`, on a loopback port."""
    port = LoopbackPort()
    port.release()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [
                *("uv", "run", "--offline", "--package", "compose-model-cache"),
                *("python", "-c", UPSTREAM_MAIN, "--insecure", "--address", port.address),
            ],
            cwd=checkout,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
        )
        try:
            yield port.address
        finally:
            process.terminate()
            process.wait(timeout=10)


def timed(call: Call, name: str, req: fnv1.RunFunctionRequest) -> float:
    start = time.perf_counter()
    call(name, req)
    return (time.perf_counter() - start) * 1000


def tagged(req: fnv1.RunFunctionRequest, seed: str) -> fnv1.RunFunctionRequest:
    """`req` under a tag of Crossplane's form never sent before: a request never answered,
    as one whose content changed arrives."""
    copied = fnv1.RunFunctionRequest()
    copied.CopyFrom(req)
    copied.meta.tag = hashlib.sha256(f"{seed}:{req.meta.tag}".encode()).hexdigest()
    return copied


def as_crossplane_tags(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    """`req` tagged as Crossplane tags what it sends: the SHA-256 of its deterministic
    encoding, so the same content carries the same tag at every poll."""
    req.meta.tag = ""
    req.meta.tag = hashlib.sha256(req.SerializeToString(deterministic=True)).hexdigest()
    return req


def measure(count: int, call: Call, cycles: int) -> dict[str, Any]:
    ours = [(name, as_crossplane_tags(req)) for name, req in our_cycle(count)]
    theirs = upstream_cycle(count, call)
    for name, req in ours:  # warm both, and check ours answers Ready through gRPC
        if call(NAME, req).desired.composite.ready != fnv1.READY_TRUE:
            raise SystemExit(f"{count} clusters: {name} not Ready through gRPC")
    call(UPSTREAM, theirs)
    # Each cycle also sends ours again under a tag never sent: every call decided anew
    # (what a poll costs when something in the request changed), for the second column.
    anew = [[tagged(req, f"anew-{i}") for _, req in ours] for i in range(cycles)]
    our_ms, their_ms, cache_ms, anew_ms = [], [], [], []
    for i in range(cycles):
        each = [timed(call, NAME, req) for _, req in ours]
        our_ms.append(sum(each))
        cache_ms.append(each[0])
        their_ms.append(timed(call, UPSTREAM, theirs))
        anew_ms.append(sum(timed(call, NAME, req) for req in anew[i]))
    ours_median, theirs_median = statistics.median(our_ms), statistics.median(their_ms)
    return {
        "clusters": count,
        "calls": len(ours),
        "request": sum(r.ByteSize() for _, r in ours) / 2**20,
        "upstream_request": theirs.ByteSize() / 2**20,
        "ours": ours_median,
        "cache": statistics.median(cache_ms),
        "anew": statistics.median(anew_ms),
        "theirs": theirs_median,
        "ratio": ours_median / theirs_median,
        "anew_ratio": statistics.median(anew_ms) / theirs_median,
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| clusters | our calls | our requests | ours per cycle | of which the ModelCache "
        "| upstream's request | upstream's call | ours / upstream "
        "| ours, every call decided anew | anew / upstream |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['clusters']} | {r['calls']} | {r['request']:.2f} MiB | {r['ours']:.1f} ms "
            f"| {r['cache']:.1f} ms | {r['upstream_request']:.2f} MiB | {r['theirs']:.1f} ms "
            f"| {r['ratio']:.2f}x | {r['anew']:.1f} ms | {r['anew_ratio']:.2f}x |"
        )
    return "\n".join(lines)


TITLE = (
    "compose-model-cache's work per steady-state cycle (the ModelCache and every shard, "
    "through gRPC) against upstream modelplane's one call, alternating"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sizes", nargs="*", type=int, help=f"default: {SIZES}")
    parser.add_argument("--upstream", type=Path, required=True, help="a modelplane checkout")
    parser.add_argument("--cycles", type=int, default=CYCLES)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.write_docs and args.sizes:
        parser.error("--write-docs measures every default size: give no sizes with it")
    if args.write_docs:
        docs.check_sections(docs.BENCHMARKS_DOC, [SECTION])
    sizes = tuple(args.sizes) or SIZES
    with upstream_server(args.upstream) as address:
        servers = FunctionServers({UPSTREAM: address}, development_timeout=120)
        try:
            servers.start([NAME, UPSTREAM])
            load_before = os.getloadavg()[0]
            rows = [measure(count, servers, args.cycles) for count in sizes]
            load_after = os.getloadavg()[0]
        finally:
            servers.close()
    command = " ".join(
        [docs.script_command(__file__), "--upstream DIR", *map(str, args.sizes)]
        + ([f"--cycles {args.cycles}"] if args.cycles != CYCLES else [])
    )
    text = "\n\n".join(
        [
            f"### {TITLE}",
            provenance(command, load_before, load_after)
            + f" Median of {args.cycles} alternating cycles.",
            table(rows),
        ]
    )
    print(text)
    if args.write_docs:
        docs.write_sections(docs.BENCHMARKS_DOC, {SECTION: text})
    return 0 if all(r["ratio"] <= 0.5 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
