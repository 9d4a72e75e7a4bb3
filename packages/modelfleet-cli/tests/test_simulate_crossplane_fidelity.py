"""Where `modelfleet simulate` follows what the real control plane (Crossplane core v2.3,
provider-kubernetes) showed: every XR carries Crossplane's `Responsive=True
WatchCircuitClosed`; a composed resource is "not yet ready" (an event each reconcile) only
while it really is not; and a ModelReplica passes through `WorkloadReady=False Progressing`
while its Deployment exists but its pods are still starting."""

import sys
from pathlib import Path
from typing import Any

import pytest
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS

sys.path.insert(0, str(Path(__file__).parent))
from simulate_runs import simulate_with_timeline

QUICKSTART = Path(__file__).resolve().parents[3] / "examples" / "quickstart"
NOT_YET_READY = "is not yet ready"


@pytest.fixture(scope="module")
def quickstart() -> tuple[str, dict[str, Any]]:
    with running_functions(start=FUNCTIONS) as functions:
        return simulate_with_timeline(functions, QUICKSTART)


def test_every_xr_carries_crossplanes_responsive_condition(quickstart):
    _, result = quickstart
    assert result["result"] == "Ready"
    for ident, xr in result["xrs"].items():
        responsive = [c for c in xr["status"]["conditions"] if c["type"] == "Responsive"]
        assert [(c["status"], c["reason"]) for c in responsive] == [
            ("True", "WatchCircuitClosed")
        ], ident


def test_the_replica_is_progressing_while_its_pods_start(quickstart):
    timeline, result = quickstart
    [replica] = [i for i, x in result["xrs"].items() if x["kind"] == "ModelReplica"]
    summaries = [h["summary"] for h in result["xrs"][replica]["history"]]
    # Created, then its Deployment read back before it is Available, then Ready.
    assert summaries[-3:] == [
        "Progressing  0/2 ready",
        "Progressing  0/2 ready",
        "Ready  2/2 ready",
    ]
    lines = timeline.splitlines()
    starting = next(i for i, line in enumerate(lines) if line.strip() == "0/2 pods ready")
    assert replica in lines[starting - 1]
    assert any("WorkloadReady=False Progressing" in line for line in lines[:starting])


def test_composed_resources_are_not_yet_ready_only_while_they_are_not(quickstart):
    _, result = quickstart
    unready = [e for e in result["events"] if NOT_YET_READY in e["message"]]
    # While the weights stage, the hydration Job is reported, as Crossplane would.
    assert any("hydrate" in e["message"] for e in unready)
    # Once an XR's composed resources are all ready it is not told otherwise again: the
    # InferenceCluster from the round it is Ready, everyone in the last round.
    [cluster] = [i for i, x in result["xrs"].items() if x["kind"] == "InferenceCluster"]
    ready_from = next(
        h["round"] for h in result["xrs"][cluster]["history"] if h["summary"] == "Ready"
    )
    assert not [e for e in unready if e["xr"] == cluster and e["round"] >= ready_from]
    assert not [e for e in unready if e["round"] == result["rounds"]]
