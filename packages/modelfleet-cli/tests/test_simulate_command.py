"""`modelfleet simulate` as a command: distinct exit codes, verdicts that say when a fault
tested nothing, and clear words for a path that is not a fleet directory."""

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.simulate import simulate
from modelfleet_cli.simulate.command import exit_code

QUICKSTART = Path(__file__).resolve().parents[3] / "examples" / "quickstart"
STORAGE = QUICKSTART.parent / "storage"  # clusters only: no cache, so no hydration Job


def invoke(*args: str):
    return CliRunner().invoke(simulate, [*args, "--quiet"])


USAGE_ERRORS = [
    pytest.param(("--output", "yaml"), id="unknown output"),
    pytest.param(("--rounds", "0"), id="no rounds"),
    pytest.param(("--seed", "x"), id="seed not a number"),
    pytest.param(("--fault", "bogus:gke-dev"), id="an unknown fault"),
    pytest.param(("--fault", "cluster-flaps"), id="a fault without a target"),
    pytest.param(("--fault", "cluster-flaps:gke-dev@x"), id="a fault round not a number"),
]


@pytest.mark.parametrize("args", USAGE_ERRORS)
def test_usage_errors_have_their_own_exit_code(args):
    outcome = invoke(str(QUICKSTART), *args)
    assert outcome.exit_code == ExitCode.USAGE == click.UsageError.exit_code
    assert outcome.exit_code not in (ExitCode.ROUND_LIMIT, ExitCode.FAULT_NOT_SURVIVED)


def test_every_exit_code_means_one_thing():
    assert len({int(code) for code in ExitCode}) == len(ExitCode)


def test_a_file_is_named_as_such():
    outcome = invoke(str(QUICKSTART / "modelcache.yaml"))
    assert outcome.exit_code == ExitCode.INPUT_ERROR
    assert "is a file: simulate reads a directory" in outcome.output
    assert "no such" not in outcome.output


NO_EFFECT = [
    pytest.param(QUICKSTART, "cluster-flaps:no-such-cluster@2", id="a cluster that does not exist"),
    pytest.param(
        QUICKSTART, "hydration-fails:no-such-cluster@2", id="a hydration fault on no cluster"
    ),
    pytest.param(
        QUICKSTART,
        "observed-missing:ModelCache/ml-team/no-such-cache@2",
        id="an XR that is not there",
    ),
    pytest.param(
        QUICKSTART, "cache-deleted:ml-team/no-such-cache@2", id="deleting a cache that is not there"
    ),
    pytest.param(STORAGE, "hydration-fails:gke-eu", id="a hydration fault where nothing hydrates"),
]


@pytest.mark.parametrize(("fleet", "fault"), NO_EFFECT)
def test_a_fault_that_never_takes_effect_is_reported_and_fails_the_run(fleet, fault):
    outcome = invoke(str(fleet), "--fault", fault, "--output", "json")
    result = json.loads(outcome.output)
    [verdict] = result["faults"]
    assert verdict["took_effect"] is None and not verdict["survived"]
    assert verdict["verdict"] == "did not take effect"
    assert verdict["recovered"] is None, "nothing to recover from"
    assert result["result"] == "Ready"  # the fleet is fine; the fault tested nothing
    assert outcome.exit_code == ExitCode.FAULT_NOT_SURVIVED

    timeline = invoke(str(fleet), "--fault", fault)
    assert "did not take effect" in timeline.output and "survived" not in timeline.output


PAST_THE_LIMIT = [
    pytest.param(("--rounds", "5", "--fault", "cluster-flaps:gke-dev@9+2"), id="--rounds"),
    pytest.param(("--fault", "hydration-fails:gke-dev@31"), id="the default limit, 30"),
]


@pytest.mark.parametrize("args", PAST_THE_LIMIT)
def test_a_fault_past_the_round_limit_is_refused_saying_so(args):
    outcome = invoke(str(QUICKSTART), *args)
    assert outcome.exit_code == ExitCode.INPUT_ERROR
    assert outcome.stdout == ""
    [said] = outcome.stderr.splitlines()
    assert "is past the round limit" in said and "would never act" in said


VERDICTS = [
    pytest.param("Ready", ["survived", "survived"], ExitCode.OK, id="ready, every fault survived"),
    pytest.param(
        "Ready",
        ["survived", "not survived"],
        ExitCode.FAULT_NOT_SURVIVED,
        id="a fault not survived",
    ),
    pytest.param(
        "Ready", ["did not take effect"], ExitCode.FAULT_NOT_SURVIVED, id="a fault without effect"
    ),
    pytest.param("RoundLimit", [], ExitCode.ROUND_LIMIT, id="round limit"),
    pytest.param(
        "RoundLimit",
        ["contained"],
        ExitCode.ROUND_LIMIT,
        id="round limit, a lasting fault contained",
    ),
    pytest.param(
        "RoundLimit",
        ["not survived"],
        ExitCode.FAULT_NOT_SURVIVED,
        id="round limit, fault not survived",
    ),
]


@pytest.mark.parametrize(("result", "verdicts", "code"), VERDICTS)
def test_exit_code_follows_the_result_and_the_verdicts(result, verdicts, code):
    faults = [{"verdict": v, "survived": v == "survived"} for v in verdicts]
    assert exit_code({"result": result, "faults": faults}) == code


def test_a_bad_fault_in_simulation_yaml_is_bad_input(tmp_path):
    """What a file says is input (exit 1), what the command line says is usage (exit 2)."""
    for source in QUICKSTART.glob("*.yaml"):
        (tmp_path / source.name).write_text(source.read_text())
    (tmp_path / "simulation.yaml").write_text("faults: [{kind: bogus, target: gke-dev}]\n")
    outcome = invoke(str(tmp_path))
    assert outcome.exit_code == ExitCode.INPUT_ERROR
    assert "unknown fault 'bogus'" in outcome.output


def _floats(value) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in _floats(v)]
    return []


def test_json_prints_whole_numbers_as_integers():
    outcome = invoke(str(QUICKSTART), "--output", "json")
    assert outcome.exit_code == ExitCode.OK, outcome.output
    result = json.loads(outcome.output)
    deployments = [o for o in result["clusters"]["gke-dev"]["objects"] if o["kind"] == "Deployment"]
    assert [(d["replicas"], d["readyReplicas"]) for d in deployments] == [(2, 2)]
    assert '"replicas": 2.0' not in outcome.output
    assert _floats(result) == []
