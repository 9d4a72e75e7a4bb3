"""Fleet scale on the real control plane: one ModelCache fanned out over N clusters.

`modelfleet-scale-bench --clusters 20,100,300,1000` starts a fresh control plane for each N
(Crossplane core, provider-kubernetes, the four functions, as the e2e suite does), registers N
InferenceClusters that all reach one workload API server, each through its own
ClusterProviderConfig and workload namespace (as the issue's measurements did), waits for
them, watches the idle fleet's CPU for a minute (what its routine polling costs anyway), then
applies one ModelCache matching all N and measures, from `kubectl apply` to Ready:
wall time, the CPU the control plane spent (kube-apiserver + etcd + Crossplane + provider) and
the CPU the functions spent. Then it deletes the cache and measures until nothing of it is left
on either side. It prints one markdown table row per N.

With `--steady-minutes M` it first watches the Ready cache for M minutes and says, on standard
error, how many calls compose-model-cache answered for the cache and its shards meanwhile,
how many of them carried content it had been sent before, and how many it answered from a
kept response (its "Replays" log line): whether a fleet at steady state is answered without
deciding. `--keep-requests` also keeps every request it was sent (functions.trace_file's
folder `requests`), to compare them.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..docs_sections import BENCHMARKS_DOC, write_sections
from ..realcp import SHARED_REALCP_DIR, realcp_binary
from .crossplane import CROSSPLANE_NAMESPACE
from .fleet import condition
from .functions import trace_file
from .kube import resource_path
from .packages import FUNCTIONS
from .processes import Processes, wait_for
from .stack import RealControlPlane, link_binaries, start_control_plane
from .steady import calls_in_window, replays_beside_trace
from .workload import RWX_PROVISIONER, create, provider_config_object

Json = dict[str, Any]
NAMESPACE = "bench"
CACHE = "qwen3-0-6b"
LABEL = {"modelfleet.io/bench": "scale"}
STORAGE_CLASS = "bench-rwx"
# What the issue counts as the control plane's CPU; the workload side is played by stand-ins.
CONTROL_PLANE = (
    "control-plane-kube-apiserver",
    "control-plane-etcd",
    "crossplane",
    "provider-kubernetes",
)
# Objects per `kubectl apply`, and how long one may take: an API server busy with a large
# fleet answers slowly, and a chunk of 100 once took over two minutes.
CHUNK = 25
APPLY_TIMEOUT = 900
SECTION = "modelfleet-scale-bench"  # of docs/benchmarks.md
IC_PATH = resource_path("modelfleet.io/v1alpha1", "inferenceclusters")
MC_PATH = resource_path("modelfleet.io/v1alpha1", "modelcaches", NAMESPACE, CACHE)
# The cache's Objects are in its namespace: a list of every namespace's (the fleet's five per
# InferenceCluster among them) took minutes on a saturated API server at 1000 clusters.
OBJECTS = resource_path("kubernetes.m.crossplane.io/v1alpha1", "objects", NAMESPACE)
SHARDS = resource_path("modelfleet.io/v1alpha1", "modelcacheshards", NAMESPACE)
# How long the registered fleet is watched doing nothing but its routine polling, before the
# cache is applied: what the fleet costs anyway, so the cache's own cost can be told from it.
IDLE_SECONDS = 60


def cpu_seconds(processes: Processes, names: tuple[str, ...]) -> float:
    """User + system CPU of the named processes and everything in their process groups
    (children that ended included); for a `podman run`, its container's first process too."""
    named = [p for p in processes.started if p.name in names]
    groups = {p.popen.pid for p in named} | {p.container_pid for p in named if p.container_pid}
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        # After the command: state, ppid, pgrp, ..., utime, stime, and the same of children
        # it has waited for (12th to 15th): a child that ended counts through its parent.
        if int(fields[2]) in groups or int(stat.parent.name) in groups:
            total += sum(int(f) for f in fields[11:15])
    return total / ticks


@dataclass
class ScaleRow:
    clusters: int
    stagings: int
    crossplane: str
    clusters_ready_s: float
    ready_s: float
    control_plane_cpu_s: float
    functions_cpu_s: float
    deleted_s: float | None
    # Control-plane CPU per second while the registered fleet sat idle (its routine polling).
    idle_cpu_per_s: float = 0.0
    # Set when the cache did not turn Ready within the limit: how far it got, and why.
    not_ready: str = ""
    # The machine's 15-minute load average when the cache was measured: what else ran.
    load: float = field(default_factory=lambda: os.getloadavg()[2])

    @property
    def per_staging_s(self) -> float:
        return self.control_plane_cpu_s / max(self.stagings, 1)

    @property
    def per_staging_above_idle_s(self) -> float:
        """What staging added to what the fleet costs anyway over the same time."""
        above = self.control_plane_cpu_s - self.idle_cpu_per_s * self.ready_s
        return max(above, 0.0) / max(self.stagings, 1)

    HEADER = (
        "| N | cluster stagings | Crossplane | clusters Ready | idle fleet CPU "
        "| cache: time to Ready | control-plane CPU | per staging | per staging above idle "
        "| functions CPU | cache deleted | load |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|"
    )

    def markdown(self) -> str:
        ready = (
            f"not Ready after {self.ready_s:.0f} s: {self.not_ready}"
            if self.not_ready
            else f"{self.ready_s:.0f} s"
        )
        deleted = "not measured" if self.deleted_s is None else f"{self.deleted_s:.0f} s"
        return (
            f"| {self.clusters} | {self.stagings} | {self.crossplane} "
            f"| {self.clusters_ready_s:.0f} s | {self.idle_cpu_per_s:.2f} s/s | {ready} "
            f"| {self.control_plane_cpu_s:.0f} s | {self.per_staging_s:.2f} s "
            f"| {self.per_staging_above_idle_s:.2f} s "
            f"| {self.functions_cpu_s:.1f} s | {deleted} | {self.load:.1f} |"
        )


def _apply_chunked(plane: RealControlPlane, objects: list[Json]) -> None:
    for start in range(0, len(objects), CHUNK):
        chunk = yaml.safe_dump_all(objects[start : start + CHUNK])
        plane.client.kubectl(
            "apply", "--server-side", "-f", "-", stdin=chunk, timeout=APPLY_TIMEOUT
        )


def _say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def register_clusters(plane: RealControlPlane, n: int) -> None:
    """N InferenceClusters on one workload API server, each through its own provider config."""
    fleet = plane.clusters.start("fleet")
    create(
        fleet.client,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": STORAGE_CLASS},
            "provisioner": RWX_PROVISIONER,
        },
        "storageclasses",
    )
    secret = "fleet-kubeconfig"
    plane.clusters.kubeconfig_secret(fleet, CROSSPLANE_NAMESPACE, secret, "kubeconfig")
    names = [f"bench-{i:04d}" for i in range(n)]
    configs = [provider_config_object(name, secret) for name in names]
    clusters = [
        {
            "apiVersion": "modelfleet.io/v1alpha1",
            "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": LABEL},
            "spec": {
                "connection": {"providerConfigName": name},
                "workloadNamespace": name,  # one API server: a namespace per cluster
                "storage": {"storageClassName": STORAGE_CLASS},
            },
        }
        for name in names
    ]
    _apply_chunked(plane, configs)
    _apply_chunked(plane, clusters)

    def all_ready() -> bool:
        plane.check_alive()
        items = plane.client.list(IC_PATH)
        ready = sum(condition(i, "Ready").get("status") == "True" for i in items)
        _say(f"{ready}/{n} InferenceClusters Ready")
        return ready == n

    wait_for(all_ready, what=f"{n} InferenceClusters Ready", timeout=3600, every=10)


def model_cache() -> Json:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": CACHE, "namespace": NAMESPACE},
        "spec": {
            "source": "HuggingFace",
            "huggingFace": {"repo": "Qwen/Qwen3-0.6B"},
            "sizeGiB": 5,
            "clusterSelector": {"matchLabels": LABEL},
        },
    }


def how_far(plane: RealControlPlane, n: int) -> str:
    """Where a cache that is not Ready stands: clusters Ready, and Crossplane's word on it."""
    cache = plane.client.get(MC_PATH) or {}
    rows = (cache.get("status") or {}).get("clusters") or []
    ready = sum(r.get("phase") == "Ready" for r in rows)
    synced = condition(cache, "Synced")
    why = f"; Synced {synced.get('reason')}: {synced.get('message', '')[:160]}" if synced else ""
    return f"{ready}/{n} clusters Ready, {len(rows)} rows{why}".replace("|", "/")


def cache_ready(plane: RealControlPlane, n: int) -> bool:
    plane.check_alive()
    cache = plane.client.get(MC_PATH) or {}
    rows = (cache.get("status") or {}).get("clusters") or []
    ready = sum(r.get("phase") == "Ready" for r in rows)
    _say(f"ModelCache: {ready}/{n} clusters Ready ({len(rows)} rows)")
    return ready == n and condition(cache, "Ready").get("status") == "True"


def nothing_of_the_cache_left(plane: RealControlPlane) -> bool:
    fleet = plane.clusters.clusters["fleet"].client
    objects = len(plane.client.list(OBJECTS, labelSelector="modelfleet.io/modelcache"))
    shards = len(plane.client.list(SHARDS))
    claims = len(fleet.list(resource_path("v1", "persistentvolumeclaims")))
    jobs = len(fleet.list(resource_path("batch/v1", "jobs")))
    _say(f"left: {shards} shards, {objects} Objects of the cache, {claims} claims, {jobs} Jobs")
    return plane.client.get(MC_PATH) is None and shards == objects == claims == jobs == 0


def cpu_by_process(processes: Processes) -> dict[str, float]:
    return {name: cpu_seconds(processes, (name,)) for name in (*CONTROL_PLANE, *FUNCTIONS)}


def say_where_cpu_went(what: str, before: dict[str, float], after: dict[str, float]) -> None:
    """The CPU each process spent meanwhile, printed beside the progress lines."""
    spent = ", ".join(f"{name} {after[name] - before[name]:.0f} s" for name in before)
    _say(f"CPU {what}: {spent}")


CACHE_FUNCTION = "compose-model-cache"


def watch_steady_state(plane: RealControlPlane, seconds: float) -> None:
    """Watch the Ready cache for `seconds`; say what compose-model-cache answered meanwhile,
    minute by minute (between its "Replays" lines) and over the whole window."""
    log = plane.processes.named(CACHE_FUNCTION).log
    trace = trace_file(plane.work, CACHE_FUNCTION)
    start = time.time()
    _say(f"watching the Ready cache for {seconds:.0f} s")
    time.sleep(seconds)
    end = time.time()
    for said in replays_beside_trace(log, trace, start, end):
        _say(f"{CACHE_FUNCTION} in {said}")
    _say(f"in all {end - start:.0f} s: {calls_in_window(trace, start, end).line()}")


def measure(
    n: int,
    work: Path,
    crossplane_version: str,
    limit: float,
    *,
    steady_seconds: float = 0,
    keep_requests: bool = False,
) -> ScaleRow:
    bins = link_binaries(work / "bin")
    plane = start_control_plane(
        bins, SHARED_REALCP_DIR, work, crossplane_poll="1m", provider_poll="15s"
    )
    if keep_requests:
        kept = trace_file(plane.work, CACHE_FUNCTION).parent / "requests"
        kept.mkdir(exist_ok=True)
        kept.chmod(0o777)  # written by the functions' non-root user
    try:
        started = time.monotonic()
        register_clusters(plane, n)
        clusters_ready = time.monotonic() - started
        plane.client.kubectl("create", "namespace", NAMESPACE)
        idle_before = cpu_seconds(plane.processes, CONTROL_PLANE)
        _say(f"watching the idle fleet for {IDLE_SECONDS} s")
        time.sleep(IDLE_SECONDS)
        idle = (cpu_seconds(plane.processes, CONTROL_PLANE) - idle_before) / IDLE_SECONDS
        each_before = cpu_by_process(plane.processes)
        cp_before = cpu_seconds(plane.processes, CONTROL_PLANE)
        fn_before = cpu_seconds(plane.processes, FUNCTIONS)
        started = time.monotonic()
        plane.apply(model_cache())
        try:
            wait_for(lambda: cache_ready(plane, n), what="the cache Ready", timeout=limit, every=10)
        except TimeoutError:
            return ScaleRow(
                n, n, crossplane_version, clusters_ready, time.monotonic() - started,
                cpu_seconds(plane.processes, CONTROL_PLANE) - cp_before,
                cpu_seconds(plane.processes, FUNCTIONS) - fn_before,
                None, idle, not_ready=how_far(plane, n),
            )  # fmt: skip
        ready = time.monotonic() - started
        say_where_cpu_went("to Ready", each_before, cpu_by_process(plane.processes))
        cp_cpu = cpu_seconds(plane.processes, CONTROL_PLANE) - cp_before
        fn_cpu = cpu_seconds(plane.processes, FUNCTIONS) - fn_before
        if steady_seconds:
            watch_steady_state(plane, steady_seconds)
        started = time.monotonic()
        plane.client.delete(MC_PATH)
        wait_for(
            lambda: nothing_of_the_cache_left(plane),
            what="nothing of the cache left",
            timeout=3600,
            every=10,
        )
        deleted = time.monotonic() - started
        return ScaleRow(
            n, n, crossplane_version, clusters_ready, ready, cp_cpu, fn_cpu, deleted, idle
        )  # fmt: skip
    finally:
        plane.stop()


def crossplane_version() -> str:
    out = subprocess.run(
        [str(realcp_binary("crossplane-core")), "--version"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="modelfleet-scale-bench", description=__doc__)
    parser.add_argument(
        "--clusters", default="20,100,300,1000", help="fleet sizes, comma-separated"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/modelfleet-scale"))
    parser.add_argument(
        "--write-docs", action="store_true", help=f"write the table into {BENCHMARKS_DOC.name}"
    )
    parser.add_argument(
        "--limit-minutes", type=float, default=60, help="give up on a cache not Ready by then"
    )
    parser.add_argument(
        "--steady-minutes",
        type=float,
        default=0,
        help="watch the Ready cache this long and say what compose-model-cache answered",
    )
    parser.add_argument(
        "--keep-requests",
        action="store_true",
        help="keep every request compose-model-cache was sent (WORK/nN/calls/requests)",
    )
    args = parser.parse_args(argv)
    # Stopped with SIGTERM, still stop every process it started (atexit runs on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sizes = [int(s) for s in args.clusters.split(",") if s.strip()]
    version = crossplane_version()
    lines = [
        f"Produced by `uv run modelfleet-scale-bench --clusters {args.clusters} "
        f"--limit-minutes {args.limit_minutes:g} --write-docs` "
        f"on {time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the start; Crossplane {version}.",
        "",
        ScaleRow.HEADER,
    ]
    print("\n".join(lines), flush=True)
    for n in sizes:
        row = measure(
            n,
            args.work / f"n{n}",
            version,
            args.limit_minutes * 60,
            steady_seconds=args.steady_minutes * 60,
            keep_requests=args.keep_requests,
        )
        lines.append(row.markdown())
        print(lines[-1], flush=True)
        if args.write_docs:  # after every row: a long run stopped later keeps what it measured
            write_sections(BENCHMARKS_DOC, {SECTION: "\n".join(lines)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
