"""The project's packaging files are well-formed and agree with each other."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = sorted(p.name for p in (ROOT / "functions").iterdir() if p.is_dir())


def test_flake_parses() -> None:
    if shutil.which("nix-instantiate") is None:
        pytest.skip("nix-instantiate not installed (Debian package nix-bin); .ci/run installs it")
    subprocess.run(
        ["nix-instantiate", "--parse", str(ROOT / "flake.nix")], check=True, capture_output=True
    )


def test_project_file_points_at_real_folders() -> None:
    project = yaml.safe_load((ROOT / "crossplane-project.yaml").read_text())
    assert project["kind"] == "Project"
    for folder in project["spec"]["paths"].values():
        assert (ROOT / folder).is_dir(), folder


@pytest.mark.parametrize(
    "plural", ["inferenceclusters", "modelcaches", "modeldeployments", "modelreplicas"]
)
def test_each_composition_calls_one_function_of_this_repo(plural: str) -> None:
    comp = yaml.safe_load((ROOT / "apis" / plural / "composition.yaml").read_text())
    assert comp["spec"]["mode"] == "Pipeline"
    steps = comp["spec"]["pipeline"]
    assert len(steps) == 1
    assert steps[0]["functionRef"]["name"] in FUNCTIONS


MAX_LINES = 400  # small modules with one job each (docs/development.md)


def test_no_hand_written_python_file_passes_the_line_limit() -> None:
    generated = (
        ROOT / "packages" / "modelfleet-contracts" / "src" / "modelfleet_contracts" / "models"
    )
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    files = [ROOT / p for p in tracked if not (ROOT / p).is_relative_to(generated)]
    assert files, "git ls-files found no Python files"
    too_long = {
        str(f.relative_to(ROOT)): n
        for f in files
        if (n := len(f.read_text().splitlines())) > MAX_LINES
    }
    assert too_long == {}
