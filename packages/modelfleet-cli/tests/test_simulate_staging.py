"""`modelfleet simulate` shows where a ModelCache with spec.staging WhereServed stages: where
its replica is placed plus a warm spare, never the whole fleet; and when the serving cluster's
hydration fails for good, the replica moves to the spare, whose weights are Ready already."""

import sys
from pathlib import Path

import pytest
import yaml
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS

sys.path.insert(0, str(Path(__file__).parent))
from quickstart_fleet import write_quickstart_fleet
from simulate_runs import simulate_with_timeline

CACHE, DEPLOYMENT = "ModelCache ml-team/m00", "ModelDeployment ml-team/m00"
CLUSTERS = ["c000", "c001", "c002", "c003", "c004"]


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def fleet(directory: Path) -> Path:
    """Five quickstart clusters; a cache staging where served with one spare; one replica
    that moves after 300 s."""
    write_quickstart_fleet(directory, CLUSTERS, ["m00"])
    for kind, change in (
        ("modelcaches", {"staging": {"policy": "WhereServed", "warmSpares": 1}}),
        ("modeldeployments", {"replicas": 1, "healing": {"moveAfterSeconds": 300}}),
    ):
        path = directory / f"{kind}.yaml"
        [xr] = list(yaml.safe_load_all(path.read_text()))
        xr["spec"].update(change)
        path.write_text(yaml.safe_dump(xr, sort_keys=False))
    return directory


def staged(result) -> set[str]:
    rows = result["xrs"][CACHE]["status"]["clusters"]
    return {r["name"] for r in rows if r["phase"] != "Pending"}


def test_the_cache_stages_where_it_is_served_and_a_spare(functions, tmp_path):
    timeline, result = simulate_with_timeline(functions, fleet(tmp_path))
    assert result["result"] == "Ready" and result["losses"] == []
    assert staged(result) == {"c000", "c001"}  # served on c000, the spare c001: not 5 copies
    assert "staging WhereServed: served on c000; spares c001" in timeline
    assert "Staging=True WhereServed" in timeline


def test_a_replica_moved_off_a_failed_cluster_lands_on_the_ready_spare(functions, tmp_path):
    timeline, result = simulate_with_timeline(
        functions, fleet(tmp_path), "hydration-fails-always:c000@2"
    )
    assert result["losses"] == []
    rows = result["xrs"][DEPLOYMENT]["status"]["clusters"]
    assert {r["name"]: r["replicas"] for r in rows if r["replicas"]} == {"c001": 1}
    assert result["xrs"][DEPLOYMENT]["ready"]
    # The move, then the spare becomes where it is served, and a new spare is picked.
    assert "staging WhereServed: served on c001; spares c002" in timeline
    # The failed cluster is not served any more: its copy is released after the grace period.
    assert "releasing c000 at" in timeline
