"""The release workflow (.github/workflows/release.yaml) cannot run here, so it is linted with
actionlint (a dev dependency: it runs wherever `uv sync` did) and held to what it must do: on a
tag v*, run the commands .ci/run runs, then build both platforms' images and the packages with
modelfleet-release and push them to ghcr.io with the job's token."""

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from modelfleet_devtools.paths import REPO_ROOT
from modelfleet_devtools.release import cli as release_cli

WORKFLOWS = REPO_ROOT / ".github" / "workflows"
RELEASE = WORKFLOWS / "release.yaml"
# actionlint is installed into the environment's scripts folder, beside this interpreter.
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def _workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(RELEASE.read_text())
    return loaded


def _run_lines(job: dict[str, Any]) -> list[str]:
    """The job's shell commands, one a line, in order (folded `>-` scripts are one line)."""
    lines: list[str] = []
    for step in job["steps"]:
        if "run" in step:
            lines += [line.strip() for line in step["run"].splitlines() if line.strip()]
    return lines


def test_actionlint_finds_nothing() -> None:
    assert ACTIONLINT.is_file(), f"no actionlint at {ACTIONLINT}: `uv sync` installs it"
    files = sorted(WORKFLOWS.glob("*.y*ml"))
    assert RELEASE in files
    result = subprocess.run(
        [str(ACTIONLINT), "-no-color", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_would_catch_a_broken_workflow(tmp_path: Path) -> None:
    """The lint is not vacuous: an undefined job in `needs` and an unknown context fail it."""
    broken = RELEASE.read_text().replace("needs: check", "needs: checks")
    broken = broken.replace("${{ github.ref_name }}", "${{ github.ref_nam }}")
    (tmp_path / "release.yaml").write_text(broken)
    result = subprocess.run(
        [str(ACTIONLINT), "-no-color", str(tmp_path / "release.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "checks" in result.stdout and "ref_nam" in result.stdout, result.stdout


def test_it_runs_on_version_tags_only() -> None:
    workflow = _workflow()
    # PyYAML reads the key `on` as the boolean True.
    assert workflow[True] == {"push": {"tags": ["v*"]}}


def test_only_the_release_job_may_write_packages() -> None:
    workflow = _workflow()
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert jobs["release"]["permissions"] == {"contents": "read", "packages": "write"}
    assert "permissions" not in jobs["check"]
    assert jobs["release"]["needs"] == "check"


def ci_commands() -> list[str]:
    """The `uv ...` commands .ci/run runs, in order."""
    script = (REPO_ROOT / ".ci" / "run").read_text()
    return [line.strip() for line in script.splitlines() if line.strip().startswith("uv ")]


def test_the_check_job_runs_what_ci_runs() -> None:
    commands = ci_commands()
    assert "uv sync --locked" in commands and "uv run pytest" in commands
    assert [c for c in _run_lines(_workflow()["jobs"]["check"]) if c.startswith("uv ")] == commands


def test_the_release_job_builds_both_platforms_with_modelfleet_release_and_logs_in() -> None:
    job = _workflow()["jobs"]["release"]
    lines = _run_lines(job)
    assert lines[0] == "uv sync --locked"
    [release] = [line for line in lines if "modelfleet-release" in line]
    words = shlex.split(release.split("|", 1)[0])
    assert words[:3] == ["uv", "run", "modelfleet-release"]
    options: dict[str, list[str]] = {}
    for flag, value in zip(words[3::2], words[4::2], strict=True):
        options.setdefault(flag, []).append(value)
    assert options == {
        "--registry": ["ghcr.io/modelfleet"],
        "--tag": ["$TAG"],
        "--platform": ["linux/amd64", "linux/arm64"],
        "--output": ["json"],
    }
    parsed = release_cli.build_parser().parse_args(words[3:])  # options the command takes
    assert parsed.registry.startswith("ghcr.io/")
    [step] = [s for s in job["steps"] if "modelfleet-release" in s.get("run", "")]
    assert step["env"] == {"TAG": "${{ github.ref_name }}"}
    [login] = [s for s in job["steps"] if s.get("uses", "").startswith("docker/login-action@")]
    assert login["with"]["registry"] == "ghcr.io"
    assert login["with"]["password"] == "${{ secrets.GITHUB_TOKEN }}"
    steps = job["steps"]
    assert steps.index(login) < steps.index(step), "log in before pushing"


def test_every_action_is_pinned_to_a_release() -> None:
    workflow = _workflow()
    used = [s["uses"] for job in workflow["jobs"].values() for s in job["steps"] if "uses" in s]
    assert used
    for action in used:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+|[0-9a-f]{40})", action), action
