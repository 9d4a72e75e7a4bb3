"""Properties of compose-model-replica under random specs and a flapping world."""

import copy

from compose_model_replica.core import WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import crashed, mutate, says_something
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request
from modelfleet_devtools.world import inference_cluster, observed_object
from replica_world import RUNNER, model_cache, replica

XR = replica(nodes=2)
CLUSTER_OBJ = inference_cluster("gke-us")
CACHE_OBJ = model_cache("Ready")
COMPOSED = desired_resources(
    RUNNER.run(run_function_request(XR, required={CLUSTER: [CLUSTER_OBJ], CACHE: [CACHE_OBJ]}))
)
OBSERVED = {k: observed_object(v, remote_status={"readyReplicas": 1}) for k, v in COMPOSED.items()}


@given(st.data())
def test_random_specs_never_crash_and_never_go_silent(data):
    xr = copy.deepcopy(XR)
    xr["spec"] = mutate(data, xr["spec"])
    required = {CLUSTER: [CLUSTER_OBJ], CACHE: [CACHE_OBJ]}
    rsp = RUNNER.run(run_function_request(xr, observed=OBSERVED, required=required))
    assert not crashed(rsp)
    assert says_something(rsp)


@given(st.data())
def test_a_flapping_world_never_drops_the_running_workload(data):
    cluster = [mutate(data, CLUSTER_OBJ)] if data.draw(st.booleans()) else []
    cache = [mutate(data, CACHE_OBJ)] if data.draw(st.booleans()) else []
    required = {CLUSTER: cluster, CACHE: cache}
    observed = {k: v | {"status": mutate(data, v["status"])} for k, v in OBSERVED.items()}
    rsp = RUNNER.run(run_function_request(XR, observed=observed, required=required))
    assert not crashed(rsp)
    assert WORKLOAD in desired_resources(rsp)


PHASES = {"WaitingForCluster", "WaitingForCache", "Progressing", "Ready", "Degraded", "Failed"}


@given(st.data(), st.sampled_from(["Pending", "Hydrating", "Ready", "Failed"]), st.booleans())
def test_any_observed_state_gives_one_of_the_six_phases(data, cache_phase, composed_before):
    observed = (
        {k: v | {"status": mutate(data, v["status"])} for k, v in OBSERVED.items()}
        if composed_before
        else {}
    )
    required = {CLUSTER: [mutate(data, CLUSTER_OBJ)], CACHE: [model_cache(cache_phase)]}
    rsp = RUNNER.run(run_function_request(XR, observed=observed, required=required))
    assert not crashed(rsp)
    status = desired_status(rsp)
    assert status["phase"] in PHASES
    assert (rsp.desired.composite.ready == fnv1.READY_TRUE) == (status["phase"] == "Ready")
    if composed_before:
        assert WORKLOAD in desired_resources(rsp)  # never torn down by what it observes
    elif cache_phase != "Ready":
        assert desired_resources(rsp) == {}  # no GPU held while weights download
