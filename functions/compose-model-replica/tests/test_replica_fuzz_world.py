"""compose-model-replica in a world that flaps around a fixed, valid spec: its cluster, its
cache, its observed workload, Service and route, and its own status each as is, with a mutated
status, missing, or (requirements) unresolved for a call.

Property: no crash, always a status or a message, and a workload or Service that was
composed is never dropped (a replica is removed by its ModelDeployment, not by what it
observes); nor is a route on the cluster's Gateway while the cluster still declares one.
"""

import copy
import functools

from compose_model_replica.core import ROUTE, SERVICE, WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import (
    dropped,
    flapped,
    holds_up,
    mutate_status,
    resolved,
    settled,
    waits_for_crossplane,
)
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.world import inference_cluster, observed_object
from replica_world import RUNNER, model_cache, replica

REPLICAS = {
    "single-node vLLM": replica(nodes=1),
    "2-node vLLM gang": replica(nodes=2),
    "custom engine, no cache": replica(
        nodes=1, cache=False, engine={"framework": "Custom", "image": "x:1", "command": ["srv"]}
    ),
}
CLUSTER_OBJ = inference_cluster("gke-us")
GATEWAY_CLUSTER = copy.deepcopy(CLUSTER_OBJ)
GATEWAY_CLUSTER["status"]["gateway"] = {
    "name": "inference",
    "namespace": "gateway-system",
    "ready": True,
    "address": "10.0.0.7",
}
REPLICAS["single-node vLLM behind a Gateway"] = replica(nodes=1)
CLUSTERS = {"single-node vLLM behind a Gateway": GATEWAY_CLUSTER}
CACHE_OBJ = model_cache("Ready")


@functools.cache
def running(name):
    """The replica with the status its serving workload gave it, and what it composed."""
    required = {CLUSTER: [CLUSTERS.get(name, CLUSTER_OBJ)], CACHE: [CACHE_OBJ]}
    xr, composed = settled(
        REPLICAS[name],
        lambda xr, observed: RUNNER.run(
            run_function_request(xr, observed=observed, required=required)
        ),
        lambda v: observed_object(v, remote_status={"readyReplicas": 1}, ready=True),
    )
    assert WORKLOAD in composed, f"{name}: the starting world must serve"
    return xr, composed


@given(st.sampled_from(sorted(REPLICAS)), st.data())
def test_a_flapping_world_never_tears_down_a_composed_workload(name, data):
    xr, observed = flapped(data, *running(name), "replica")
    cluster, _ = resolved(data, [CLUSTERS.get(name, CLUSTER_OBJ)])
    if cluster and data.draw(st.booleans(), label="mutate the cluster's status"):
        cluster = [mutate_status(data, cluster[0])]
    cache, _ = resolved(data, [CACHE_OBJ])
    required = {CLUSTER: cluster, CACHE: cache}
    answered = {k: v for k, v in required.items() if v is not None}  # left out: unresolved

    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=answered))

    assert holds_up(rsp)
    assert dropped(observed, desired_resources(rsp), [WORKLOAD, SERVICE]) == []
    # The route goes only when the cluster no longer declares a Gateway (its status has no
    # `gateway` row: its spec says so); an unreadable row keeps it.
    status = cluster[0].get("status") if cluster else None
    undeclared = isinstance(status, dict) and "gateway" not in status
    if not undeclared:
        assert dropped(observed, desired_resources(rsp), [ROUTE]) == []
    if cluster is None or (cache is None and "modelCacheRef" in xr["spec"]):
        assert waits_for_crossplane(rsp, "WorkloadReady")
