"""A ModelCache's source changed while its Jobs download, in the simulated fleet: the old
source's Jobs go from the workload clusters (their Objects are left out, and
provider-kubernetes deletes what they name), nothing of the new source's is deleted, the
hydrator's access (the cluster's) stays, and no loss is counted for a Job replaced by design."""

from pathlib import Path

import pytest
from modelfleet_cli.discovery import repository_compositions
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.clusters import workload_clusters
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_cli.simulate.control_plane import ControlPlane
from modelfleet_cli.simulate.fleet import load_fleet, load_settings
from modelfleet_contracts.api import MODEL_CACHE

WATCHED = Path(__file__).resolve().parents[3] / "examples" / "watched-hydration"
HYDRATION_KINDS = ("Job",)
ACCESS_KINDS = ("ServiceAccount", "Role", "RoleBinding")


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def hydration_objects(plane):
    """(cluster, kind, name) of every hydration Job on the workload clusters."""
    return objects_of(plane, HYDRATION_KINDS)


def objects_of(plane, kinds):
    return {
        (cluster, kind, name)
        for cluster, workload in plane.clusters.items()
        for kind, _, name in workload.objects
        if kind in kinds
    }


def the_cache(plane):
    """The ModelCache as the control plane stores it now (each reconcile stores a new one)."""
    [cache] = [x for x in plane.xrs() if x["kind"] == MODEL_CACHE]
    return cache


def test_a_new_source_mid_download_replaces_the_jobs_and_loses_nothing(functions):
    fleet = load_fleet(WATCHED)
    plane = ControlPlane(
        fleet,
        repository_compositions(),
        functions,
        workload_clusters(fleet, load_settings(WATCHED)),
        [],
    )
    while not any(kind == "Job" for _, kind, _ in hydration_objects(plane)):
        plane.run_round()
    plane.run_round()  # the Jobs are downloading
    old = hydration_objects(plane)
    access = objects_of(plane, ACCESS_KINDS)
    assert {kind for _, kind, _ in old} == set(HYDRATION_KINDS)
    assert {(c, n) for c, _, n in access} == {(c, "modelfleet-hydrator") for c in plane.clusters}
    assert {r["phase"] for r in the_cache(plane)["status"]["clusters"]} == {"Hydrating"}

    the_cache(plane)["spec"]["huggingFace"]["revision"] = "refs/pr/1"  # the user's edit
    plane.run_round()  # the cache tells its shard the new source
    assert hydration_objects(plane) == old, "nothing deleted before the shard knows"
    plane.run_round()  # the shard replaces the Jobs
    new = hydration_objects(plane)
    assert not old & new, "the old source's Jobs are deleted"
    assert objects_of(plane, ACCESS_KINDS) == access, "the hydrator's access stays"
    assert {(c, k) for c, k, _ in new} == {(c, k) for c, k, _ in old}, "new ones in their place"
    assert plane.losses == []
    while not plane.all_ready() and plane.round < 30:
        plane.run_round()
    assert plane.all_ready() and plane.losses == []
