"""A ModelDeployment waiting on what it only reads (its ModelCache, the clusters) asks
Crossplane to run it again within seconds; so does one whose replicas roll out: Crossplane
watches them, but its circuit breaker can drop their events (measured: a serving group turning
Available reached `kubectl get md` only at the deployment's minute-long TTL). Once every
replica is Ready it waits for events again."""

from datetime import timedelta

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from deployment_world import cache_on, deployment, desired_replicas, schedule
from modelfleet_devtools.requests import conditions
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
        pytest.param(deployment(**CACHED), [GKE], cache_on("gke-us"), True,
                     id="cache-ready-replicas-rolling-out"),
        pytest.param(deployment(), [GKE], None, True, id="no-cache-replicas-rolling-out"),
    ],
)  # fmt: skip
def test_a_deployment_waiting_on_what_it_reads_is_looked_at_again_soon(xr, clusters, cache, soon):
    ttl = schedule(xr, clusters, cache=cache).meta.ttl.ToTimedelta()
    assert (ttl < DEFAULT_TTL) == soon, ttl


@pytest.mark.parametrize(
    ("ready", "soon"),
    [
        pytest.param(1, True, id="one-of-two-replicas-serving"),
        pytest.param(2, False, id="every-replica-serving"),
    ],
)
def test_a_deployment_looks_again_soon_until_every_replica_serves(ready, soon):
    xr = deployment(replicas=2, **CACHED)
    placed = desired_replicas(schedule(xr, [GKE], cache=cache_on("gke-us")))
    for replica in placed.values():
        replica["status"] = {"phase": "Ready", "readyReplicas": ready, "replicas": 2}
    rsp = schedule(xr, [GKE], cache=cache_on("gke-us"), observed=placed)
    available = conditions(rsp)["Available"].status == fnv1.STATUS_CONDITION_TRUE
    assert available == (not soon)
    assert (rsp.meta.ttl.ToTimedelta() < DEFAULT_TTL) == soon


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
