"""The simulate timeline: every printed line names its XR or sits under its header, and what
an XR reports about the XRs it composes is what they say in the same round, not a round
before."""

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_cli.simulate.timeline import Timeline, summarize
from modelfleet_devtools.audit import record_text

# Test helpers sit beside the tests (pytest runs in importlib mode).
sys.path.insert(0, str(Path(__file__).parent))
from simulate_runs import CONDITION, HEADER, blocks, is_message, simulate_with_timeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def xr(kind: str, name: str, phase: str, conditions: dict[str, str]) -> dict[str, Any]:
    return {
        "kind": kind,
        "metadata": {"name": name, "namespace": "ml-team"},
        "status": {
            "phase": phase,
            "conditions": [
                {"type": t, "status": s, "reason": "Because"} for t, s in conditions.items()
            ],
        },
    }


def test_a_condition_change_alone_is_printed_under_its_own_xr():
    out = io.StringIO()
    timeline = Timeline(out=out)
    replica = "ModelReplica"
    b = xr(replica, "b", "Progressing", {})  # printed after a: its block ends round 1
    timeline.record(1, [xr(replica, "a", "Progressing", {"WorkloadReady": "False"}), b])
    out.truncate(0)
    out.seek(0)
    # a's phase and summary stay; only its condition changes
    timeline.record(2, [xr(replica, "a", "Progressing", {"WorkloadReady": "True"}), b])
    lines = out.getvalue().splitlines()
    assert [line.split()[:4] for line in lines[:1]] == [["round", "2", replica, "ml-team/a"]]
    assert [line.strip() for line in lines[1:]] == ["WorkloadReady=True Because"]


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def timeline_and_result(functions, directory: Path, *faults: str) -> tuple[str, dict[str, Any]]:
    text, result = simulate_with_timeline(functions, directory, *faults)
    record_text(f"modelfleet simulate {directory.name} {' '.join(faults)}", text)
    return text, result


RUNS = [
    pytest.param("quickstart", (), id="quickstart"),
    pytest.param(
        "quickstart",
        ("hydration-fails:gke-dev@3", "cluster-flaps:gke-dev@5+2"),
        id="quickstart with faults",
    ),
    pytest.param("multinode", (), id="multinode"),
]


@pytest.mark.parametrize(("example", "faults"), RUNS)
def test_every_condition_line_sits_under_the_xr_that_has_it(functions, example, faults):
    text, result = timeline_and_result(functions, EXAMPLES / example, *faults)
    # conditions are set by type and never removed: the final status has every type the
    # XR ever had
    types = {
        ident: {c["type"] for c in xr["status"].get("conditions", [])}
        for ident, xr in result["xrs"].items()
    }
    checked = 0
    for _, ident, lines in blocks(text):
        for line in lines:
            condition = CONDITION.match(line)
            if condition:
                assert condition[1] in types[ident], f"{line!r} printed under {ident}"
                checked += 1
    assert checked > 10


def test_a_deployment_reports_its_replicas_words_of_the_same_round(functions):
    text, _ = timeline_and_result(functions, EXAMPLES / "quickstart")
    said_by_replica: list[tuple[int, str]] = []
    quoted = 0
    for round_no, ident, lines in blocks(text):
        if ident.startswith("ModelReplica "):
            said_by_replica += [(round_no, line) for line in lines if is_message(line)]
    for round_no, ident, lines in blocks(text):
        if not ident.startswith("ModelDeployment "):
            continue
        for line in lines:
            text_of_cluster = line.partition("gke-dev: ")[2]
            if any(text_of_cluster == said for _, said in said_by_replica):
                latest = [said for r, said in said_by_replica if r <= round_no][-1]
                assert text_of_cluster == latest, f"round {round_no}: stale {line!r}"
                quoted += 1
    assert quoted >= 3


def inference_cluster(*conditions: tuple[str, str, str]) -> dict[str, Any]:
    """An InferenceCluster carrying (type, status, reason) conditions."""
    return {
        "kind": "InferenceCluster",
        "metadata": {"name": "gke-dev"},
        "status": {"conditions": [{"type": t, "status": s, "reason": r} for t, s, r in conditions]},
    }


NOT_READY = ("Ready", "False", "Creating")


@pytest.mark.parametrize(
    ("conditions", "summary"),
    [
        pytest.param(
            [("Ready", "True", "Available"), ("Connected", "True", "Available")],
            "Ready",
            id="ready",
        ),
        pytest.param(
            [
                NOT_READY,
                ("Connected", "False", "Unavailable"),
                ("StorageReady", "False", "Creating"),
            ],
            "not ready: Connected Unavailable",
            id="not connected yet: its first False condition",
        ),
        pytest.param(
            [
                NOT_READY,
                ("Connected", "True", "Available"),
                ("StorageReady", "False", "StorageClassNotFound"),
            ],
            "not ready: StorageReady StorageClassNotFound",
            id="connected, its storage class missing",
        ),
        pytest.param(
            [NOT_READY, ("Connected", "True", "Resolving"), ("StorageReady", "True", "Available")],
            "not ready: Connected Resolving",
            id="held after it connected: Resolving, not Ready's own Creating",
        ),
        pytest.param(
            [NOT_READY, ("Connected", "False", "Resolving"), ("StorageReady", "False", "Creating")],
            "not ready: Connected Resolving",
            id="held before it ever connected",
        ),
        pytest.param(
            [
                NOT_READY,
                ("StorageReady", "False", "Creating"),
                ("Connected", "True", "Resolving"),
            ],
            "not ready: Connected Resolving",
            id="held: what holds it, not a condition kept as it was",
        ),
        pytest.param([NOT_READY], "not ready: Ready Creating", id="nothing but Ready"),
    ],
)
def test_an_inference_clusters_summary_names_what_holds_it(conditions, summary):
    assert summarize(inference_cluster(*conditions)) == (summary, [])


def test_a_held_inference_cluster_says_resolving_in_its_summary_as_the_docs_say(functions):
    """Crossplane has not resolved its provider config for a round: the header says so (it
    read `not ready: Ready Creating`, the reason only on the line below), and docs/cli.md
    quotes the summary as printed."""
    text, _ = timeline_and_result(functions, EXAMPLES / "quickstart", "requirement-unresolved:*@6")
    headers = [HEADER.match(line) for line in text.splitlines()]
    [summary] = [h[3] for h in headers if h and (h[1], h[2]) == ("6", "InferenceCluster gke-dev")]
    assert summary == "not ready: Connected Resolving"
    assert f"`{summary}`" in (EXAMPLES.parent / "docs" / "cli.md").read_text()
