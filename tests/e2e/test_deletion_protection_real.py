"""Deleting parts of a serving fleet on the real control plane, Crossplane's webhooks on: what
a platform engineer's `kubectl delete` does to the quickstart while it serves.

Each scenario starts from a fresh quickstart, Ready (its cache staged on `gke-dev`, its
deployment serving from it), and ends with the fleet gone and nothing left behind.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from modelfleet_devtools.e2e.fleet import (
    ServedFleet,
    apply_fleet,
    condition,
    delete_fleet,
    request_deletion,
    wait_for_nothing_left,
)
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
CLUSTER = "gke-dev"
REFUSAL = 'admission webhook "nousages.protection.crossplane.io" denied the request'
DELETION_ATTEMPT = "usage.crossplane.io/deletion-attempt-with-policy"  # set by the webhook
WATCHED_FOR = 30  # seconds a refused deletion is watched for any effect


class Quickstart(ServedFleet):
    def workload(self) -> Any:
        return self.plane.clusters.clusters[CLUSTER].client

    def xrs(self, kind: str) -> list[Json]:
        return [o for o in self.objects if o["kind"] == kind]

    def ready(self, xr: Json) -> bool:
        return condition(self.get(xr), "Ready").get("status") == "True"

    def serving(self) -> bool:
        """The deployment is Ready and its Deployments on the cluster have every pod ready."""
        deployments = self.workload().list(resource_path("apps/v1", "deployments"))
        return (
            self.ready(self.deployment)
            and bool(deployments)
            and all(
                (d.get("status") or {}).get("readyReplicas") == d["spec"].get("replicas")
                for d in deployments
            )
        )

    def claims(self) -> list[Json]:
        return list(self.workload().list(resource_path("v1", "persistentvolumeclaims")))

    def everything_ready(self) -> bool:
        self.plane.check_alive()
        return all(self.ready(o) for o in self.objects if o["kind"] != "Secret")

    def gone(self, xr: Json) -> bool:
        return not self.get(xr)

    def kubectl_delete(self, xr: Json) -> tuple[int, str]:
        """`kubectl delete <kind> <name>` as a user types it: exit code and what it printed."""
        meta = xr["metadata"]
        namespace = ["-n", meta["namespace"]] if meta.get("namespace") else []
        kind = f"{xr['kind'].lower()}.modelfleet.io"
        result = self.plane.client.run_kubectl(
            "delete", kind, meta["name"], *namespace, "--wait=false", timeout=60
        )
        return result.returncode, result.stdout + result.stderr


def _deleting(obj: Json) -> bool:
    return "deletionTimestamp" in obj["metadata"]


@pytest.fixture
def quickstart(real_control_plane: RealControlPlane) -> Iterator[Quickstart]:
    plane = real_control_plane
    fleet = Quickstart(plane, apply_fleet(plane, EXAMPLES_DIR / "quickstart"))
    try:
        wait_for(fleet.everything_ready, what="the quickstart Ready", timeout=300, every=3)
        yield fleet
    finally:
        delete_fleet(plane, fleet.objects)
        wait_for_nothing_left(plane)
        plane.clusters.discard(CLUSTER)  # the next scenario starts from a fresh cluster


def test_deleting_a_cache_a_replica_serves_from_is_refused_and_serving_goes_on(
    quickstart: Quickstart,
) -> None:
    claims = {c["metadata"]["uid"] for c in quickstart.claims()}
    assert claims and quickstart.serving()
    replica = quickstart.plane.client.list(
        resource_path("modelfleet.io/v1alpha1", "modelreplicas", "ml-team")
    )[0]["metadata"]["name"]

    code, said = quickstart.kubectl_delete(quickstart.cache)

    assert code != 0, said
    assert REFUSAL in said and f"by resource ModelReplica/{replica}" in said, said
    deadline = time.monotonic() + WATCHED_FOR
    while time.monotonic() < deadline:
        cache = quickstart.get(quickstart.cache)
        assert cache and not _deleting(cache), "the cache is being deleted"
        claims_now = quickstart.claims()
        terminating = [c["metadata"]["name"] for c in claims_now if _deleting(c)]
        assert not terminating, f"claims Terminating: {terminating}"
        assert {c["metadata"]["uid"] for c in claims_now} == claims
        assert quickstart.serving(), "serving stopped after a refused deletion"
        time.sleep(3)
    assert quickstart.ready(quickstart.cache)


def test_a_refused_cache_deletion_is_carried_out_once_its_deployment_is_deleted(
    quickstart: Quickstart,
) -> None:
    code, said = quickstart.kubectl_delete(quickstart.cache)
    assert code != 0 and REFUSAL in said, said
    annotations = quickstart.get(quickstart.cache)["metadata"].get("annotations") or {}
    assert annotations.get(DELETION_ATTEMPT) == "Background", annotations

    assert request_deletion(quickstart.plane, quickstart.deployment)

    wait_for(
        lambda: quickstart.gone(quickstart.deployment) and quickstart.gone(quickstart.cache),
        what="the deployment deleted, then the cache (its refused deletion replayed)",
        timeout=240,
        every=3,
    )
    assert not quickstart.claims(), "reclaimPolicy Delete: the claims go with the cache"


def test_deleting_the_deployment_then_the_cache_deletes_both_and_leaves_nothing(
    quickstart: Quickstart,
) -> None:
    code, said = quickstart.kubectl_delete(quickstart.deployment)
    assert code == 0, said
    wait_for(
        lambda: quickstart.gone(quickstart.deployment),
        what="the deployment deleted",
        timeout=240,
        every=3,
    )
    assert quickstart.get(quickstart.cache), "the cache went without being deleted"

    # Its replicas' Usages go with them, a moment after the deployment: until then the webhook
    # may still refuse, and a user would run the same command again.
    said = ""

    def cache_deleted() -> bool:
        nonlocal said
        code, said = quickstart.kubectl_delete(quickstart.cache)
        assert code == 0 or REFUSAL in said, said
        return code == 0

    wait_for(cache_deleted, what="the cache's deletion accepted", timeout=60, every=3)
    wait_for(
        lambda: quickstart.gone(quickstart.cache), what="the cache deleted", timeout=240, every=3
    )
    wait_for(lambda: not quickstart.claims(), what="its claims deleted", timeout=120, every=3)
    delete_fleet(quickstart.plane, quickstart.xrs("InferenceCluster"))
    wait_for_nothing_left(quickstart.plane)


def test_deleting_a_cluster_a_replica_serves_on_is_refused_and_serving_goes_on(
    quickstart: Quickstart,
) -> None:
    [cluster] = quickstart.xrs("InferenceCluster")
    claims = {c["metadata"]["uid"] for c in quickstart.claims()}
    namespace = resource_path("v1", "namespaces", name="modelfleet")

    code, said = quickstart.kubectl_delete(cluster)

    assert code != 0 and REFUSAL in said and "by resource ModelReplica/" in said, said
    deadline = time.monotonic() + WATCHED_FOR
    while time.monotonic() < deadline:
        assert not _deleting(quickstart.get(cluster)), "the InferenceCluster is being deleted"
        workload_namespace = quickstart.workload().get(namespace)
        assert workload_namespace and not _deleting(workload_namespace), workload_namespace
        assert {c["metadata"]["uid"] for c in quickstart.claims()} == claims
        assert quickstart.serving(), "serving stopped after a refused deletion"
        time.sleep(3)

    # Once the deployment is deleted, nothing serves there: the refused deletion is carried
    # out, and what the cluster held goes with it (the cache's claim there among it).
    assert request_deletion(quickstart.plane, quickstart.deployment)
    wait_for(
        lambda: quickstart.gone(cluster),
        what="the InferenceCluster deleted once nothing serves on it",
        timeout=300,
        every=3,
    )
    wait_for(
        lambda: quickstart.workload().get(namespace) is None,
        what="its workload Namespace deleted",
        timeout=180,
        every=3,
    )
