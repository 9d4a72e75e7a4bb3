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
