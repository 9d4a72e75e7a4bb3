"""A fault acts from the round it is injected (`@ROUND`), whatever its kind: before ROUND the
fleet runs exactly as without it, from ROUND on it acts on whatever it targets that is there,
and `took_effect` is never before `applied_round`.

The fleet is quickstart with hydration Jobs that run four rounds (their pod starts in round 3,
once the cluster reports its hydrator ServiceAccount, and completes in round 6), so that a
fault can be injected before, during or after the Job's attempt."""

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_devtools.audit import record_text

# Test helpers sit beside the tests (pytest runs in importlib mode).
sys.path.insert(0, str(Path(__file__).parent))
from simulate_runs import simulate_with_timeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
CACHE = "ModelCache ml-team/qwen3-0-6b"
ROUND_LINE = re.compile(r"^round (\d+) ")


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


@pytest.fixture(scope="module")
def slow_hydration(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("slow-hydration")
    for source in (EXAMPLES / "quickstart").glob("*.yaml"):
        shutil.copy(source, directory / source.name)
    (directory / "simulation.yaml").write_text(yaml.safe_dump({"hydrationRounds": 4}))
    return directory


def run(functions, directory: Path, *faults: str) -> tuple[str, dict[str, Any]]:
    text, result = simulate_with_timeline(functions, directory, *faults, rounds=16)
    record_text(f"modelfleet simulate {directory.name} {' '.join(faults)}", text)
    return text, result


@pytest.fixture(scope="module")
def baseline(functions, slow_hydration) -> tuple[str, dict[str, Any]]:
    return run(functions, slow_hydration)


def before(text: str, result: dict[str, Any], round_no: int) -> dict[str, Any]:
    """What the run showed before `round_no`: timeline lines, XR histories, events."""
    lines, current = [], 0
    for line in text.splitlines():
        found = ROUND_LINE.match(line)
        current = int(found[1]) if found else current
        if current < round_no:
            lines.append(line)
    return {
        "timeline": lines,
        "history": {
            xr: [h for h in entry["history"] if h["round"] < round_no]
            for xr, entry in result["xrs"].items()
        },
        "events": [e for e in result["events"] if e["round"] < round_no],
    }


def cache_messages(text: str) -> list[tuple[int, str]]:
    """(round, line) of every line printed under the cache's header."""
    out, current, under_cache = [], 0, False
    for line in text.splitlines():
        found = ROUND_LINE.match(line)
        if found:
            current, under_cache = int(found[1]), CACHE in line
        elif under_cache:
            out.append((current, line.strip()))
    return out


# fault, the round it first acts (None: nothing it targets is there from ROUND on), whether
# the fleet ends Ready (a Job whose every attempt fails does not, by design)
FAULTS = [
    pytest.param(
        "hydration-fails:gke-dev@1",
        3,
        True,
        id="hydration fault before the pod starts: its first attempt",
    ),
    pytest.param(
        "hydration-fails:gke-dev@4",
        4,
        True,
        id="hydration fault while an attempt runs: that attempt, at once",
    ),
    pytest.param(
        "hydration-fails:gke-dev@10",
        None,
        True,
        id="hydration fault after the Job completed: nothing",
    ),
    pytest.param(
        "hydration-fails-always:gke-dev@4", 4, False, id="every attempt fails from ROUND: Failed"
    ),
    pytest.param(
        "hydration-fails-always:gke-dev@3+2",
        3,
        True,
        id="attempts fail for ROUNDS, the next completes",
    ),
    pytest.param("cluster-flaps:gke-dev@5+2", 5, True, id="cluster flaps"),
    pytest.param("observed-missing:*@5", 5, True, id="observed resources missing"),
    pytest.param("requirement-unresolved:*@5", 5, True, id="requirements unresolved"),
    pytest.param("cluster-deleted:gke-dev@5+2", 5, True, id="cluster deleted and re-applied"),
    pytest.param("cache-deleted:ml-team/qwen3-0-6b@5+2", 5, True, id="cache deleted while in use"),
]


@pytest.mark.parametrize(("fault", "acts", "recovers"), FAULTS)
def test_a_fault_acts_from_its_round_and_not_before(
    functions, slow_hydration, baseline, fault, acts, recovers
):
    text, result = run(functions, slow_hydration, fault)
    [verdict] = result["faults"]
    injected = int(fault.split("@")[1].split("+")[0])
    assert verdict["applied_round"] == injected
    assert f"round {injected:<3} ! fault injected: {verdict['fault']}" in text.splitlines()
    assert verdict["took_effect"] == acts, verdict
    assert acts is None or acts >= injected
    # before ROUND the fleet runs as if there were no fault
    assert before(text, result, injected) == before(*baseline, injected)
    if acts is None:  # the run tested nothing: the whole run is the baseline's
        assert result["result"] == "Ready" and not verdict["survived"]
        assert (verdict["verdict"], verdict["recovered"]) == ("did not take effect", None)
        assert (
            before(text, result, result["rounds"] + 1)["history"]
            == before(*baseline, result["rounds"] + 1)["history"]
        )
        return
    assert (result["result"] == "Ready") is recovers, result["reason"]
    # A lasting fault the fleet cannot be Ready under is contained, never called survived.
    assert verdict["verdict"] == ("survived" if recovers else "contained"), verdict
    assert verdict["survived"] is recovers
    if fault.startswith("hydration"):
        failed = [r for r, line in cache_messages(text) if "attempts failed" in line]
        # the attempt fails in round `acts`; the cache reads it from its Job the round after
        assert failed and min(failed) == acts + 1, cache_messages(text)
