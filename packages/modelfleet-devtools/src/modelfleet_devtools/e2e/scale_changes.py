"""How soon a change on a cluster is seen, on a registered fleet at rest (modelfleet-scale-bench).

Changes, each on PROBED clusters spread over the fleet, timed from when the change
happened on the cluster side to when the control plane says so:

- a hydration Job completing → its cluster's row Ready: a small ModelCache selecting only the
  probed clusters stages to them; each Job's `completionTime` (set by the kubelet stand-in on
  the workload API server) against when its row was first read Ready;
- a serving group turning Available → its row of `kubectl get md` Ready: a ModelDeployment
  places one replica on each probed cluster (given a node pool for it) while the stand-in
  says no node has room; then it has room, and each Deployment's `Available` transition
  against when the ModelDeployment's row for its cluster was first read Ready;
- a connection lost, then given back → the InferenceCluster's `Connected` (scale_connection.py).

Rows and conditions are read every POLL_SECONDS, so each time is known to within that.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from modelfleet_contracts.recheck import RECHECK_SETTLED

from .kube import resource_path
from .processes import wait_for
from .stack import RealControlPlane

Json = dict[str, Any]
PROBED = 5
POLL_SECONDS = 2
# How long each change may take to be seen before the clusters left are reported unseen: the
# provider's poll (RECHECK_SETTLED's round) with its 10 % jitter, and a minute more.
LIMIT_SECONDS = round(RECHECK_SETTLED.total_seconds() * 1.1) + 60
PROBE_LABEL = {"modelfleet.io/bench-probe": "changes"}
PROBE_CACHE = "probe"
PROBE_DEPLOYMENT = "probe"
# One node of one GPU per probed cluster: the probe deployment's replica fits on it alone.
PROBE_POOL = {"name": "bench", "nodeCount": 1, "gpu": {"count": 1, "memoryGiB": 24}}
IC_PATH = resource_path("modelfleet.io/v1alpha1", "inferenceclusters")


@dataclass
class ChangeSeen:
    """One kind of change at one fleet size: seconds until seen, per probed cluster (None:
    not seen within `limit`)."""

    clusters: int
    what: str
    seconds: list[float | None]
    limit: float = LIMIT_SECONDS

    HEADER = (
        "| N | change on a cluster → where it shows | clusters | median | worst |\n"
        "|---|---|---|---|---|"
    )

    def markdown(self) -> str:
        # One not seen counts as later than the limit (and than any seen).
        times = [float("inf") if s is None else s for s in self.seconds]

        def text(value: float) -> str:
            return f"over {self.limit:.0f} s" if value == float("inf") else f"{value:.0f} s"

        median = text(statistics.median(times)) if times else "none"
        worst = text(max(times)) if times else "none"
        return f"| {self.clusters} | {self.what} | {len(times)} | {median} | {worst} |"


def say(message: str) -> None:
    """A progress line on standard error, timestamped (the benchmark's output is its table)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def small_model_cache(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    """The benchmark's ModelCache: a 0.6B model on the clusters carrying `labels`."""
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "source": "HuggingFace",
            "huggingFace": {"repo": "Qwen/Qwen3-0.6B"},
            "sizeGiB": 5,
            "clusterSelector": {"matchLabels": dict(labels)},
        },
    }


def probed_clusters(n: int) -> list[str]:
    step = max(n // PROBED, 1)
    return [f"bench-{i:04d}" for i in range(0, n, step)][:PROBED]


def stamp(value: object) -> float | None:
    """A Kubernetes timestamp as seconds since the epoch (None: not a timestamp)."""
    if not isinstance(value, str):
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def wait_quietly(probe: Callable[[], bool], what: str, limit: float) -> None:
    """Waits until `probe` or `limit` seconds; a change not seen by then is reported unseen."""
    with contextlib.suppress(TimeoutError):
        wait_for(probe, what=what, timeout=limit, every=POLL_SECONDS)


def _probe_cache_path(namespace: str) -> str:
    return resource_path("modelfleet.io/v1alpha1", "modelcaches", namespace, PROBE_CACHE)


def job_complete_to_row(plane: RealControlPlane, n: int, namespace: str) -> ChangeSeen:
    """Leaves the probe cache Ready on the probed clusters, for serving_available_to_md."""
    clusters = probed_clusters(n)
    for name in clusters:
        plane.client.merge_patch(
            f"{IC_PATH}/{name}",
            {"metadata": {"labels": PROBE_LABEL}, "spec": {"nodePools": [PROBE_POOL]}},
        )
    cache_path = _probe_cache_path(namespace)
    plane.apply(small_model_cache(PROBE_CACHE, namespace, PROBE_LABEL))
    seen_ready: dict[str, float] = {}

    def all_rows_ready() -> bool:
        plane.check_alive()
        cache = plane.client.get(cache_path) or {}
        now = time.time()
        for row in (cache.get("status") or {}).get("clusters") or []:
            if row.get("phase") == "Ready":
                seen_ready.setdefault(str(row.get("name")), now)
        say(f"probe cache: {len(seen_ready)}/{len(clusters)} rows Ready")
        return len(seen_ready) == len(clusters)

    wait_quietly(all_rows_ready, "the probe cache's rows Ready", LIMIT_SECONDS)
    fleet = plane.clusters.clusters["fleet"].client
    done: dict[str, float] = {}
    for job in fleet.list(
        resource_path("batch/v1", "jobs"), labelSelector=f"modelfleet.io/modelcache={PROBE_CACHE}"
    ):
        completed = stamp((job.get("status") or {}).get("completionTime"))
        if completed is not None:
            done[job["metadata"]["namespace"]] = completed
    seconds = [
        max(seen_ready[c] - done[c], 0.0) if c in seen_ready and c in done else None
        for c in clusters
    ]
    return ChangeSeen(n, "hydration Job complete → its row in `kubectl get mc` Ready", seconds)


def probe_deployment(namespace: str, replicas: int) -> Json:
    """One single-node replica of the probe cache's model per probed cluster (spread: each
    probed cluster's one-node pool fits one)."""
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": PROBE_DEPLOYMENT, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "clusterSelector": {"matchLabels": dict(PROBE_LABEL)},
            "modelCacheRef": {"name": PROBE_CACHE},
            "resources": {"gpusPerNode": 1, "vramGiB": 10},
            "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0", "port": 8000},
        },
    }


def _rows(plane: RealControlPlane, path: str) -> list[Json]:
    return list(((plane.client.get(path) or {}).get("status") or {}).get("clusters") or [])


def serving_available_to_md(plane: RealControlPlane, n: int, namespace: str) -> ChangeSeen:
    """Needs the probe cache Ready on the probed clusters (job_complete_to_row); deletes the
    probe deployment, then the cache."""
    clusters = probed_clusters(n)
    workload = plane.clusters.clusters["fleet"]
    deployments = resource_path("apps/v1", "deployments")
    md_path = resource_path(
        "modelfleet.io/v1alpha1", "modeldeployments", namespace, PROBE_DEPLOYMENT
    )
    workload.stand_in.room = False
    plane.apply(probe_deployment(namespace, len(clusters)))

    def placed_not_available() -> bool:
        plane.check_alive()
        serving = {d["metadata"]["namespace"] for d in workload.client.list(deployments)}
        placed = {r.get("name") for r in _rows(plane, md_path) if r.get("replicas")}
        say(f"probe deployment: {len(serving)} Deployments, {len(placed)} rows placed")
        return serving >= set(clusters) and placed >= set(clusters)

    seen_ready: dict[str, float] = {}

    def all_rows_ready() -> bool:
        plane.check_alive()
        now = time.time()
        for row in _rows(plane, md_path):
            if row.get("phase") == "Ready":
                seen_ready.setdefault(str(row.get("name")), now)
        say(f"probe deployment: {len(seen_ready)}/{len(clusters)} rows Ready")
        return len(seen_ready) >= len(clusters)

    try:
        wait_quietly(placed_not_available, "the probe deployment placed", LIMIT_SECONDS)
    finally:
        workload.stand_in.room = True  # its next pass makes every serving group Available
    wait_quietly(all_rows_ready, "the probe deployment's rows Ready", LIMIT_SECONDS)
    available: dict[str, float] = {}
    for deployment in workload.client.list(deployments):
        for c in (deployment.get("status") or {}).get("conditions") or []:
            if c.get("type") == "Available" and c.get("status") == "True":
                when = stamp(c.get("lastTransitionTime"))
                if when is not None:
                    available[deployment["metadata"]["namespace"]] = when
    seconds = [
        max(seen_ready[c] - available[c], 0.0) if c in seen_ready and c in available else None
        for c in clusters
    ]
    plane.client.delete(md_path)
    wait_quietly(
        lambda: not workload.client.list(deployments),
        "the probe deployment's serving groups deleted",
        LIMIT_SECONDS,
    )
    plane.client.delete(_probe_cache_path(namespace))
    return ChangeSeen(n, "serving group Available → its row in `kubectl get md` Ready", seconds)


def changes_seen(plane: RealControlPlane, n: int, namespace: str) -> list[ChangeSeen]:
    """The Job and serving changes, in turn, on the fleet at rest."""
    return [
        job_complete_to_row(plane, n, namespace),
        serving_available_to_md(plane, n, namespace),
    ]
