"""Under CI a skipped test fails the run unless .ci/allowed-skips.txt allows its reason; off
CI a skip is a skip. Each row runs a small suite in its own pytest process."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from modelfleet_devtools.paths import REPO_ROOT
from modelfleet_devtools.skip_guard import DEFAULT_ALLOWED, allowed_patterns

SUITE = """
import pytest

def test_runs():
    pass

def test_needs_the_crds():
    pytest.skip("upstream CRDs not found at /nowhere")

@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False
"""
SECTION = "skipped under CI (not in the allowed list)"


def run_suite(tmp_path: Path, ci: str | None, allowed: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "allowed.txt").write_text(allowed)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["MODELFLEET_ALLOWED_SKIPS"] = str(tmp_path / "allowed.txt")
    if ci is not None:
        env["CI"] = ci
    plugins = ["-p", "modelfleet_devtools.skip_guard", "-p", "no:cacheprovider"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "-q", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("ci", "allowed", "fails"),
    [
        pytest.param("true", "", True, id="CI: an unexpected skip fails the run"),
        pytest.param(
            "true", "# why\n^upstream CRDs not found\n", False, id="CI: an allowed reason passes"
        ),
        pytest.param("true", "^something else$\n", True, id="CI: only another reason allowed"),
        pytest.param(None, "", False, id="off CI: a skip is a skip"),
        pytest.param("false", "", False, id="CI=false"),
    ],
)
def test_a_skip_fails_the_run_only_under_ci_and_unless_allowed(tmp_path, ci, allowed, fails):
    done = run_suite(tmp_path, ci, allowed)
    assert (done.returncode != 0) is fails, done.stdout
    assert (SECTION in done.stdout) is fails
    if fails:
        unexpected = done.stdout.split(SECTION, 1)[1]
        assert "test_needs_the_crds: upstream CRDs not found at /nowhere" in unexpected
        assert "test_expected_to_fail" not in unexpected, "an xfail is not a skip"


def test_the_allowed_list_is_the_one_ci_reads_and_never_allows_what_ci_must_run():
    assert DEFAULT_ALLOWED == REPO_ROOT / ".ci" / "allowed-skips.txt"
    patterns = allowed_patterns(DEFAULT_ALLOWED)
    assert patterns
    for reason in (
        "upstream CRDs not found at /x/shared/schemas; custom kinds not validated",
        "real Crossplane CLI v2.5 unavailable: no 'crossplane' binary",
        "real control plane binaries not found: no 'kubectl' binary",
    ):
        assert not any(p.search(reason) for p in patterns), reason


def test_ci_run_enforces_it_and_still_calls_uv_run_pytest():
    script = (REPO_ROOT / ".ci" / "run").read_text()
    assert "\nuv run pytest" in script
    assert 'export CI="${CI:-true}"' in script


@pytest.mark.parametrize(
    ("variable", "name"),
    [
        pytest.param("MODELFLEET_SHARED_SCHEMAS", "SHARED_SCHEMAS_DIR", id="the upstream CRDs"),
    ],
)
def test_the_variable_the_readme_names_points_the_suite_elsewhere(tmp_path, variable, name):
    assert f"`{variable}`" in (REPO_ROOT / "README.md").read_text()
    env = dict(os.environ, **{variable: str(tmp_path)})
    code = f"from modelfleet_devtools import paths; print(paths.{name})"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str(tmp_path.resolve())
