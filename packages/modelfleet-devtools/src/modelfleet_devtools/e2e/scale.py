"""Fleet scale on the real control plane: one ModelCache fanned out over N clusters.

`modelfleet-scale-bench --clusters 20,100,300,1000` starts a fresh control plane for each N
(Crossplane core, provider-kubernetes, the four functions, as the e2e suite does), registers N
InferenceClusters that all reach one workload API server, each in its own workload namespace
and through one of a few shared ClusterProviderConfigs (scale_fleet.py), waits for them to be
Ready and at rest, watches the idle fleet's CPU by process for `--idle-minutes` (by default one
round of its routine work), then applies one ModelCache matching all N and measures, from
`kubectl apply` to Ready: wall time, the CPU the control plane spent (kube-apiserver + etcd +
Crossplane + provider) and the CPU the functions spent.
Then it deletes the cache and measures until nothing of it is left on either side. A kubelet
stand-in (kubelet.py) plays the workload side, as no machine runs 1000 kubelets. It prints
one markdown table row per N; at `--changes-at` sizes, how soon changes on a cluster are seen
on the fleet at rest (scale_changes.py). With `--side-by-side` the sizes' idle windows run at
once, each plane in a network namespace of its own, and their stagings one after another
(scale_side_by_side.py).

With `--steady-minutes M` it first watches the Ready cache for M minutes and says, on standard
error, how many calls compose-model-cache answered for the cache and its shards meanwhile,
how many of them carried content it had been sent before, and how many it answered from a
kept response (its "Replays" log line): whether a fleet at steady state is answered without
deciding. `--keep-requests` also keeps every request it was sent (functions.trace_file's
folder `requests`), to compare them.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from modelfleet_contracts.recheck import RECHECK_SETTLED

from ..docs_sections import BENCHMARKS_DOC, write_sections
from ..realcp import SHARED_REALCP_DIR
from .fleet import condition
from .functions import trace_file
from .kube import resource_path
from .packages import FUNCTIONS
from .processes import Processes, wait_for
from .scale_args import bench_arguments
from .scale_audit import AuditLog, who_wrote
from .scale_changes import LIMIT_SECONDS, ChangeSeen, changes_seen, say, small_model_cache, stamp
from .scale_connection import connection_lost_and_back
from .scale_fleet import LABEL, register_clusters, wait_until_at_rest
from .scale_requests import busiest, read_request_counts
from .scale_rows import ScaleRow, cpu_seconds, crossplane_version, header
from .scale_side_by_side import (
    keep_row,
    namespace_for,
    network_namespaces,
    one_size,
    run_side_by_side,
    wait_for_turn,
)
from .stack import RealControlPlane, link_binaries, start_control_plane
from .steady import calls_in_window, replays_beside_trace

Json = dict[str, Any]
NAMESPACE = "bench"
CACHE = "qwen3-0-6b"
# What the issue counts as the control plane's CPU; the workload side is played by stand-ins.
CONTROL_PLANE = (
    "control-plane-kube-apiserver",
    "control-plane-etcd",
    "crossplane",
    "provider-kubernetes",
)
SECTION = "modelfleet-scale-bench"  # of docs/benchmarks.md
MC_PATH = resource_path("modelfleet.io/v1alpha1", "modelcaches", NAMESPACE, CACHE)
# The cache's Objects are in its namespace: a list of every namespace's (the fleet's five per
# InferenceCluster among them) took minutes on a saturated API server at 1000 clusters.
OBJECTS = resource_path("kubernetes.m.crossplane.io/v1alpha1", "objects", NAMESPACE)
SHARDS = resource_path("modelfleet.io/v1alpha1", "modelcacheshards", NAMESPACE)
# How long the registered fleet is watched doing nothing but its routine work, before the
# cache is applied: what the fleet costs anyway, so the cache's own cost can be told from it.
# That work comes round once per RECHECK_SETTLED (the provider's --poll, each InferenceCluster's
# settled recheck), starting from when each cluster was registered, which takes seconds for 20
# clusters and 12 minutes for 1000: a shorter window sees all of it, some or none by chance.
IDLE_MINUTES = RECHECK_SETTLED.total_seconds() / 60
# How often the cache's rows are read while it stages: when a row is first seen Ready is known
# to within this (and one GET).
ROW_POLL_SECONDS = 2


def model_cache() -> Json:
    return small_model_cache(CACHE, NAMESPACE, LABEL)


def how_far(plane: RealControlPlane, n: int) -> str:
    """Where a cache that is not Ready stands: clusters Ready, and Crossplane's word on it."""
    cache = plane.client.get(MC_PATH) or {}
    rows = (cache.get("status") or {}).get("clusters") or []
    ready = sum(r.get("phase") == "Ready" for r in rows)
    synced = condition(cache, "Synced")
    why = f"; Synced {synced.get('reason')}: {synced.get('message', '')[:160]}" if synced else ""
    return f"{ready}/{n} clusters Ready, {len(rows)} rows{why}".replace("|", "/")


def cache_ready(plane: RealControlPlane, n: int, seen_ready: dict[str, float]) -> bool:
    """Whether the cache is Ready; notes in `seen_ready` when each cluster's row was first
    seen Ready (wall-clock seconds)."""
    plane.check_alive()
    cache = plane.client.get(MC_PATH) or {}
    now = time.time()
    rows = (cache.get("status") or {}).get("clusters") or []
    for row in rows:
        if row.get("phase") == "Ready":
            seen_ready.setdefault(str(row.get("name")), now)
    ready = sum(r.get("phase") == "Ready" for r in rows)
    say(f"ModelCache: {ready}/{n} clusters Ready ({len(rows)} rows)")
    return ready == n and condition(cache, "Ready").get("status") == "True"


def job_to_row_seconds(plane: RealControlPlane, seen_ready: dict[str, float]) -> list[float]:
    """For each cluster, from its hydration Job's completionTime (set by the kubelet stand-in
    on the workload API server) to its row first seen Ready in the ModelCache: how soon a Job
    completing is seen. A cluster's workload namespace is its name (register_clusters)."""
    fleet = plane.clusters.clusters["fleet"].client
    delays = []
    for job in fleet.list(resource_path("batch/v1", "jobs")):
        cluster = job["metadata"]["namespace"]
        done = stamp((job.get("status") or {}).get("completionTime"))
        if done is not None and cluster in seen_ready:
            delays.append(max(seen_ready[cluster] - done, 0.0))
    return delays


def nothing_of_the_cache_left(plane: RealControlPlane) -> bool:
    fleet = plane.clusters.clusters["fleet"].client
    objects = len(plane.client.list(OBJECTS, labelSelector="modelfleet.io/modelcache"))
    shards = len(plane.client.list(SHARDS))
    claims = len(fleet.list(resource_path("v1", "persistentvolumeclaims")))
    jobs = len(fleet.list(resource_path("batch/v1", "jobs")))
    say(f"left: {shards} shards, {objects} Objects of the cache, {claims} claims, {jobs} Jobs")
    return plane.client.get(MC_PATH) is None and shards == objects == claims == jobs == 0


def cpu_by_process(processes: Processes) -> dict[str, float]:
    return {name: cpu_seconds(processes, (name,)) for name in (*CONTROL_PLANE, *FUNCTIONS)}


def idle_cpu_by_process(
    before: dict[str, float], after: dict[str, float], seconds: float
) -> dict[str, float]:
    """CPU seconds per second of each control-plane process (ScaleRow.IDLE_PROCESSES), the
    functions summed, between two cpu_by_process readings `seconds` apart."""
    rate = {name: (after[name] - before[name]) / seconds for name in before}
    shown = dict(zip(ScaleRow.IDLE_PROCESSES, CONTROL_PLANE, strict=False))
    return {
        **{short: rate[name] for short, name in shown.items()},
        "functions": sum(rate[name] for name in FUNCTIONS),
    }


def say_where_cpu_went(what: str, before: dict[str, float], after: dict[str, float]) -> None:
    """The CPU each process spent meanwhile, printed beside the progress lines."""
    spent = ", ".join(f"{name} {after[name] - before[name]:.0f} s" for name in before)
    say(f"CPU {what}: {spent}")


CACHE_FUNCTION = "compose-model-cache"


def watch_steady_state(plane: RealControlPlane, seconds: float) -> None:
    """Watch the Ready cache for `seconds`; say what compose-model-cache answered meanwhile,
    minute by minute (between its "Replays" lines) and over the whole window."""
    log = plane.processes.named(CACHE_FUNCTION).log
    trace = trace_file(plane.work, CACHE_FUNCTION)
    start = time.time()
    say(f"watching the Ready cache for {seconds:.0f} s")
    time.sleep(seconds)
    end = time.time()
    for said in replays_beside_trace(log, trace, start, end):
        say(f"{CACHE_FUNCTION} in {said}")
    say(f"in all {end - start:.0f} s: {calls_in_window(trace, start, end).line()}")


def measure(
    n: int,
    work: Path,
    crossplane_version: str,
    limit: float,
    *,
    changes: Callable[[ScaleRow], None] | None = None,
    connection_limit: float = LIMIT_SECONDS,
    idle_seconds: float = IDLE_MINUTES * 60,
    steady_seconds: float = 0,
    keep_requests: bool = False,
    hydrator_containers: bool = False,
    check_interval: str | None = None,
    before_staging: Callable[[], None] | None = None,
    audit: bool = False,
) -> ScaleRow:
    """One fleet size's row. With `changes`, the row is handed to it as soon as it is
    measured, then how soon changes are seen on the fleet at rest is measured into it. With
    `steady_seconds`, the Ready cache is first watched that long (watch_steady_state);
    `keep_requests` keeps every request compose-model-cache is sent. `before_staging` is
    called once the idle fleet has been watched, and the cache is applied when it returns.
    `audit` says who wrote what while the cache staged (scale_audit.py); `check_interval` is
    every cluster's spec.connection.checkInterval, else its default."""
    bins = link_binaries(work / "bin")
    audit_log = AuditLog.under(work / "audit") if audit else None
    plane = start_control_plane(
        bins, SHARED_REALCP_DIR, work, crossplane_poll="1m",
        apiserver_flags=audit_log.apiserver_flags() if audit_log else (),
    )  # fmt: skip
    if keep_requests:
        kept = trace_file(plane.work, CACHE_FUNCTION).parent / "requests"
        kept.mkdir(exist_ok=True)
        kept.chmod(0o777)  # written by the functions' non-root user
    try:
        started = time.monotonic()
        register_clusters(
            plane, n, hydrator_containers=hydrator_containers, check_interval=check_interval
        )
        clusters_ready = time.monotonic() - started
        wait_until_at_rest(plane, n)
        plane.client.kubectl("create", "namespace", NAMESPACE)
        asked_before = read_request_counts(plane.client)
        idle_before = cpu_by_process(plane.processes)
        say(f"watching the idle fleet for {idle_seconds:.0f} s")
        time.sleep(idle_seconds)
        idle_after = cpu_by_process(plane.processes)
        say_where_cpu_went("idle", idle_before, idle_after)
        asked = busiest(asked_before, read_request_counts(plane.client), idle_seconds)
        say(f"API server requests idle: {asked}")
        idle_by_process = idle_cpu_by_process(idle_before, idle_after, idle_seconds)
        if before_staging is not None:
            before_staging()
        asked_before = read_request_counts(plane.client)  # before any CPU reading of the staging
        each_before = cpu_by_process(plane.processes)
        cp_before = cpu_seconds(plane.processes, CONTROL_PLANE)
        fn_before = cpu_seconds(plane.processes, FUNCTIONS)
        started, staging_from = time.monotonic(), datetime.now(UTC)
        plane.apply(model_cache())
        seen_ready: dict[str, float] = {}
        not_ready = ""
        try:
            wait_for(
                lambda: cache_ready(plane, n, seen_ready),
                what="the cache Ready",
                timeout=limit,
                every=ROW_POLL_SECONDS,
            )
        except TimeoutError:
            not_ready = how_far(plane, n)
        ready = time.monotonic() - started
        say_where_cpu_went("to Ready", each_before, cpu_by_process(plane.processes))
        cp_cpu = cpu_seconds(plane.processes, CONTROL_PLANE) - cp_before
        fn_cpu = cpu_seconds(plane.processes, FUNCTIONS) - fn_before
        # Read after the CPU, so that this reading is not counted in it.
        asked = busiest(asked_before, read_request_counts(plane.client), n, unit=" per staging")
        say(f"API server requests to Ready: {asked}")
        if audit_log:
            wrote = who_wrote(audit_log.log, staging_from, datetime.now(UTC), n)
            say(f"API server writes to Ready, by client, per staging: {wrote}")
        job_to_row = job_to_row_seconds(plane, seen_ready)
        if steady_seconds and not not_ready:
            watch_steady_state(plane, steady_seconds)
        # A cache not Ready within the limit is deleted all the same: the fleet is then at
        # rest again, and how soon changes are seen there is still measured.
        started = time.monotonic()
        plane.client.delete(MC_PATH)
        wait_for(
            lambda: nothing_of_the_cache_left(plane),
            what="nothing of the cache left",
            timeout=3600,
            every=10,
        )
        deleted = time.monotonic() - started
        row = ScaleRow(
            n, n, crossplane_version, clusters_ready, ready, cp_cpu, fn_cpu, deleted,
            sum(idle_by_process[p] for p in ScaleRow.IDLE_PROCESSES[:-1]), idle_by_process,
            job_to_row, not_ready=not_ready,
        )  # fmt: skip
        if changes is not None:
            changes(row)
            row.changes = changes_seen(plane, n, NAMESPACE)
            row.changes += connection_lost_and_back(plane, n, connection_limit)
        return row
    finally:
        plane.stop()


def main(argv: list[str] | None = None) -> int:
    parser = bench_arguments(__doc__ or "", idle_minutes=IDLE_MINUTES)
    given = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(given)
    # Stopped with SIGTERM, still stop every process it started (atexit runs on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sizes = [int(s) for s in args.clusters.split(",") if s.strip()]
    changes_at = {int(s) for s in args.changes_at.split(",") if s.strip()}
    version = crossplane_version()
    lines = [
        header(given, version, hydrator_containers=args.hydrator_containers),
        "",
        ScaleRow.HEADER,
    ]
    print("\n".join(lines), flush=True)

    def report(row: ScaleRow, *, final: bool = True) -> None:
        table = [*lines, row.markdown()]
        changes = [c.markdown() for r in [*rows, row] for c in r.changes]
        if changes:
            table += ["", ChangeSeen.HEADER, *changes]
        idle = [r.idle_by_process_markdown() for r in [*rows, row]]
        table += ["", ScaleRow.IDLE_BY_PROCESS_HEADER, *idle]
        print("\n".join(table[2:]), flush=True)
        if final:
            rows.append(row)
            lines.append(row.markdown())
        if args.write_docs:  # after every row: a long run stopped later keeps what it measured
            write_sections(BENCHMARKS_DOC, {SECTION: "\n".join(table)})

    rows: list[ScaleRow] = []
    if args.side_by_side:
        with network_namespaces([namespace_for(n) for n in sizes]):
            for row in run_side_by_side(sizes, args.work / "turns", partial(one_size, args)):
                report(row)
        return 0
    for n in sizes:
        row = measure(
            n, args.work / f"n{n}", version, args.limit_minutes * 60,
            changes=(lambda r: report(r, final=False)) if n in changes_at else None,
            connection_limit=args.connection_limit_seconds,
            idle_seconds=args.idle_minutes * 60,
            steady_seconds=args.steady_minutes * 60, keep_requests=args.keep_requests,
            hydrator_containers=args.hydrator_containers, check_interval=args.check_interval,
            before_staging=(lambda: wait_for_turn(args.turn)) if args.turn else None,
            audit=args.audit,
        )  # fmt: skip
        if args.turn is not None:
            keep_row(args.turn, row)
        report(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
