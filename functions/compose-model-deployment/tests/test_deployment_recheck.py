"""A ModelDeployment waiting on what it only reads (its ModelCache, the clusters) asks
Crossplane to run it again within seconds; waiting on its own ModelReplicas, it does not
(Crossplane sees those change at once)."""

from datetime import timedelta

import pytest
from deployment_world import cache_on, deployment, schedule
from modelfleet_devtools.world import inference_cluster

GKE = inference_cluster("gke-us")
DEFAULT_TTL = timedelta(minutes=1)
CACHED = {"modelCacheRef": {"name": "kimi-k2"}}


@pytest.mark.parametrize(
    ("xr", "clusters", "cache", "soon"),
    [
        pytest.param(deployment(**CACHED), [GKE], cache_on("gke-us", phase="Hydrating"), True,
                     id="cache-still-hydrating-on-the-placed-cluster"),
        pytest.param(deployment(**CACHED), [GKE], None, True, id="cache-not-created-yet"),
        pytest.param(deployment(**CACHED), [], cache_on("gke-us"), True, id="no-cluster-yet"),
        pytest.param(deployment(**CACHED), [GKE], cache_on("gke-us"), False,
                     id="cache-ready-replicas-rolling-out"),
        pytest.param(deployment(), [GKE], None, False, id="no-cache-replicas-rolling-out"),
    ],
)  # fmt: skip
def test_a_deployment_waiting_on_what_it_reads_is_looked_at_again_soon(xr, clusters, cache, soon):
    ttl = schedule(xr, clusters, cache=cache).meta.ttl.ToTimedelta()
    assert (ttl < DEFAULT_TTL) == soon, ttl


def test_a_wait_that_begins_after_a_long_quiet_spell_is_looked_at_again_within_seconds():
    # Settled for a long time, then the cache re-hydrates: the new wait is young, whatever
    # the age of the conditions the XR showed until now.
    xr = deployment(**CACHED)
    xr["status"] = {
        "conditions": [
            {"type": t, "status": "True", "reason": r, "lastTransitionTime": "2020-01-01T00:00:00Z"}
            for t, r in (("Scheduled", "Scheduled"), ("ModelCacheReady", "Ready"))
        ]
    }
    rsp = schedule(xr, [GKE], cache=cache_on("gke-us", phase="Hydrating"))
    assert rsp.meta.ttl.ToTimedelta() == timedelta(seconds=5)
