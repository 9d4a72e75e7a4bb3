"""What the quickstart fleet goes through on a real control plane, beyond reaching Ready: the
hydrator container stages the model from the loopback Hub into the claim, a source change
re-hydrates into a fresh copy while serving goes on, a failed hydration shows Failed with its
reason and recovers when retried, a cluster whose hydration fails for good hands its replicas
to another (make before break), and deleting the fleet leaves nothing behind (a Retain claim
aside, which it keeps). A change on a cluster whose API server restarted (breaking
provider-kubernetes' watches) is still seen in seconds, and a provider-kubernetes restart
mid-staging loses nothing: provider-kubernetes runs as the docs install it (watches on claims,
Jobs and serving workloads, a 60-minute poll for the rest), so a change these scenarios wait
for within a minute is one only a (re-established) watch delivers that soon.

A hydration pod killed mid-download is a real node's scenario (test_real_node_real.py), where
the Job controller, not a stand-in, starts the next attempt."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
from modelfleet_devtools.e2e.fleet import (
    condition,
    delete_fleet,
    wait_for_nothing_left,
    xr_path,
)
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.quickstart import CLUSTER, OBJECTS, QuickstartFleet
from modelfleet_devtools.e2e.sources import QUICKSTART_REPO

Json = dict[str, Any]
SECOND = "gke-dev-2"  # joins for the healing scenario


@pytest.fixture(scope="module")
def fleet(quickstart_fleet: QuickstartFleet) -> QuickstartFleet:
    return quickstart_fleet


def test_the_hydrator_container_staged_the_model_from_the_hub(fleet: QuickstartFleet) -> None:
    stand_in = fleet.plane.clusters.clusters[CLUSTER].stand_in
    assert stand_in.hydrations and not stand_in.simulated, stand_in.simulated
    assert fleet.staged() == (1, [])


def test_a_source_change_rehydrates_while_serving_goes_on(fleet: QuickstartFleet) -> None:
    before = fleet.row()
    old_path = fleet.served_path()
    assert old_path.endswith(before["path"]), (old_path, before)
    fleet.change_revision("refs/pr/1")
    seen_paths: set[str] = set()

    def switched() -> bool:
        assert fleet.ready(fleet.deployment), "serving stopped while the new copy was staged"
        path = fleet.served_path()
        row = fleet.row()
        seen_paths.add(path)
        if path != old_path:
            # Pods move to the new copy only once it is complete there, never to a mix.
            assert (
                row.get("fingerprint") != before["fingerprint"] and row.get("phase") == "Ready"
            ), row
            assert path.endswith(row["path"]), (path, row)
        return path != old_path and fleet.everything_ready()

    wait_for(switched, what="serving from the new copy", timeout=300, every=2)
    assert seen_paths <= {old_path, fleet.served_path()}
    assert fleet.staged() == (1, [])


def test_a_failed_hydration_shows_failed_then_recovers_when_retried(fleet: QuickstartFleet) -> None:
    # The Hub refuses the repo (access revoked): every hydrator container's attempt fails.
    sources = fleet.plane.clusters.sources
    assert sources is not None
    sources.hub.faults.deny.add(QUICKSTART_REPO)
    served = fleet.served_path()
    fleet.change_revision("refs/pr/2")
    wait_for(
        lambda: fleet.row().get("phase") == "Failed", what="the row Failed", timeout=300, every=2
    )
    row = fleet.row()
    artifact = condition(fleet.get(fleet.cache), "ArtifactReady")
    assert "backoff limit" in row.get("message", "").lower(), row
    assert (artifact.get("status"), artifact.get("reason")) == ("False", "Failed"), artifact
    assert fleet.served_path() == served and fleet.ready(fleet.deployment), "serving must go on"

    # Retry as docs/modelcache.md says: fix the cause, delete the failed Job's Object.
    sources.hub.faults.deny.clear()
    jobs = [
        o for o in fleet.plane.client.list(OBJECTS)
        if o["spec"]["forProvider"]["manifest"].get("kind") == "Job"
    ]  # fmt: skip
    for job in jobs:
        meta = job["metadata"]
        fleet.plane.client.delete(
            resource_path(
                "kubernetes.m.crossplane.io/v1alpha1", "objects", meta["namespace"], meta["name"]
            )
        )
    wait_for(
        lambda: fleet.row().get("phase") == "Ready" and fleet.everything_ready(),
        what="the cache Ready again after the retry",
        timeout=300,
        every=3,
    )


def test_a_function_container_killed_mid_reconcile_is_restarted_and_loses_nothing(
    fleet: QuickstartFleet,
) -> None:
    """compose-model-cache's container is killed (SIGKILL) just as a source change gives it
    work; restarted as its pod would be, it picks the work up and nothing composed is lost."""
    plane = fleet.plane
    lasting = fleet.lasting_objects()
    claims = fleet.uids("v1", "persistentvolumeclaims")
    serving = fleet.uids("apps/v1", "deployments")
    before = fleet.row()
    restarts = plane.runtime.restarts["compose-model-cache"]
    revision = "refs/pr/4"  # one no earlier scenario staged: the cache has work to do
    assert fleet.get(fleet.cache)["spec"]["huggingFace"]["revision"] != revision
    fleet.change_revision(revision)
    plane.runtime.podman.call("kill", "--signal", "KILL", "compose-model-cache")
    wait_for(
        lambda: plane.runtime.restarts["compose-model-cache"] > restarts or plane.check_alive(),
        what="compose-model-cache's container restarted",
        timeout=60,
    )

    fleet.staged_anew_losing_nothing(lasting, claims, serving, before)


# Longest a change made while a watch was broken may take to reach an XR's status: client-go's
# reflector (v0.33, in provider-kubernetes v1.2.1) retries a broken watch after a backoff that
# stays in [30, 60) s until it has had two minutes without a failure, as after the
# disconnection scenario above; then the XR runs again, within its 60 s TTL if Crossplane's
# circuit breaker holds the Object's event. Far below the provider's 60-minute poll, so only
# a watch that comes back meets it.
SEEN_WITHIN = 120


def test_a_change_after_the_workload_api_server_restarted_is_seen_in_seconds(
    fleet: QuickstartFleet,
) -> None:
    """The cluster's API server restarts, breaking provider-kubernetes' watches on it; as it
    comes back, the serving Deployment stops being Available, then is Available again. The
    ModelDeployment follows both within SEEN_WITHIN seconds: the watches were re-established
    (a change made while they re-listed included) and no change was lost."""
    plane = fleet.plane
    stand_in = plane.clusters.clusters[CLUSTER].stand_in
    serving = fleet.uids("apps/v1", "deployments")
    assert fleet.ready(fleet.deployment)
    plane.clusters.disconnect(CLUSTER)
    time.sleep(5)  # long enough for the provider's watches on it to fail
    stand_in.room = False  # what the restarted server reports: the group is not Available
    try:
        plane.clusters.reconnect(CLUSTER)
        wait_for(
            lambda: not fleet.ready(fleet.deployment) or plane.check_alive(),
            what="the ModelDeployment to see its serving group no longer Available",
            timeout=SEEN_WITHIN,
            every=1,
        )
    finally:
        stand_in.room = True
    wait_for(
        lambda: fleet.ready(fleet.deployment) or plane.check_alive(),
        what="the ModelDeployment to see its serving group Available again",
        timeout=SEEN_WITHIN,
        every=1,
    )
    assert serving <= fleet.uids("apps/v1", "deployments"), "serving was restarted"


def test_a_provider_restart_mid_staging_loses_nothing(fleet: QuickstartFleet) -> None:
    """provider-kubernetes is restarted as soon as a source change's hydration Job exists on
    the cluster. The restarted provider takes every Object over (watches included): the new
    source is staged and the cache Ready with it; no lasting Object, claim or serving
    Deployment is lost or recreated."""
    plane = fleet.plane
    lasting = fleet.lasting_objects()
    claims = fleet.uids("v1", "persistentvolumeclaims")
    serving = fleet.uids("apps/v1", "deployments")
    jobs = fleet.uids("batch/v1", "jobs")
    before = fleet.row()
    revision = "refs/pr/6"  # one no earlier scenario staged: the cache has work to do
    assert fleet.get(fleet.cache)["spec"]["huggingFace"]["revision"] != revision
    fleet.change_revision(revision)
    wait_for(
        lambda: fleet.uids("batch/v1", "jobs") - jobs or plane.check_alive(),
        what="the new source's hydration Job on the cluster",
        timeout=120,
        every=1,
    )
    plane.processes.restart(plane.processes.named("provider-kubernetes"))

    fleet.staged_anew_losing_nothing(lasting, claims, serving, before)
    assert fleet.staged() == (1, [])


# The healing scenario runs last but for the deletion: it adds a second cluster and moves
# the replicas there, which the scenarios before it do not expect.
def test_a_cluster_whose_hydration_fails_for_good_hands_its_replicas_to_another(
    fleet: QuickstartFleet,
) -> None:
    """A source change fails for good on the serving cluster (the Hub refuses the repo until
    every attempt has failed: the cache's row there is Failed and stays so, as no one retries
    it). The grace period is made short and a second cluster joins, which stages the new
    source. The replicas move there, the old ones serving until the new ones are Available,
    and nothing of the deployment is left on the failed cluster: only the cache's claim, which
    the cache still holds there (and `Retain` would keep)."""
    plane = fleet.plane
    sources = plane.clusters.sources
    assert sources is not None
    plane.client.merge_patch(
        xr_path(fleet.deployment), {"spec": {"healing": {"moveAfterSeconds": 15}}}
    )
    claims = fleet.uids("v1", "persistentvolumeclaims")
    desired = fleet.get(fleet.deployment)["spec"]["replicas"]
    sources.hub.faults.deny.add(QUICKSTART_REPO)
    try:
        fleet.change_revision("refs/pr/5")
        wait_for(
            lambda: fleet.row().get("phase") == "Failed",
            what=f"the row of {CLUSTER} Failed",
            timeout=300,
            every=2,
        )
    finally:
        sources.hub.faults.deny.clear()
    second = copy.deepcopy(next(o for o in fleet.objects if o["kind"] == "InferenceCluster"))
    second["metadata"]["name"] = second["spec"]["connection"]["providerConfigName"] = SECOND
    plane.clusters.prepare(second)
    plane.apply([second])
    fleet.objects.append(second)

    fewer_served: list[Json] = []  # make before break: statuses seen mid-move with fewer ready
    seen: list[Json] = [{}]

    def moved() -> bool:
        deployment = fleet.get(fleet.deployment)
        status = deployment.get("status") or {}
        ready = (status.get("replicas") or {}).get("ready", 0)
        health = condition(deployment, "PlacementHealthy")
        if health.get("reason") == "Moving" and ready < desired:
            fewer_served.append(status)
        placed = fleet.placed()
        rows = [fleet.row(CLUSTER), fleet.row(SECOND)]
        seen[0] = {"placed": placed, "health": health, "ready": ready, "rows": rows}
        return (
            health.get("reason") == "Moved"
            and placed.get(CLUSTER) == 0
            and placed.get(SECOND) == desired
            and fleet.ready(fleet.deployment)
        )

    try:
        wait_for(moved, what=f"the replicas moved to {SECOND}", timeout=420, every=2)
    except TimeoutError as error:
        raise AssertionError(f"{error}; last seen: {seen[0]}") from None
    assert not fewer_served, f"fewer replicas served during the move: {fewer_served[0]}"
    assert fleet.row().get("phase") == "Failed", fleet.row()
    health = condition(fleet.get(fleet.deployment), "PlacementHealthy")
    assert health.get("message", "").startswith(
        f"moved {desired} replica(s) from {CLUSTER} to {SECOND}: {CLUSTER} ModelCache"
    ), health
    served = fleet.workload(SECOND).list(resource_path("apps/v1", "deployments"))
    assert [d["status"].get("readyReplicas") for d in served] == [desired], served

    wait_for(
        lambda: not fleet.workloads_on(CLUSTER),
        what=f"the old workload gone from {CLUSTER}",
        timeout=120,
        every=2,
    )
    assert claims <= fleet.uids("v1", "persistentvolumeclaims"), "the cache's claim stays"
    left: list[str] = []

    def old_replica_gone() -> bool:
        left[:] = fleet.deployment_left_on(CLUSTER)
        return not left

    try:
        wait_for(old_replica_gone, what="the old ModelReplica gone", timeout=120, every=2)
    except TimeoutError as error:
        raise AssertionError(f"{error}; still there: {left}") from None

    # Retried there as docs/modelcache.md says (the failed Job's Object deleted), the cluster
    # recovers; it does not pull the replicas back.
    fleet.retry_hydration(CLUSTER)
    wait_for(
        lambda: fleet.row().get("phase") == "Ready" and fleet.everything_ready(),
        what=f"the cache Ready again on {CLUSTER}",
        timeout=300,
        every=3,
    )
    placed = fleet.placed()
    assert (placed[CLUSTER], placed[SECOND]) == (0, desired), placed


def test_deleting_the_cache_keeps_its_retained_claim_and_the_fleet_leaves_nothing(
    fleet: QuickstartFleet,
) -> None:
    plane = fleet.plane
    claim = fleet.row()["claimName"]
    delete_fleet(plane, [o for o in fleet.objects if o["kind"] != "InferenceCluster"])
    claims = {
        c["metadata"]["name"]
        for c in fleet.workload().list(resource_path("v1", "persistentvolumeclaims"))
    }
    assert claim in claims, "reclaimPolicy Retain: the claim outlives its ModelCache"
    delete_fleet(plane, [o for o in fleet.objects if o["kind"] == "InferenceCluster"])
    wait_for_nothing_left(plane)
