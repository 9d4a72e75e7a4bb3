"""`render` and `simulate` check an XR as the API server would before any function sees it:
against its XRD's schema and CEL rules, and with kubectl's default strict field validation (an
unknown field refuses the XR, naming it), refused with the same words by both commands."""

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.main import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def quickstart(kind_file: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / "quickstart" / kind_file).read_text())


def edited(kind_file: str, *path_and_value: Any) -> dict[str, Any]:
    """A quickstart XR with one field set (the last path element may be new)."""
    xr = copy.deepcopy(quickstart(kind_file))
    *path, key, value = path_and_value
    node = xr
    for part in path:
        node = node[part]
    node[key] = value
    return xr


def fleet_with(tmp_path: Path, xr: dict[str, Any]) -> tuple[Path, Path]:
    """The quickstart fleet with `xr` in place of its file of the same kind."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for source in (EXAMPLES / "quickstart").glob("*.yaml"):
        (fleet / source.name).write_text(source.read_text())
    target = fleet / f"{str(xr['kind']).lower()}.yaml"
    target.write_text(yaml.safe_dump(xr))
    return fleet, target


def run(*args: str):
    return CliRunner().invoke(main, list(args))


INVALID = [
    pytest.param(
        edited("modelcache.yaml", "spec", "huggingFace", "repo", "a/b;reboot"),
        "spec.huggingFace.repo: 'a/b;reboot' does not match '^[A-Za-z0-9]",
        id="shell text in the repo (pattern)",
    ),
    pytest.param(
        edited("modeldeployment.yaml", "spec", "replicas", -3),
        "spec.replicas: -3 is less than the minimum of 0",
        id="negative replicas (minimum)",
    ),
    pytest.param(
        edited("modelcache.yaml", "spec", "source", "S3"),
        "spec: source S3 requires spec.s3",
        id="a source without its settings (CEL rule)",
    ),
]


@pytest.mark.parametrize(("xr", "message"), INVALID)
def test_render_and_simulate_refuse_an_invalid_xr_with_the_same_message(tmp_path, xr, message):
    fleet, path = fleet_with(tmp_path, xr)
    rendered = run("render", str(path))
    simulated = run("simulate", str(fleet), "--quiet")
    assert rendered.exit_code == simulated.exit_code == ExitCode.INPUT_ERROR
    assert rendered.stdout == simulated.stdout == ""
    said_by_render = rendered.stderr.removeprefix("modelfleet render: ")
    assert said_by_render == simulated.stderr.removeprefix("modelfleet simulate: ")
    assert said_by_render.startswith(f"{path}: {xr['kind']} ml-team/qwen3-0-6b is invalid: ")
    assert message in said_by_render
    assert len(said_by_render.strip().splitlines()) == 1


UNKNOWN = [
    pytest.param(
        edited("modelcache.yaml", "spec", "clusterSelecter", {"matchLabels": {"a": "b"}}),
        ["spec.clusterSelecter"],
        id="a misspelt selector (without it, every cluster)",
    ),
    pytest.param(
        edited("modelcache.yaml", "spec", "huggingFace", "revison", "v2.0"),
        ["spec.huggingFace.revison"],
        id="a misspelt revision",
    ),
    pytest.param(
        edited("modelcache.yaml", "spec", "sizeGB", 5) | {"specs": {}},
        ["spec.sizeGB", "specs"],
        id="two unknown fields, one at the top",
    ),
]


@pytest.mark.parametrize(("xr", "paths"), UNKNOWN)
def test_unknown_fields_refuse_the_xr_naming_each_in_render_and_simulate(tmp_path, xr, paths):
    fleet, path = fleet_with(tmp_path, xr)
    named = ", ".join(f'unknown field "{p}"' for p in paths)
    said = (
        f"{path}: ModelCache ml-team/qwen3-0-6b cannot be handled as a ModelCache: "
        f"strict decoding error: {named}"
    )
    rendered = run("render", str(path))
    simulated = run("simulate", str(fleet), "--quiet")
    assert rendered.exit_code == simulated.exit_code == ExitCode.INPUT_ERROR
    assert rendered.stdout == simulated.stdout == ""
    assert rendered.stderr.strip() == f"modelfleet render: {said}"
    assert simulated.stderr.strip() == f"modelfleet simulate: {said}"


def test_a_valid_xr_gets_no_warning():
    rendered = run("render", str(EXAMPLES / "quickstart" / "modelcache.yaml"))
    assert rendered.exit_code == ExitCode.OK and rendered.stderr == ""
