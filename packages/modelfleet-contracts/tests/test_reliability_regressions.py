"""Defects the reliability work found in shared code (docs/reliability.md), each pinned."""

import pytest
from modelfleet_contracts.clusters import read_cluster
from modelfleet_contracts.conditions import Status, is_transition, previous_condition
from modelfleet_devtools.world import inference_cluster

READY = Status.true("ArtifactReady", "Staged")


@pytest.mark.parametrize(
    "conditions",
    [True, 3, "Ready", {"type": "ArtifactReady"}, None],
    ids=["boolean", "number", "string", "mapping", "null"],
)
def test_an_xr_whose_conditions_are_not_a_list_has_no_previous_condition(conditions):
    """Found by the fuzz properties: `status.conditions: true` on the observed XR made every
    function raise (`'bool' object is not iterable`) while deciding whether to emit an
    event. A shape that is not a list of conditions means no previous condition."""
    xr = {"status": {"conditions": conditions}}
    assert previous_condition(xr, "ArtifactReady") is None
    assert is_transition(xr, READY)


def test_a_well_formed_previous_condition_is_still_found():
    xr = {
        "status": {"conditions": [{"type": "ArtifactReady", "status": "True", "reason": "Staged"}]}
    }
    assert previous_condition(xr, "ArtifactReady") == xr["status"]["conditions"][0]
    assert not is_transition(xr, READY)


@pytest.mark.parametrize(
    "bad", [[None], {"name": "x"}, 7, True, ""], ids=["list", "mapping", "number", "bool", "empty"]
)
def test_a_cluster_status_value_of_the_wrong_type_reads_as_absent(bad):
    """Such a value must never reach a composed manifest (it once became a claim's class)."""
    ic = inference_cluster("gke-us")
    ic["status"]["storage"]["storageClassName"] = bad
    ic["status"]["providerConfigName"] = bad
    ic["status"]["workloadNamespace"] = bad
    ic["status"]["nodePools"][0]["nodeSelector"] = {"pool": bad}
    view = read_cluster(ic)
    assert view.storage_class_name is None and not view.has_shared_storage
    assert view.provider_config_name is None and view.workload_namespace is None
    assert not view.reachable
    assert all(isinstance(v, str) for v in view.node_pools[0].node_selector.values())


@pytest.mark.parametrize(
    ("last_seen_connected", "reachable"),
    [(True, True), (False, False)],
    ids=["last seen connected", "last seen disconnected"],
)
def test_a_cluster_whose_function_could_not_run_reads_as_last_reported(
    last_seen_connected, reachable
):
    """Seen in the upgrade scenario: while the functions' revisions switched, Crossplane
    marked every InferenceCluster's `Connected` Unknown (FatalError), and the deployment read
    both clusters as not connected and started its move timer. The last report stands."""
    ic = inference_cluster("gke-us", connected=last_seen_connected)
    ic["status"]["conditions"] = [
        {"type": "Connected", "status": "Unknown", "reason": "FatalError"}
    ]
    assert read_cluster(ic).reachable is reachable
