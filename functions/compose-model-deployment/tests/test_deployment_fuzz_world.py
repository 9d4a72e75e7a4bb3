"""compose-model-deployment in a world that flaps around a fixed, valid spec: clusters,
the cache, other teams' replicas, our own observed ModelReplicas and the XR's status each
as is, with a mutated status, missing, or (requirements) unresolved for a call.

Property: no crash, always a status or a message, and a ModelReplica placed on a cluster
that still exists (no selector: existing means matching) is never dropped. Unresolved
requirements keep every replica.
"""

import functools

from compose_model_deployment.core import replica_key
from compose_model_deployment.fn import CACHE, CLUSTERS, REPLICAS
from deployment_world import RUNNER, cache_on, deployment, desired_replicas, other_replica, schedule
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import dropped, flapped, holds_up, resolved, waits_for_crossplane
from modelfleet_devtools.requests import desired_status, run_function_request
from modelfleet_devtools.world import H100, inference_cluster

NAMES = ["gke-us", "gke-eu", "aks-jp"]
FLEET = [inference_cluster(n, node_pools=[{**H100, "nodeCount": 8}]) for n in NAMES]
OTHERS = [other_replica("gke-us", "h100", 1, 2), other_replica("gke-eu", "h100", 2, 1)]
DEPLOYMENTS = {
    "single node, no cache": deployment(replicas=4),
    "4-node gangs on a cache": deployment(
        replicas=3, modelCacheRef={"name": "kimi-k2"}, resources={"vramGiB": 2000}
    ),
}


@functools.cache
def placed(name):
    """The XR with the status its first schedule wrote, and the ModelReplicas it placed."""
    xr = DEPLOYMENTS[name]
    rsp = schedule(xr, FLEET, cache=cache_on(*NAMES), others=OTHERS)
    composed = desired_replicas(rsp)
    assert composed, f"{name}: the starting world must place something"
    return xr | {"status": desired_status(rsp)}, composed


@given(st.sampled_from(sorted(DEPLOYMENTS)), st.data())
def test_a_flapping_world_never_drops_a_replica_on_a_cluster_that_still_exists(name, data):
    xr, observed = flapped(data, *placed(name), "deployment")
    clusters, present = resolved(data, FLEET)
    cache, _ = resolved(data, [cache_on(*NAMES)], may_vanish=False)
    others, _ = resolved(data, OTHERS)

    uses_cache = "modelCacheRef" in xr["spec"]
    required = {CLUSTERS: clusters, REPLICAS: others, CACHE: cache if uses_cache else None}
    answered = {k: v for k, v in required.items() if v is not None}  # left out: unresolved
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=answered))

    assert holds_up(rsp)
    desired = desired_replicas(rsp)
    if clusters is None or others is None or (cache is None and uses_cache):
        assert dropped(observed, desired, observed) == [], "unresolved inputs keep everything"
        assert waits_for_crossplane(rsp, "Scheduled")
        return
    still_there = [replica_key(c["metadata"]["name"]) for c in present]
    assert dropped(observed, desired, still_there) == []
