"""`modelfleet simulate` shows a ModelDeployment healing: its replica moves off a cluster
that cannot serve it for longer than spec.placement.moveAfterSeconds, make before break, and
the move is in the timeline and is no loss."""

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS

sys.path.insert(0, str(Path(__file__).parent))
from quickstart_fleet import write_quickstart_fleet
from simulate_runs import simulate_with_timeline

DEPLOYMENT = "ModelDeployment ml-team/m00"
GRACE_ROUNDS = 5  # moveAfterSeconds 300; a round is a minute on simulate's clock


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def fleet(directory: Path) -> Path:
    """Three quickstart clusters, one cache on all three, one replica that moves after 300 s."""
    write_quickstart_fleet(directory, ["c000", "c001", "c002"], ["m00"])
    path = directory / "modeldeployments.yaml"
    [md] = list(yaml.safe_load_all(path.read_text()))
    md["spec"]["replicas"] = 1
    md["spec"]["placement"] = {"moveAfterSeconds": 300}
    path.write_text(yaml.safe_dump(md, sort_keys=False))
    return directory


def placed(result: dict[str, Any], xr: str = DEPLOYMENT) -> dict[str, int]:
    rows = result["xrs"][xr]["status"]["clusters"]
    return {r["name"]: r["replicas"] for r in rows if r["replicas"]}


CASES = [
    # (case, fault, the words the move is told with, the deployment stays 1/1 ready throughout)
    ("cache failed for good before it served", "hydration-fails-always:c000@2",
     "ModelCache m00 Failed there", False),
    ("serving cluster disconnected past the grace period", "cluster-flaps:c000@8+10",
     "not connected", True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "why", "kept_serving"), [pytest.param(*c[1:], id=c[0]) for c in CASES]
)
def test_the_replica_moves_in_the_timeline_and_nothing_is_lost(
    functions, tmp_path, fault, why, kept_serving
):
    timeline, result = simulate_with_timeline(functions, fleet(tmp_path), fault)
    assert result["losses"] == []
    assert placed(result) == {"c001": 1}  # the lowest-named cluster that can serve
    assert result["xrs"][DEPLOYMENT]["ready"]
    told = [line.strip() for line in timeline.splitlines() if "PlacementHealthy=" in line]
    unservable = next(t for t in told if "ClusterUnservable" in t)
    assert f"c000 ({why})" in unservable
    moved = next(t for t in told if t.startswith("PlacementHealthy=True Moved"))
    assert f"moved 1 replica(s) from c000 to c001: c000 {why}" in moved
    [verdict] = result["faults"]
    assert verdict["lost"] == []
    history = result["xrs"][DEPLOYMENT]["history"]
    first_ready = next(h["round"] for h in history if h["summary"].endswith("1/1 ready"))
    after = [h for h in history if h["round"] > first_ready]
    if kept_serving:  # make before break: the old replica served until the new one did
        assert any("Moving" in t for t in told)
        assert all(h["summary"].endswith("1/1 ready") for h in after)
        started = next(h["round"] for h in history if "c001 Progressing" in h["summary"])
        assert started - 8 >= GRACE_ROUNDS  # not before the grace period ran out
    deleted = [line for line in timeline.splitlines() if "m00-c000" in line and "deleted" in line]
    assert deleted, "the old ModelReplica is deleted"


def test_a_short_flap_moves_nothing(functions, tmp_path):
    timeline, result = simulate_with_timeline(functions, fleet(tmp_path), "cluster-flaps:c000@8+3")
    assert placed(result) == {"c000": 1}
    assert "Moving" not in timeline and "Moved" not in timeline
    assert result["losses"] == []
