"""A connection lost and given back, on a registered fleet at rest (modelfleet-scale-bench).

Each probed cluster connects through a ClusterProviderConfig of its own (scale_fleet.py). The
connection is lost by pointing that config's kubeconfig Secret at an API server that is not
there, and given back by pointing it at the one it had. Each is timed from the patch to when
the cluster's InferenceCluster says so on `Connected`.
"""

from __future__ import annotations

import time
from typing import Any

import yaml

from .crossplane import CROSSPLANE_NAMESPACE
from .fleet import condition
from .kube import resource_path
from .scale_changes import (
    IC_PATH,
    LIMIT_SECONDS,
    PROBE_LABEL,
    ChangeSeen,
    probed_clusters,
    say,
    wait_quietly,
)
from .stack import RealControlPlane

Json = dict[str, Any]
UNREACHABLE_SECRET = "unreachable-kubeconfig"
PROBE_SELECTOR = ",".join(f"{key}={value}" for key, value in PROBE_LABEL.items())
PROVIDER_CONFIGS = resource_path("kubernetes.m.crossplane.io/v1alpha1", "clusterproviderconfigs")


def unreachable_kubeconfig() -> str:
    """A kubeconfig for an API server that is not there (a closed loopback port)."""
    cluster = {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "gone", "cluster": cluster}],
            "users": [{"name": "gone", "user": {"token": "none"}}],
            "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "gone"}}],
            "current-context": "gone",
        }
    )


def newly_connected_as(
    inference_clusters: list[Json], status: str, started: dict[str, float], now: float
) -> dict[str, float]:
    """Seconds since `started` for each started cluster whose `Connected` reads `status`."""
    return {
        name: now - started[name]
        for ic in inference_clusters
        if (name := ic["metadata"]["name"]) in started
        and condition(ic, "Connected").get("status") == status
    }


def _secret_ref(plane: RealControlPlane, provider_config: str) -> Json:
    found = plane.client.get(f"{PROVIDER_CONFIGS}/{provider_config}")
    if found is None:
        raise RuntimeError(f"ClusterProviderConfig {provider_config} is not there")
    return dict(found["spec"]["credentials"]["secretRef"])


def _point_at(plane: RealControlPlane, secret_refs: dict[str, Json]) -> dict[str, float]:
    started: dict[str, float] = {}
    for name, secret_ref in secret_refs.items():
        plane.client.merge_patch(
            f"{PROVIDER_CONFIGS}/{name}", {"spec": {"credentials": {"secretRef": secret_ref}}}
        )
        started[name] = time.time()
    return started


def _time_until(
    plane: RealControlPlane, started: dict[str, float], status: str, what: str, limit: float
) -> list[float | None]:
    seen: dict[str, float] = {}

    def all_seen() -> bool:
        plane.check_alive()
        listed = plane.client.list(IC_PATH, labelSelector=PROBE_SELECTOR)
        for name, seconds in newly_connected_as(listed, status, started, time.time()).items():
            seen.setdefault(name, seconds)
        say(f"{what}: {len(seen)}/{len(started)} InferenceClusters say so")
        return len(seen) == len(started)

    wait_quietly(all_seen, what, limit)
    return [seen.get(name) for name in started]


def connection_lost_and_back(
    plane: RealControlPlane, n: int, limit: float = LIMIT_SECONDS
) -> list[ChangeSeen]:
    """The probed clusters' connections lost, then given back once every loss is seen or
    `limit` has passed; each waited for `limit` seconds."""
    plane.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": UNREACHABLE_SECRET, "namespace": CROSSPLANE_NAMESPACE},
            "stringData": {"kubeconfig": unreachable_kubeconfig()},
        }
    )
    clusters = probed_clusters(n)
    own_refs = {name: _secret_ref(plane, name) for name in clusters}
    lost_at = _point_at(plane, {name: {"name": UNREACHABLE_SECRET} for name in clusters})
    lost = _time_until(plane, lost_at, "False", "connection lost", limit)
    back_at = _point_at(plane, own_refs)
    back = _time_until(plane, back_at, "True", "connection back", limit)
    return [
        ChangeSeen(n, "connection lost → the InferenceCluster's `Connected=False`", lost, limit),
        ChangeSeen(n, "connection back → the InferenceCluster's `Connected=True`", back, limit),
    ]
