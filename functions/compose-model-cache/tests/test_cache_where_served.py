"""A ModelCache with spec.staging.policy WhereServed, reconciled through its gRPC edge: it reads
the ModelReplicas referencing it, tells its shards only the clusters it stages on, lists the
others Pending saying why, and reports the decision (status.staging, condition Staging)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cache_world import RUNNER, model_cache
from compose_model_cache.cache.footprint import NOT_STAGED
from compose_model_cache.fn import CLUSTERS, REPLICAS
from modelfleet_devtools.requests import (
    conditions,
    desired_resources,
    desired_status,
    run_function_request,
)
from modelfleet_devtools.world import inference_cluster

FLEET = [inference_cluster(n) for n in ("a", "b", "c", "d")]
UNRESOLVED = object()


def where_served(spares: int = 1, **status: Any) -> dict[str, Any]:
    xr = model_cache(staging={"policy": "WhereServed", "warmSpares": spares})
    if status:
        xr["status"] = status
    return xr


def replica(cluster: str, cache: str = "qwen", namespace: str = "ml-team") -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": f"qwen-{cluster}", "namespace": namespace},
        "spec": {"clusterName": cluster, "modelCacheRef": {"name": cache}, "replicas": 1},
    }


def shard(*clusters: str, ready: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCacheShard",
        "metadata": {"name": "qwen-shard-0", "namespace": "ml-team"},
        "spec": {
            "cacheName": "qwen",
            "cache": {k: v for k, v in model_cache()["spec"].items() if k != "staging"},
            "clusters": [{"name": c} for c in clusters],
        },
        "status": {"clusters": [{"name": c, "phase": "Ready"} for c in ready]},
    }


def run(xr, replicas=UNRESOLVED, observed=None):
    required: dict[str, Any] = {CLUSTERS: FLEET}
    if replicas is not UNRESOLVED:
        required[REPLICAS] = replicas
    return RUNNER.run(run_function_request(xr, observed=observed or {}, required=required))


def shard_clusters(rsp) -> set[str]:
    return {
        e["name"]
        for r in desired_resources(rsp).values()
        if r.get("kind") == "ModelCacheShard"
        for e in r["spec"]["clusters"]
    }


# (scenario, replicas placed, shards observed, staged on, spares, condition reason)
CASES = [
    ("one replica on c: c and one spare (the first by name)",
     [replica("c")], {}, {"a", "c"}, ["a"], "WhereServed"),
    ("replicas of another cache or namespace do not count",
     [replica("c"), replica("d", cache="other"), replica("b", namespace="team-b")], {},
     {"a", "c"}, ["a"], "WhereServed"),
    ("the spare stays where the weights are Ready",
     [replica("a")], {"shard-0": shard("a", "d", ready=("a", "d"))}, {"a", "d"}, ["d"],
     "WhereServed"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("replicas", "observed", "staged", "spares", "reason"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_the_cache_stages_where_it_is_served(replicas, observed, staged, spares, reason):
    rsp = run(where_served(), replicas, observed)
    assert shard_clusters(rsp) == staged
    status = desired_status(rsp)
    assert status["staging"]["spares"] == spares
    assert conditions(rsp)["Staging"].reason == reason
    rows = {r["name"]: r for r in status["clusters"]}
    assert set(rows) == {"a", "b", "c", "d"}  # every matched cluster listed
    for name in set(rows) - staged:
        assert (rows[name]["phase"], rows[name]["message"]) == ("Pending", NOT_STAGED)
    # The cache looks again soon: the replicas it reads are not watched.
    assert rsp.meta.ttl.ToTimedelta() <= timedelta(minutes=1)


def test_the_replicas_are_read_only_where_served():
    everywhere = RUNNER.run(run_function_request(model_cache(), required={CLUSTERS: FLEET}))
    assert REPLICAS not in everywhere.requirements.resources
    assert shard_clusters(everywhere) == {"a", "b", "c", "d"}
    asked = run(where_served())
    assert REPLICAS in asked.requirements.resources


def test_while_the_replicas_are_not_resolved_everything_is_held():
    observed = {"shard-0": shard("a", "b", "c", ready=("a", "b", "c"))}
    rsp = run(where_served(), UNRESOLVED, observed)
    assert shard_clusters(rsp) == {"a", "b", "c"}
    assert conditions(rsp)["ArtifactReady"].reason == "Resolving"


def test_a_cluster_no_longer_served_is_released_only_after_its_grace_period():
    observed = {"shard-0": shard("a", "b", "c", ready=("a", "b", "c"))}
    first = run(where_served(spares=0), [replica("a")], observed)
    # b and c keep their copies; their clocks start.
    assert shard_clusters(first) == {"a", "b", "c"}
    releasing = desired_status(first)["staging"]["releasing"]
    assert [r["name"] for r in releasing] == ["b", "c"]
    since = datetime.fromisoformat(releasing[0]["since"].replace("Z", "+00:00"))
    assert abs(since - datetime.now(UTC)) < timedelta(minutes=1)
    # An hour later (the default grace period) they are left out of the shard.
    past = (datetime.now(UTC) - timedelta(hours=1, seconds=1)).isoformat()
    xr = where_served(
        spares=0,
        staging={"releasing": [{"name": "b", "since": past}, {"name": "c", "since": past}]},
    )
    later = run(xr, [replica("a")], observed)
    assert shard_clusters(later) == {"a"}
    assert desired_status(later)["staging"]["releasing"] == []
    assert any("released b" in r.message for r in later.results)


def test_more_spares_than_the_fleet_stage_everywhere_and_say_so():
    rsp = run(where_served(spares=10), [replica("a")])
    assert shard_clusters(rsp) == {"a", "b", "c", "d"}
    staging = conditions(rsp)["Staging"]
    assert (staging.reason, "warmSpares is 10" in staging.message) == ("SparesExceedFleet", True)


def test_staged_nowhere_says_so():
    rsp = run(where_served(spares=0), [])
    assert shard_clusters(rsp) == set()
    assert conditions(rsp)["ArtifactReady"].reason == "NoClusters"
    assert "staged nowhere" in conditions(rsp)["ArtifactReady"].message


def test_the_spare_is_where_a_node_is_free_whoever_holds_the_others():
    """Another team's replica holding every node of a (64, more than its pools have) leaves
    b as the spare, a being first by name otherwise."""
    others = {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "llama-a", "namespace": "team-b"},
        "spec": {"clusterName": "a", "modelCacheRef": {"name": "llama"}, "replicas": 1,
                 "nodes": 64},
    }  # fmt: skip
    rsp = run(where_served(), [replica("c"), others])
    assert desired_status(rsp)["staging"]["spares"] == ["b"]
    assert shard_clusters(rsp) == {"b", "c"}
