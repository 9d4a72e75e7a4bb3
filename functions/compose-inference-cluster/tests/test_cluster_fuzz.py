"""Properties of compose-inference-cluster under random specs and observed states."""

import copy

from compose_inference_cluster.hydrator_access import HYDRATOR_ACCESS
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import crashed, mutate, says_something
from modelfleet_devtools.requests import desired_resources
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import PROVISIONERS, cluster, composed_once_connected, run

XR = cluster({"managed": PROVISIONERS[0][1]}, leaderWorkerSet={"install": True})
COMPOSED = composed_once_connected(XR)
OBSERVED = {
    k: observed_object(v, ready=True) if "spec" in v and "forProvider" in v["spec"] else v
    for k, v in COMPOSED.items()
}


@given(st.data())
def test_random_specs_never_crash_and_never_go_silent(data):
    xr = copy.deepcopy(XR)
    xr["spec"] = mutate(data, xr["spec"])
    rsp = run(xr, OBSERVED)
    assert not crashed(rsp)
    assert says_something(rsp)
    if any(c.reason == "InvalidSpec" for c in rsp.conditions):
        assert set(desired_resources(rsp)) == set(OBSERVED)


@given(st.data())
def test_flapping_observed_state_never_drops_what_the_spec_asks_for(data):
    observed = {
        k: (v | {"status": mutate(data, v["status"])} if "status" in v else v)
        for k, v in OBSERVED.items()
        if data.draw(st.booleans())
    }
    rsp = run(XR, observed)
    assert not crashed(rsp)
    desired = set(desired_resources(rsp))
    assert set(observed) <= desired, "what was composed before is never dropped"
    # The hydrator's access waits for the Namespace (unless already observed), all three.
    assert set(COMPOSED) - set(HYDRATOR_ACCESS) <= desired <= set(COMPOSED)
    assert len(desired & set(HYDRATOR_ACCESS)) in {0, len(HYDRATOR_ACCESS)}


NAMED = copy.deepcopy(XR)
NAMED["spec"]["connection"] = {"providerConfigName": "gke-us-pc"}


@given(st.data())
def test_unresolved_provider_config_keeps_whatever_was_composed(data):
    kept = {
        k: v for k, v in OBSERVED.items() if k != "provider-config" and data.draw(st.booleans())
    }
    rsp = run(NAMED, kept)  # no required resources: Crossplane has not resolved them yet
    assert not crashed(rsp)
    assert says_something(rsp)
    assert set(desired_resources(rsp)) == set(kept)
