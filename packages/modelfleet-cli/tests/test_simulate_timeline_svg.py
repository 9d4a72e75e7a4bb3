"""`modelfleet simulate --timeline FILE.svg` draws every cluster's phase per round, as each XR
reports it: a row per cluster of each XR, a cell per round coloured by phase and titled with
it, no two phases alike, the legend in the order the rows show the phases; and a ModelService's
traffic split per round on each cluster. The same run draws the same bytes."""

import itertools
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.main import main
from modelfleet_cli.simulate.grid_drawing import draw
from modelfleet_cli.simulate.phase_grid import PhaseGrid, Split, cluster_phases, cluster_splits
from modelfleet_cli.simulate.phase_styles import OKABE_ITO, STYLES, UNUSED_GREY, style_of

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
        "round 1: ModelCache ml-team/m  a: Pending": style_of("Pending").fill(),
        "round 2: ModelCache ml-team/m  a: Ready": style_of("Ready").fill(),
        "round 2: ModelCache ml-team/m  b: Failed": style_of("Failed").fill(),
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


REPO = EXAMPLES.parent


def reported_phases() -> set[str]:
    """Every phase a row can show: the XRDs' phase enums (a cache's clusters, a replica), an
    InferenceCluster's Ready or NotReady, and what a deployment's row says of a cluster it
    placed nothing on (compose_model_deployment/status.py)."""
    phases = {"Ready", "NotReady", "Unschedulable", "Unused"}
    for kind in ("modelcaches", "modelcacheshards", "modelreplicas"):
        text = (REPO / "apis" / kind / "definition.yaml").read_text()
        phases |= {p for node in _enums(yaml.safe_load(text)) for p in node}
    return phases


def _enums(node: Any, key: str = "") -> list[list[str]]:
    if isinstance(node, dict):
        found = [node["enum"]] if key == "phase" and "enum" in node else []
        return found + [e for k, v in node.items() for e in _enums(v, k)]
    if isinstance(node, list):
        return [e for item in node for e in _enums(item, key)]
    return []


def test_every_phase_has_a_style_of_its_own_from_a_colour_blind_safe_palette():
    phases = reported_phases()
    assert {"Pending", "Hydrating", "WaitingForCache", "Degraded"} <= phases, phases
    assert phases <= set(STYLES), f"phases drawn in an unlisted grey: {phases - set(STYLES)}"
    looks = {phase: (style_of(phase).colour, style_of(phase).striped) for phase in phases}
    alike = {a: b for a in looks for b in looks if a < b and looks[a] == looks[b]}
    assert not alike, f"phases that look the same: {alike}"
    assert {colour for colour, _ in looks.values()} <= {*OKABE_ITO.values(), UNUSED_GREY}
    # The two collisions are told apart now.
    assert looks["Hydrating"] != looks["Progressing"]
    assert looks["NotReady"] != looks["WaitingForCache"]


def legend(svg_text: str) -> list[tuple[str, str]]:
    """(fill, text) of each legend entry: an untitled 14x14 swatch and the text beside it."""
    elements = list(ET.fromstring(svg_text))
    return [
        (swatch.get("fill", ""), label.text or "")
        for swatch, label in itertools.pairwise(elements)
        if swatch.tag == f"{SVG}rect" and swatch.get("width") == "14" and label.tag == f"{SVG}text"
    ]


def test_the_legend_lists_the_phases_in_the_order_the_rows_show_them():
    grid = PhaseGrid()
    cluster = xr(
        "InferenceCluster", "gke-us", {"conditions": [{"type": "Ready", "status": "False"}]}
    )
    replica = xr("ModelReplica", "r", {"phase": "WaitingForCache"}, {"clusterName": "gke-us"})
    grid.record(1, [cluster, replica])
    cluster["status"] = READY
    replica["status"] = {"phase": "Progressing"}
    grid.record(2, [cluster, replica])
    entries = legend(draw(grid, "t"))
    assert [text for _, text in entries] == ["NotReady", "Ready", "WaitingForCache", "Progressing"]
    assert [fill for fill, _ in entries] == [style_of(t).fill() for _, t in entries]
    assert len({fill for fill, _ in entries}) == len(entries), "two entries look the same"


def service(clusters: list[dict[str, Any]]) -> dict[str, Any]:
    return xr("ModelService", "qwen3", {"clusters": clusters})


def backend(name: str, weight: int, reason: str = "Routed") -> dict[str, Any]:
    return {"modelDeployment": name, "weight": weight, "reason": reason}


SPLITS = [
    # the ModelService's status.clusters, the split per cluster
    pytest.param([{"name": "gke-us", "routed": True,
                   "backends": [backend("stable", 90), backend("canary", 10)]}],
                 {"gke-us": Split((("stable", 90), ("canary", 10)), routed=True)},
                 id="routed at the weights of its backends"),
    pytest.param([{"name": "gke-us", "routed": True,
                   "backends": [backend("stable", 0, "WeightZero"), backend("canary", 100)]}],
                 {"gke-us": Split((("stable", 0), ("canary", 100)), routed=True)},
                 id="a backend held out sends nothing"),
    pytest.param([{"name": "gke-eu", "routed": False, "reason": "NoAvailableBackend",
                   "backends": [backend("stable", 0, "CacheNotReady")]}],
                 {"gke-eu": Split((("stable", 0),), routed=False, reason="NoAvailableBackend")},
                 id="not routed, and why"),
    pytest.param([], {}, id="no cluster reported yet"),
]  # fmt: skip


@pytest.mark.parametrize(("clusters", "splits"), SPLITS)
def test_a_service_gives_a_split_per_cluster(clusters, splits):
    assert cluster_splits(service(clusters)) == splits


def test_simulate_draws_the_canarys_split_as_it_moves(tmp_path):
    """examples/canary: the ModelService's row on each cluster is not routed until its
    deployments serve, then 90/10, and from each edit of simulation.yaml on, the weights the
    edit set: 50/50, then 0/100."""
    fleet = EXAMPLES / "canary"
    path = tmp_path / "canary.svg"
    outcome = CliRunner().invoke(main, ["simulate", str(fleet), "--quiet", "--timeline", str(path)])
    assert outcome.exit_code == ExitCode.OK, outcome.stderr
    svg_text = path.read_text()
    edits = yaml.safe_load((fleet / "simulation.yaml").read_text())["edits"]
    weights = [[b["weight"] for b in e["patch"]["spec"]["backends"]] for e in edits]
    assert weights == [[50, 50], [0, 100]]
    for cluster in ("gke-eu", "gke-us"):
        row = {
            int(title.split(":")[0].removeprefix("round ")): title.split(": ", 2)[2]
            for title in cells(svg_text)
            if f"ModelService ml-team/qwen3  {cluster}: " in title
        }
        said = [row[r] for r in sorted(row)]
        runs = [s for n, s in enumerate(said) if n == 0 or said[n - 1] != s]
        assert runs[0].startswith("not routed (")
        assert runs[1:] == [
            "qwen3-0-6b-stable 90, qwen3-0-6b-canary 10",
            "qwen3-0-6b-stable 50, qwen3-0-6b-canary 50",
            "qwen3-0-6b-stable 0, qwen3-0-6b-canary 100",
        ], runs
        first = {s: min(r for r in row if row[r] == s) for s in runs}
        assert first["qwen3-0-6b-stable 50, qwen3-0-6b-canary 50"] == edits[0]["round"]
        assert first["qwen3-0-6b-stable 0, qwen3-0-6b-canary 100"] == edits[1]["round"]
    texts = [t.text for t in ET.fromstring(svg_text).iter(f"{SVG}text")]
    assert {"90/10", "50/50", "0/100"} <= set(texts)
    assert ("#333333", "qwen3-0-6b-stable") in legend(svg_text)
