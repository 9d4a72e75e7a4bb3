"""Why a ModelDeployment landed where it did, or did not: one row per Scheduled reason."""

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from deployment_world import (
    cache_on,
    deployment,
    desired_replicas,
    other_replica,
    placement,
    rows,
    schedule,
)
from modelfleet_devtools.requests import conditions, conditions_as_status, events
from modelfleet_devtools.world import H100, inference_cluster

CACHE = {"modelCacheRef": {"name": "kimi-k2"}}
BIG_MODEL = {**CACHE, "resources": {"vramGiB": 1200}}  # 1.2 TB on 8 x 80 GiB -> 2 nodes
SMALL_POOL = {**H100, "name": "l4", "gpu": {"count": 1, "memoryGiB": 24}}
# Nodes enough for anything, but 1 GiB of GPU memory each: 2000 GiB needs 2000-node groups.
VAST_POOL = {**H100, "name": "tiny", "nodeCount": 100000, "gpu": {"count": 1, "memoryGiB": 1}}


def case(name, xr, clusters, *, cache=None, others=(), placed, reason, says, ok=False):
    return pytest.param(xr, clusters, cache, list(others), placed, ok, reason, says, id=name)


SCHEDULED = [
    case(
        "a small model fits on the one cluster",
        deployment(replicas=2, resources={"vramGiB": 60}),
        [inference_cluster("gke-us")],
        placed={"gke-us": 2},
        ok=True,
        reason="Scheduled",
        says="2/2 replica(s) placed (gke-us=2)",
    ),
    case(
        "seed: 1.2 TB model lands only where there is RWX storage",
        deployment(replicas=1, **BIG_MODEL),
        [inference_cluster("gke-us"), inference_cluster("onprem-eu", storage_class=None)],
        cache=cache_on("gke-us", "onprem-eu"),
        placed={"gke-us": 1},
        ok=True,
        reason="Scheduled",
        says="onprem-eu: multi-node model requires shared storage on the inference cluster",
    ),
    case(
        "the selector matches no cluster",
        deployment(clusterSelector={"matchLabels": {"modelfleet.io/region": "mars"}}),
        [inference_cluster("gke-us", labels={"modelfleet.io/region": "us"})],
        placed={},
        reason="NoClusters",
        says="no InferenceCluster matches spec.clusterSelector",
    ),
    case(
        "the only matching cluster is not connected",
        deployment(),
        [inference_cluster("gke-us", connected=False)],
        placed={},
        reason="NoClusters",
        says="cluster gke-us is not connected",
    ),
    case(
        "other teams' gangs already use every node",
        deployment(replicas=1, nodes=2, **CACHE),
        [inference_cluster("gke-us")],
        cache=cache_on("gke-us"),
        others=[other_replica("gke-us", "h100", 2, 2)],
        placed={},
        reason="InsufficientCapacity",
        says="0/1 replica(s) placed",
    ),
    case(
        "more groups than the pool has nodes for",
        deployment(replicas=3, nodes=2, **CACHE),
        [inference_cluster("gke-us")],
        cache=cache_on("gke-us"),
        placed={"gke-us": 2},
        reason="InsufficientCapacity",
        says="2/3 replica(s) placed",
    ),
    case(
        "the pool has fewer GPUs per node than gpusPerNode",
        deployment(resources={"gpusPerNode": 8}),
        [inference_cluster("edge", node_pools=[SMALL_POOL])],
        placed={},
        reason="InsufficientCapacity",
        says="pool l4 has 1 GPUs per node, fewer than gpusPerNode 8",
    ),
    case(
        "the model needs bigger groups than a ModelReplica can carry",
        deployment(replicas=1, **CACHE, resources={"vramGiB": 2000}),
        [inference_cluster("gke-us", node_pools=[VAST_POOL])],
        cache=cache_on("gke-us"),
        placed={},
        reason="InsufficientCapacity",
        says="pool tiny would need 2000 nodes per group for vramGiB 2000",
    ),
    case(
        "multi-node model, cluster without shared storage",
        deployment(replicas=1, **BIG_MODEL),
        [inference_cluster("onprem-eu", storage_class=None)],
        cache=cache_on("onprem-eu"),
        placed={},
        reason="SharedStorageRequired",
        says="multi-node model requires shared storage on the inference cluster onprem-eu",
    ),
    case(
        "multi-node model, storage present but no ModelCache referenced",
        deployment(replicas=1, resources={"vramGiB": 1200}),
        [inference_cluster("gke-us")],
        placed={},
        reason="SharedStorageRequired",
        says="multi-node model requires shared storage on the inference cluster gke-us",
    ),
    case(
        "the referenced ModelCache does not exist",
        deployment(replicas=1, **CACHE),
        [inference_cluster("gke-us")],
        placed={},
        reason="ModelCacheNotFound",
        says="ModelCache kimi-k2 not found in this namespace",
    ),
    case(
        "the ModelCache stages to other clusters only",
        deployment(replicas=1, **CACHE),
        [inference_cluster("gke-us")],
        cache=cache_on("gke-eu"),
        placed={},
        reason="ModelCacheNotFound",
        says="ModelCache kimi-k2 does not stage to cluster gke-us",
    ),
    case(
        "the ModelCache was just created and reports no cluster yet",
        deployment(replicas=1, **CACHE),
        [inference_cluster("gke-us")],
        cache=cache_on(),
        placed={},
        reason="ModelCacheNotFound",
        says="has not reported any cluster yet",
    ),
    case(
        "thirty clusters without shared storage: ten are named, the rest counted",
        deployment(replicas=1, **BIG_MODEL),
        [inference_cluster(f"onprem-{i:02}", storage_class=None) for i in range(30)],
        cache=cache_on(*(f"onprem-{i:02}" for i in range(30))),
        placed={},
        reason="SharedStorageRequired",
        says="shared storage on the inference cluster onprem-09; "
        "and 20 more cluster(s), each row says why",
    ),
    case(
        "the cluster that gives the reason is named although twelve others were rejected first",
        deployment(replicas=1, **BIG_MODEL),
        [inference_cluster(f"a-offline-{i:02}", connected=False) for i in range(12)]
        + [inference_cluster("z-onprem", storage_class=None)],
        cache=cache_on("z-onprem", *(f"a-offline-{i:02}" for i in range(12))),
        placed={},
        reason="SharedStorageRequired",
        says="z-onprem: multi-node model requires shared storage on the inference cluster",
    ),
]


@pytest.mark.parametrize(
    ("xr", "clusters", "cache", "others", "placed", "ok", "reason", "says"), SCHEDULED
)
def test_scheduled_reason(xr, clusters, cache, others, placed, ok, reason, says):
    rsp = schedule(xr, clusters, cache=cache, others=others)
    scheduled = conditions(rsp)["Scheduled"]
    assert placement(rsp) == placed
    assert (scheduled.status == fnv1.STATUS_CONDITION_TRUE, scheduled.reason) == (ok, reason)
    assert says in scheduled.message
    assert rsp.desired.composite.ready == fnv1.READY_FALSE  # nothing is serving yet
    if not ok:
        assert ("Warning", f"Scheduled {reason}: {scheduled.message}") in events(rsp)


def test_every_cluster_row_says_why_it_was_or_was_not_used():
    clusters = [
        inference_cluster("gke-us"),
        inference_cluster("onprem-eu", storage_class=None),
        inference_cluster("gke-eu", connected=False),
        inference_cluster("edge", node_pools=[SMALL_POOL]),
    ]
    cache = cache_on("gke-us", "edge")
    rsp = schedule(deployment(replicas=1, **BIG_MODEL), clusters, cache=cache)
    summary = {n: (r["replicas"], r.get("nodes"), r["phase"]) for n, r in rows(rsp).items()}
    assert summary == {
        "edge": (0, 50, "Unschedulable"),
        "gke-eu": (0, None, "Unschedulable"),
        "gke-us": (1, 2, "Pending"),
        "onprem-eu": (0, None, "Unschedulable"),
    }
    assert "not connected" in rows(rsp)["gke-eu"]["message"]
    # 1 x 24 GiB per node by default on that pool: ceil(1200 / 24) = 50 nodes, it has 4.
    assert "pool l4 has 4 of 4 node(s) free; a group needs 50" in rows(rsp)["edge"]["message"]
    assert rows(rsp)["onprem-eu"]["message"].endswith("onprem-eu")


CACHE_READY = [
    ("no cache referenced", {}, None, True, "NotReferenced"),
    ("weights staged where placed", CACHE, cache_on("gke-us"), True, "Ready"),
    ("weights still downloading", CACHE, cache_on("gke-us", phase="Hydrating"), False, "Hydrating"),
    ("download failed", CACHE, cache_on("gke-us", phase="Failed"), False, "Failed"),
    ("cache nowhere near the placement", CACHE, cache_on("gke-eu"), False, "NotPlaced"),
    ("cache missing", CACHE, None, False, "ModelCacheNotFound"),
]


@pytest.mark.parametrize(
    ("spec", "cache", "ok", "reason"),
    [c[1:] for c in CACHE_READY],
    ids=[c[0] for c in CACHE_READY],
)
def test_model_cache_ready(spec: dict[str, Any], cache, ok, reason):
    rsp = schedule(deployment(replicas=1, **spec), [inference_cluster("gke-us")], cache=cache)
    c = conditions(rsp)["ModelCacheReady"]
    assert (c.status == fnv1.STATUS_CONDITION_TRUE, c.reason) == (ok, reason)


def test_events_only_on_transitions():
    xr = deployment(replicas=1)
    first = schedule(xr, [inference_cluster("gke-us")])
    assert events(first)  # Scheduled, ModelCacheReady, Available: all new
    xr["status"] = {"conditions": conditions_as_status(first)}
    placed = desired_replicas(first)
    assert events(schedule(xr, [inference_cluster("gke-us")], observed=placed)) == []
    more = {**xr, "spec": {**xr["spec"], "replicas": 9}}
    grown = schedule(more, [inference_cluster("gke-us")], observed=placed)
    assert next(e for e in events(grown) if "Scheduled" in e[1])[0] == "Warning"


def test_a_failed_cluster_is_named_first_among_fifteen_waiting_for_weights():
    names = [f"gke-{i:02}" for i in range(15)]
    cache = cache_on(*names, phase="Hydrating")
    cache["status"]["clusters"][-1]["phase"] = "Failed"  # gke-14, last by name
    clusters = [inference_cluster(n) for n in names]
    rsp = schedule(deployment(replicas=15, **CACHE), clusters, cache=cache)
    c = conditions(rsp)["ModelCacheReady"]
    assert c.reason == "Failed"
    assert c.message.startswith("staging failed on gke-14 (Failed), gke-00 (Hydrating)")
    assert c.message.endswith("gke-08 (Hydrating) and 5 more")
