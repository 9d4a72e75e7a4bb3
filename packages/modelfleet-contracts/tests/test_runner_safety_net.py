"""The runner's last line of defence: a core that raises keeps what was composed."""

import pytest
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import (
    composed_readiness,
    conditions,
    desired_resources,
    run_function_request,
)

CLAIM = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "metadata": {"name": "gke-us-claim", "uid": "1234"},
    "spec": {"forProvider": {"manifest": {"kind": "PersistentVolumeClaim"}}},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


def crashing_core(req, rsp):
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    "status",
    [{"summary": {"ready": "1/1"}}, "Ready", ["a"], 3, None],
    ids=["mapping", "string", "list", "number", "null"],
)
def test_a_crashing_core_keeps_composed_resources_whatever_the_xr_status_looks_like(status):
    xr = {"apiVersion": "modelfleet.io/v1alpha1", "kind": "ModelCache", "status": status}
    rsp = SafeRunner(crashing_core, "compose-test").run(
        run_function_request(xr, observed={"gke-us-claim": CLAIM})
    )
    kept = desired_resources(rsp)["gke-us-claim"]
    assert kept["spec"] == CLAIM["spec"]
    assert "uid" not in kept["metadata"] and "status" not in kept
    assert conditions(rsp)["FunctionError"].reason == "InternalError"
    # What is kept is still what it was: the claim was observed Ready.
    assert composed_readiness(rsp) == {"gke-us-claim": "True"}
