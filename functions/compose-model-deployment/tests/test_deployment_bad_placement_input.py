"""Bad input about placement: a clear condition at once, and nothing composed is lost."""

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from deployment_world import cache_on, deployment, desired_replicas, schedule
from modelfleet_devtools.requests import conditions, events
from modelfleet_devtools.world import inference_cluster

US = {"modelfleet.io/region": "us"}
EU = {"modelfleet.io/region": "eu"}
CLUSTERS = [inference_cluster("gke-us", labels=US), inference_cluster("gke-eu", labels=EU)]


def cache_selecting(labels: dict[str, str] | None, *reported: str) -> dict[str, Any]:
    cache = cache_on(*reported)
    if labels is not None:
        cache["spec"] = {"clusterSelector": {"matchLabels": labels}}
    return cache


ANYWHERE = cache_selecting(None, "gke-us")
GRACE_WORDS = ["spec.healing.moveAfterSeconds", "greater than or equal to 1"]
DISJOINT_WORDS = [
    "ModelCache kimi-k2 can stage to none",
    "(gke-us)",
    "no InferenceCluster in common",
]

BAD = [
    # (case, the deployment's spec, the cache, Scheduled reason, words its message holds)
    ("grace period zero", {"healing": {"moveAfterSeconds": 0}}, ANYWHERE,
     "InvalidSpec", GRACE_WORDS),
    ("grace period negative", {"healing": {"moveAfterSeconds": -30}}, ANYWHERE,
     "InvalidSpec", GRACE_WORDS),
    ("selectors disjoint, cache not reporting yet", {"clusterSelector": {"matchLabels": US}},
     cache_selecting(EU), "ModelCacheNotFound", DISJOINT_WORDS),
    ("selectors disjoint, cache staged elsewhere", {"clusterSelector": {"matchLabels": US}},
     cache_selecting(EU, "gke-eu"), "ModelCacheNotFound", ["no InferenceCluster in common"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "cache", "why", "words"), [pytest.param(*case[1:], id=case[0]) for case in BAD]
)
def test_bad_placement_input_is_said_at_once_and_keeps_what_was_composed(spec, cache, why, words):
    fine = deployment(replicas=1, modelCacheRef={"name": "kimi-k2"})
    placed = desired_replicas(schedule(fine, CLUSTERS, cache=cache_on("gke-us")))
    assert placed  # a replica composed while the input was good

    bad = deployment(replicas=1, modelCacheRef={"name": "kimi-k2"}, **spec)
    for observed in ({}, placed):  # a new deployment, and one placed before the mistake
        rsp = schedule(bad, CLUSTERS, cache=cache, observed=observed)
        scheduled = conditions(rsp)["Scheduled"]
        assert (scheduled.status, scheduled.reason) == (fnv1.STATUS_CONDITION_FALSE, why)
        assert all(w in scheduled.message for w in words), scheduled.message
        assert desired_replicas(rsp) == observed  # nothing lost, nothing made up
        assert rsp.desired.composite.ready == fnv1.READY_FALSE
        assert ("Warning", f"Scheduled {why}: {scheduled.message}") in events(rsp)


def test_selectors_that_share_a_cluster_are_not_flagged():
    xr = deployment(replicas=1, modelCacheRef={"name": "kimi-k2"})  # every cluster
    rsp = schedule(xr, CLUSTERS, cache=cache_selecting(EU))
    assert "in common" not in conditions(rsp)["Scheduled"].message
