"""The scale benchmark's fleet: N InferenceClusters on one workload API server, registered,
connected, and waited for until they are at rest."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import yaml
from modelfleet_contracts.recheck import RECHECK_LAST, breaker_holds_events

from .crossplane import CROSSPLANE_NAMESPACE
from .fleet import condition
from .kube import resource_path
from .processes import wait_for
from .scale_changes import probed_clusters, say
from .stack import RealControlPlane
from .workload import RWX_PROVISIONER, create, provider_config_object

Json = dict[str, Any]
LABEL = {"modelfleet.io/bench": "scale"}
STORAGE_CLASS = "bench-rwx"
IC_PATH = resource_path("modelfleet.io/v1alpha1", "inferenceclusters")
# How many ClusterProviderConfigs the clusters not probed share (provider_config_of).
PROVIDER_CONFIG_GROUPS = 10
# Objects per `kubectl apply`, and how long one may take: an API server busy with a large
# fleet answers slowly, and a chunk of 100 once took over two minutes.
CHUNK = 25
APPLY_TIMEOUT = 900
# Crossplane keeps an XR's circuit breaker open for its cooldown (recheck.BREAKER_COOLDOWN):
# a new fleet is at rest within this, and a minute later every cluster has asked for its
# settled recheck.
AT_REST_LIMIT = 600


def _apply_chunked(plane: RealControlPlane, objects: list[Json]) -> None:
    for start in range(0, len(objects), CHUNK):
        chunk = yaml.safe_dump_all(objects[start : start + CHUNK])
        plane.client.kubectl(
            "apply", "--server-side", "-f", "-", stdin=chunk, timeout=APPLY_TIMEOUT
        )


def provider_config_of(index: int, name: str, probed: set[str]) -> str:
    """The ClusterProviderConfig the cluster `name` (the `index`th) connects through: its own
    for a probed cluster (scale_changes breaks it alone), else one of PROVIDER_CONFIG_GROUPS.

    Shared because of how provider-kubernetes watches: each provider config gets its own
    informer per watched kind, listing that kind on the whole API server it reaches. On a real
    fleet that is the cluster's own claims and Jobs; here every cluster is a namespace of one
    API server, so N provider configs would each hold all N clusters' objects (N² in all; at
    N = 100 the provider held 1 GB), a cost no real fleet has. Through a few shared configs the
    benchmark's watches hold what a real fleet's would, a few times over."""
    return name if name in probed else f"bench-group-{index % PROVIDER_CONFIG_GROUPS}"


def register_clusters(
    plane: RealControlPlane, n: int, *, hydrator_containers: bool, check_interval: str | None = None
) -> None:
    """N InferenceClusters on one workload API server, each in its own workload namespace,
    connected through a few shared provider configs (provider_config_of). Their hydration
    Jobs run as hydrator containers with `hydrator_containers`, else the stand-in simulates
    them: a real fleet runs each cluster's hydrator on that cluster's nodes, all at once,
    where this machine starts about 13 containers a minute beside the control plane. Each
    cluster's connection is checked every `check_interval`, else at the XRD's default."""
    fleet = plane.clusters.start("fleet", hydrator_containers=hydrator_containers)
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
    probed = set(probed_clusters(n))
    connects = {name: provider_config_of(i, name, probed) for i, name in enumerate(names)}
    configs = [provider_config_object(pc, secret) for pc in sorted(set(connects.values()))]
    connection: Json = {"checkInterval": check_interval} if check_interval else {}
    clusters = [
        {
            "apiVersion": "modelfleet.io/v1alpha1",
            "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": LABEL},
            "spec": {
                "connection": {"providerConfigName": connects[name], **connection},
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
        say(f"{ready}/{n} InferenceClusters Ready")
        return ready == n

    wait_for(all_ready, what=f"{n} InferenceClusters Ready", timeout=3600, every=10)


def wait_until_at_rest(plane: RealControlPlane, n: int) -> None:
    """Wait until no InferenceCluster's circuit breaker holds its events, then a minute more.

    Crossplane v2.3.4 opens it on every new InferenceCluster (the events its composed
    Objects make as they are created, each counted several times: benchmarks.md, "Open"),
    and while it holds the cluster's events the cluster is rechecked once per
    connection.checkInterval (20 s) instead of once an hour (compose-inference-cluster's core,
    edge/outcome.events_delivered): the cost of registering, not of a fleet at rest. Past
    AT_REST_LIMIT it says so and goes on."""

    def at_rest() -> bool:
        plane.check_alive()
        now = datetime.now(UTC)
        held = sum(
            breaker_holds_events(condition(i, "Responsive"), now)
            for i in plane.client.list(IC_PATH)
        )
        say(f"{held}/{n} InferenceClusters' events held by Crossplane's circuit breaker")
        return held == 0

    try:
        wait_for(at_rest, what="the fleet at rest", timeout=AT_REST_LIMIT, every=10)
    except TimeoutError:
        say(f"some circuit breakers still held events after {AT_REST_LIMIT} s; measuring")
        return
    time.sleep(RECHECK_LAST.total_seconds())  # each cluster's last minute-long recheck
