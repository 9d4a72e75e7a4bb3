"""The simulated provider-kubernetes echoes a Secret as `--sanitize-secrets` makes it (the
default) or with its values (`sanitizeSecrets: false` in simulation.yaml), and
compose-model-cache warns, once, in the second case only; the token never reaches the
timeline or the JSON result either way."""

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_cli.simulate.fleet import FleetError
from modelfleet_devtools.audit import record_text
from modelfleet_devtools.secrets import EXAMPLE_HF_TOKEN, encodings

sys.path.insert(0, str(Path(__file__).parent))
from simulate_runs import simulate_with_timeline

GATED = Path(__file__).resolve().parents[3] / "examples" / "gated-model"
WARNING = "CredentialsRedacted ExposedByProvider"


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def _fleet(tmp_path: Path, settings: str | None) -> Path:
    fleet = tmp_path / "gated-model"
    shutil.copytree(GATED, fleet, ignore=shutil.ignore_patterns("render"))
    if settings is not None:
        (fleet / "simulation.yaml").write_text(settings)
    return fleet


def _simulate(functions: Any, fleet: Path) -> tuple[dict[str, Any], str]:
    timeline, result = simulate_with_timeline(functions, fleet)
    text = json.dumps(result, default=str)
    record_text("modelfleet simulate gated-model (sanitizeSecrets)", timeline + text)
    return result, timeline


@pytest.mark.parametrize(
    ("settings", "warnings"),
    # Without the flag: one Warning on the shard whose Object echoes the token, and one on
    # the cache, which reports what its shards do.
    [(None, 0), ("sanitizeSecrets: true\n", 0), ("sanitizeSecrets: false\n", 2)],
    ids=["default", "with the flag", "without the flag"],
)
def test_the_cache_warns_once_when_the_provider_echoes_the_token(
    functions, tmp_path, settings, warnings
):
    result, timeline = _simulate(functions, _fleet(tmp_path, settings))
    about = [e for e in result["events"] if WARNING in e["message"]]
    assert len(about) == warnings
    assert len({e["xr"] for e in about}) == warnings, "once on each"
    assert all(e["severity"] == "Warning" and "--sanitize-secrets" in e["message"] for e in about)
    assert ("CredentialsRedacted=False ExposedByProvider" in timeline) is bool(warnings)
    # The cache still becomes Ready: the warning is about exposure, not about staging.
    assert result["result"] == "Ready"
    for form in encodings(EXAMPLE_HF_TOKEN):
        assert form not in timeline and form not in json.dumps(result, default=str)


def test_a_setting_that_is_not_a_boolean_is_one_clear_error(tmp_path):
    with pytest.raises(FleetError, match="sanitizeSecrets must be true or false"):
        _simulate(None, _fleet(tmp_path, "sanitizeSecrets: 'no'\n"))
