"""`modelfleet simulate --timeline FILE.svg` draws every cluster's phase per round, as each XR
reports it: a row per cluster of each XR, a cell per round coloured by phase and titled with
it. The same run draws the same bytes."""

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.main import main
from modelfleet_cli.simulate.phase_grid import COLOURS, PhaseGrid, cluster_phases, draw

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SVG = "{http://www.w3.org/2000/svg}"


def xr(kind: str, name: str, status: dict[str, Any], spec: dict[str, Any] | None = None):
    metadata = {"name": name} | ({} if kind == "InferenceCluster" else {"namespace": "ml-team"})
    return {"kind": kind, "metadata": metadata, "spec": spec or {}, "status": status}


READY = {"conditions": [{"type": "Ready", "status": "True"}]}
ROWS = [
    # the XR, the rows it gives: cluster -> phase
    pytest.param(xr("InferenceCluster", "gke-us", READY), {"gke-us": "Ready"},
                 id="a Ready cluster"),
    pytest.param(
        xr("InferenceCluster", "gke-eu", {"conditions": [{"type": "Ready", "status": "False"}]}),
        {"gke-eu": "NotReady"},
        id="a cluster not Ready",
    ),
    pytest.param(
        xr("ModelCache", "m", {"clusters": [{"name": "a", "phase": "Ready"},
                                            {"name": "b", "phase": "Hydrating"}]}),
        {"a": "Ready", "b": "Hydrating"},
        id="a cache's rows",
    ),
    pytest.param(
        xr("ModelDeployment", "d", {"clusters": [{"name": "a", "phase": "Unschedulable"}]}),
        {"a": "Unschedulable"},
        id="a deployment's rows",
    ),
    pytest.param(
        xr("ModelReplica", "r", {"phase": "WaitingForCache"}, {"clusterName": "a"}),
        {"a": "WaitingForCache"},
        id="a replica on its cluster",
    ),
    pytest.param(xr("ModelReplica", "r", {}, {"clusterName": "a"}), {},
                 id="a replica before its phase"),
    pytest.param(xr("ModelCacheShard", "s", {"clusters": [{"name": "a", "phase": "Ready"}]}), {},
                 id="a shard: its cache reports it"),
]  # fmt: skip


@pytest.mark.parametrize(("obj", "rows"), ROWS)
def test_each_kind_gives_a_row_per_cluster(obj, rows):
    assert cluster_phases(obj) == rows


def cells(svg_text: str) -> dict[str, str]:
    """Each cell's tooltip (`round N: <row>: <phase>`) -> its colour."""
    root = ET.fromstring(svg_text)
    return {
        rect.find(f"{SVG}title").text: rect.get("fill")  # type: ignore[union-attr]
        for rect in root.iter(f"{SVG}rect")
        if rect.find(f"{SVG}title") is not None
    }


def test_a_round_without_a_value_is_left_empty_and_phases_are_coloured():
    grid = PhaseGrid()
    cache = xr("ModelCache", "m", {"clusters": [{"name": "a", "phase": "Pending"}]})
    grid.record(1, [cache])
    cache["status"]["clusters"] = [
        {"name": "a", "phase": "Ready"},
        {"name": "b", "phase": "Failed"},
    ]
    grid.record(2, [cache])
    drawn = cells(draw(grid, "t"))
    assert drawn == {
        "round 1: ModelCache ml-team/m  a: Pending": COLOURS["Pending"],
        "round 2: ModelCache ml-team/m  a: Ready": COLOURS["Ready"],
        "round 2: ModelCache ml-team/m  b: Failed": COLOURS["Failed"],
    }


def test_simulate_draws_every_cluster_per_round_the_same_every_run(tmp_path):
    fleet = EXAMPLES / "multinode"
    svgs = []
    for run in ("first", "second"):
        path = tmp_path / f"{run}.svg"
        outcome = CliRunner().invoke(
            main, ["simulate", str(fleet), "--quiet", "--timeline", str(path)]
        )
        assert outcome.exit_code == ExitCode.OK, outcome.stderr
        svgs.append(path.read_bytes())
    assert svgs[0] == svgs[1]
    drawn = cells(svgs[0].decode())
    last = max(int(title.split(":")[0].removeprefix("round ")) for title in drawn)
    final = {title.split(": ", 1)[1] for title in drawn if title.startswith(f"round {last}:")}
    # every cluster of the cache and the deployment, and both clusters themselves, in the last round
    assert {
        "InferenceCluster gke-us-central: Ready",
        "InferenceCluster gke-us-east: Ready",
        "ModelCache ml-team/kimi-k2  gke-us-central: Ready",
        "ModelDeployment ml-team/kimi-k2  gke-us-central: Ready",
        "ModelDeployment ml-team/kimi-k2  gke-us-east: Unschedulable",
    } <= final, final
    first = {title.split(": ", 1)[1] for title in drawn if title.startswith("round 1:")}
    assert "InferenceCluster gke-us-central: NotReady" in first
