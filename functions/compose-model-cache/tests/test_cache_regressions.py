"""Defects the reliability work found (docs/reliability.md), each pinned by its scenario."""

import pytest
from cache_world import desired_resources, model_cache, reconcile, rows
from modelfleet_devtools.fuzz import crashed
from modelfleet_devtools.world import inference_cluster, observed_object

CLUSTERS = [inference_cluster("gke-us"), inference_cluster("gke-eu")]


@pytest.mark.parametrize(
    "bad_name", [[], {"a": 1}, None, 3], ids=["list", "mapping", "null", "number"]
)
def test_a_status_row_whose_name_is_not_a_string_is_ignored_not_a_crash(bad_name):
    """Found by the long fuzz profile: a cluster row named `[]` in the cache's own status
    made the function raise (unhashable list) and fall back to the runner's safety net."""
    xr = model_cache(storage={"existingClaimName": "shared-models"}, sizeGiB=None)
    xr["spec"].pop("sizeGiB")
    composed = desired_resources(reconcile(xr, CLUSTERS))
    observed = {
        k: observed_object(v, remote_status={"phase": "Bound"}) for k, v in composed.items()
    }
    xr["status"] = {"clusters": [{"name": "gke-us", "phase": "Ready"}, {"name": bad_name}]}

    rsp = reconcile(xr, CLUSTERS, observed, validate=False)

    assert not crashed(rsp)
    assert set(rows(rsp)) == {"gke-us", "gke-eu"}
    assert set(composed) <= set(desired_resources(rsp))
