"""`modelfleet simulate` on a bigger fleet stays readable and says what it is doing: a
ModelCache's line stays short whatever the number of clusters, and a long round says how far
it got."""

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS, simulate_fleet
from modelfleet_cli.simulate.timeline import NAMED, Progress, Timeline, summarize
from modelfleet_devtools.audit import record_text

sys.path.insert(0, str(Path(__file__).parent))
from quickstart_fleet import fleet_names, write_quickstart_fleet
from simulate_runs import blocks, is_message, simulate_with_timeline


def cache(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ready = sum(1 for r in rows if r["phase"] == "Ready")
    return {
        "kind": "ModelCache",
        "metadata": {"name": "m00", "namespace": "ml-team"},
        "status": {"clusters": rows, "summary": {"ready": f"{ready}/{len(rows)}"}},
    }


def rows(phases: dict[str, int]) -> list[dict[str, Any]]:
    out = []
    for phase, count in phases.items():
        for _ in range(count):
            name = f"c{len(out):03d}"
            row = {"name": name, "phase": phase}
            if phase != "Ready":
                row["message"] = f"cluster {name} is not connected; nothing staged there yet"
            out.append(row)
    return sorted(out, key=lambda r: r["name"])


SUMMARIES = [
    pytest.param(
        {"Hydrating": 1},
        "c000 Hydrating  0/1 ready",
        id="one cluster: named with its phase",
    ),
    pytest.param(
        {"Ready": 2, "Pending": 1},
        "c000 Ready, c001 Ready, c002 Pending  2/3 ready",
        id="as many clusters as are named: each with its phase",
    ),
    pytest.param(
        {"Pending": 3, "Hydrating": 7, "Ready": 290},
        "300 clusters: 290 Ready, 7 Hydrating, 3 Pending; not Ready: c000 Pending, c001 "
        "Pending, c002 Pending and 7 more  290/300 ready",
        id="300 clusters: counts by phase, the first not Ready named",
    ),
    pytest.param(
        {"Ready": 2, "Unused": 8},
        "10 clusters: 8 Unused, 2 Ready  2/10 ready",
        id="a deployment's unused clusters: counted, not named",
    ),
    pytest.param(
        {"Ready": 1000},
        "1000 clusters: 1000 Ready  1000/1000 ready",
        id="1000 clusters all Ready: one count",
    ),
]


@pytest.mark.parametrize(("phases", "line"), SUMMARIES)
def test_a_cache_line_counts_clusters_by_phase_past_a_few(phases, line):
    assert summarize(cache(rows(phases)))[0] == line


def test_a_few_clusters_messages_are_printed_and_every_one_is_recorded():
    out = io.StringIO()
    timeline = Timeline(out=out)
    timeline.record(1, [cache(rows({"Pending": 300}))])
    printed = out.getvalue().splitlines()
    assert len(printed) == 1 + NAMED + 1, printed
    assert printed[-1].strip() == f"and {300 - NAMED} more clusters' messages"
    assert len(timeline.messages) == 300, "the verdicts read every message the statuses gave"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_long_round_prints_which_xr_and_how_far_every_few_seconds():
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, clock=clock)
    progress.limit = 30
    for done in range(1, 301):
        clock.now += 1.0
        progress.step(f"reconciling ModelCache ml-team/m{done % 10:02d}", done, 300)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 300 // int(Progress.LINE_EVERY)
    assert lines[0] == "simulate: round 1/30, reconciling ModelCache ml-team/m00 (10/300)"
    quiet = io.StringIO()
    Progress(quiet, enabled=False, clock=clock).step("reconciling", 1, 1)
    assert quiet.getvalue() == ""


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def test_every_xr_of_a_round_is_reported_and_the_result_does_not_change(functions, tmp_path):
    """Progress is told of each XR it reconciles, by name, with how many of how many; stdout's
    JSON is the same with or without it."""
    directory = write_quickstart_fleet(tmp_path, *fleet_names(3, 2))
    runs = []
    for every in (0.0, None):
        stream = io.StringIO()
        progress = Progress(stream, enabled=every is not None)
        progress.LINE_EVERY = every or 0.0
        result = simulate_fleet(
            directory,
            rounds=None,
            fault_texts=(),
            timeline=Timeline(),
            progress=progress,
            call=functions,
        )
        runs.append((stream.getvalue().splitlines(), json.dumps(result, sort_keys=True)))
    (lines, with_progress), (silent, without) = runs
    assert with_progress == without and silent == []
    first_round = [line for line in lines if line.startswith("simulate: round 1/30, reconciling")]
    # InferenceClusters, ModelCaches, ModelDeployments (no replica yet: no cluster is
    # connected); the shards the caches compose join the round they are composed in.
    xrs = 3 + 2 + 2
    assert first_round[0] == f"simulate: round 1/30, reconciling InferenceCluster c000 (1/{xrs})"
    xrs += 2
    assert first_round[-1] == (
        f"simulate: round 1/30, reconciling ModelDeployment ml-team/m01 ({xrs}/{xrs})"
    )
    assert any("providers applying managed resources" in line for line in lines)


def test_lines_do_not_grow_with_the_fleet(functions, tmp_path):
    """An XR's line at 22 clusters is no wider than at 11 but for a count's digit, and the
    clusters' messages under it are a few (the functions' condition messages, which name at
    most 10 clusters, are printed as they are)."""
    widest = {}
    for clusters in (11, 22):
        directory = write_quickstart_fleet(tmp_path / str(clusters), *fleet_names(clusters, 2))
        timeline, result = simulate_with_timeline(functions, directory)
        record_text(f"modelfleet simulate {clusters} clusters", timeline)
        assert result["result"] == "Ready", result["reason"]
        headers = [line for line in timeline.splitlines() if line.startswith("round ")]
        widest[clusters] = max(len(line) for line in headers)
        for _, ident, lines in blocks(timeline):
            messages = [line for line in lines if is_message(line)]
            assert len(messages) <= NAMED + 1, (ident, messages)
    assert widest[22] <= widest[11] + 1, widest
