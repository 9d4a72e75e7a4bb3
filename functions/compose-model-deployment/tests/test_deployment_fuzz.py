"""Properties of the scheduler: capacity, determinism, stickiness, reversibility, no crash."""

import copy
import random

from compose_model_deployment.placement import place
from deployment_world import deployment, other_replica, placement, schedule
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import crashed, mutate, says_something
from modelfleet_devtools.requests import desired_resources
from modelfleet_devtools.world import H100, inference_cluster


@st.composite
def fleets(draw):
    names = draw(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=5, unique=True))
    clusters = [
        inference_cluster(n, node_pools=[{**H100, "nodeCount": draw(st.integers(0, 6))}])
        for n in names
    ]
    others = [
        other_replica(n, "h100", draw(st.integers(0, 2)), draw(st.integers(1, 2)))
        for n in names
        if draw(st.booleans())
    ]
    return clusters, others


@given(fleets(), st.integers(0, 12), st.integers(1, 3))
def test_never_over_capacity(fleet, replicas, nodes):
    clusters, others = fleet
    xr = deployment(
        replicas=replicas,
        nodes=nodes,
        **({"modelCacheRef": {"name": "kimi-k2"}} if nodes > 1 else {}),
    )
    from deployment_world import cache_on

    cache = cache_on(*(c["metadata"]["name"] for c in clusters))
    rsp = schedule(xr, clusters, cache=cache, others=others)
    assert not crashed(rsp)
    for c in clusters:
        name = c["metadata"]["name"]
        used = sum(
            o["spec"]["replicas"] * o["spec"]["nodes"]
            for o in others
            if o["spec"]["clusterName"] == name
        )
        assert placement(rsp).get(name, 0) * nodes + used <= max(
            used, c["status"]["nodePools"][0]["nodeCount"]
        )


@given(fleets(), st.integers(0, 12), st.randoms(use_true_random=False))
def test_same_inputs_in_any_order_give_the_same_placement(fleet, replicas, rng):
    clusters, others = fleet
    xr = deployment(replicas=replicas)
    first = placement(schedule(xr, clusters, others=others))
    shuffled_clusters, shuffled_others = clusters[:], others[:]
    rng.shuffle(shuffled_clusters)
    rng.shuffle(shuffled_others)
    assert placement(schedule(xr, shuffled_clusters, others=shuffled_others)) == first


@given(fleets(), st.integers(1, 8), st.data())
def test_a_flapping_cluster_status_never_moves_or_drops_a_replica(fleet, replicas, data):
    clusters, others = fleet
    xr = deployment(replicas=replicas)
    placed = desired_resources(schedule(xr, clusters, others=others))
    before = placement(schedule(xr, clusters, others=others))
    flapped = [c | {"status": mutate(data, c["status"])} for c in clusters]
    after = schedule(xr, flapped, others=others, observed=placed)
    assert not crashed(after)
    for cluster, count in before.items():
        # Never moved or dropped; an unplaced replica may land on capacity that appeared.
        assert placement(after).get(cluster, 0) >= count


@given(
    st.dictionaries(st.sampled_from("abcde"), st.integers(0, 6)),
    st.integers(0, 8),
    st.integers(0, 8),
)
def test_scaling_up_then_down_returns_to_the_original_placement(slots, start, extra):
    original = place(start, {}, slots)
    left = {c: n - original.get(c, 0) for c, n in slots.items()}
    grown = place(start + extra, original, left)
    assert place(start, grown, {}) == original


@given(st.data())
def test_random_specs_never_crash_and_never_go_silent(data):
    xr = deployment(replicas=2, modelCacheRef={"name": "kimi-k2"}, resources={"vramGiB": 1200})
    from deployment_world import cache_on

    clusters = [inference_cluster("gke-us")]
    placed = desired_resources(schedule(xr, clusters, cache=cache_on("gke-us")))
    bad = copy.deepcopy(xr)
    bad["spec"] = mutate(data, bad["spec"])
    rsp = schedule(bad, clusters, cache=cache_on("gke-us"), observed=placed)
    assert not crashed(rsp)
    assert says_something(rsp)


assert random  # the shuffles use hypothesis' seeded Random
