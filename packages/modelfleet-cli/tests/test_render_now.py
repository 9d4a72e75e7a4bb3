"""`modelfleet render` is deterministic where the functions decide against the time: it tells
them the time (function context `modelfleet.io/now`): `--now` when given, else the latest
condition transition of its inputs, else 2024-01-01. Rendered here: the quickstart
InferenceCluster whose workload cluster stopped answering, which marks a retry on its
Namespace's Object at the current half-pace slot (compose_inference_cluster/reconnect.py)."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelfleet_cli.main import main
from modelfleet_cli.render_now import DEFAULT_NOW, latest_transition, render_now
from modelfleet_devtools.paths import EXAMPLES_DIR
from modelfleet_devtools.provider_words import connection_refused

QUICKSTART = EXAMPLES_DIR / "quickstart"
RETRY = "modelfleet.io/connection-retry"
LOST_AT = "2025-06-01T12:00:00Z"  # when the provider first failed to reach the cluster
SLOT_LATER, DAY_LATER = "2025-06-01T12:00:10Z", "2025-06-02T12:00:00Z"
REFUSED = connection_refused("/api/v1/namespaces/modelfleet")


def lost_cluster(tmp_path: Path) -> Path:
    """The quickstart cluster's observed resources, its Namespace's Object failing since
    LOST_AT, as provider-kubernetes leaves it."""
    docs = list(yaml.safe_load_all((QUICKSTART / "render" / "observed-gke-dev.yaml").read_text()))
    for doc in docs:
        if doc["metadata"]["annotations"]["crossplane.io/composition-resource-name"] == (
            "workload-namespace"
        ):
            doc["status"]["conditions"].append(
                {
                    "type": "Synced",
                    "status": "False",
                    "reason": "ReconcileError",
                    "message": REFUSED,
                    "lastTransitionTime": LOST_AT,
                }
            )
    path = tmp_path / "observed-lost.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def render(observed: Path, *flags: str) -> Any:
    return CliRunner().invoke(
        main,
        [
            "render",
            str(QUICKSTART / "inferencecluster.yaml"),
            "--observed-resources",
            str(observed),
            "--required-resources",
            str(QUICKSTART / "render" / "providerconfigs.yaml"),
            *flags,
        ],
    )


def retry_mark(stdout: str) -> str | None:
    docs = [d for d in yaml.safe_load_all(stdout) if d]
    [namespace] = [
        d
        for d in docs[1:]
        if d["kind"] == "Object"
        and d["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
        == "workload-namespace"
    ]
    return namespace["metadata"]["annotations"].get(RETRY)


def connected(stdout: str) -> str:
    xr = next(yaml.safe_load_all(stdout))
    return next(c["reason"] for c in xr["status"]["conditions"] if c["type"] == "Connected")


def test_rendering_a_lost_cluster_twice_prints_the_same_thing(tmp_path: Path) -> None:
    observed = lost_cluster(tmp_path)
    first, second = render(observed), render(observed)
    assert first.exit_code == 0, first.output
    assert connected(first.stdout) == "Unavailable"
    assert first.stdout == second.stdout
    # Decided at the inputs' latest transition: the provider's failure.
    assert retry_mark(first.stdout) == LOST_AT


@pytest.mark.parametrize(
    ("case", "now", "mark"),
    [
        ("at the failure", LOST_AT, LOST_AT),
        ("within the same 10 s slot of the 20 s check", "2025-06-01T12:00:09Z", LOST_AT),
        (
            "a slot later: the provider is asked again",
            "2025-06-01T12:00:10Z",
            "2025-06-01T12:00:10Z",
        ),
        (
            "a day later, written with an offset",
            "2025-06-02T14:00:00+02:00",
            "2025-06-02T12:00:00Z",
        ),
    ],
)
def test_now_sets_the_time_the_functions_decide_at(
    tmp_path: Path, case: str, now: str, mark: str
) -> None:
    done = render(lost_cluster(tmp_path), "--now", now, "--include-context")
    assert done.exit_code == 0, done.output
    assert retry_mark(done.stdout) == mark, case
    context = [d for d in yaml.safe_load_all(done.stdout) if d and d["kind"] == "Context"]
    # What the functions were told, as given (in UTC), whatever the inputs' own stamps.
    told = parse(context[0]["fields"]["modelfleet.io/now"])
    assert told == parse(now) == render_now({}, [], parse(now))


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize("bad", ["tomorrow", "2025-06-01T12:00:00", "2025-13-01T00:00:00Z"])
def test_a_now_that_is_no_rfc3339_timestamp_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    done = render(lost_cluster(tmp_path), "--now", bad)
    assert done.exit_code == 2 and done.stdout == ""
    assert "RFC 3339" in done.stderr


def condition(stamp: Any) -> dict[str, Any]:
    return {"type": "Ready", "status": "True", "lastTransitionTime": stamp}


@pytest.mark.parametrize(
    ("case", "xr", "observed", "now"),
    [
        ("no conditions anywhere", {}, [], DEFAULT_NOW),
        (
            "the latest of the XR's and the observed resources'",
            {"status": {"conditions": [condition("2025-01-01T00:00:00Z")]}},
            [{"status": {"conditions": [condition("2025-03-01T00:00:00Z")]}}, {}],
            datetime(2025, 3, 1, tzinfo=UTC),
        ),
        (
            "a stamp that is no time is not one",
            {"status": {"conditions": [condition("soon"), condition(7), "x"]}},
            [{"status": "broken"}],
            DEFAULT_NOW,
        ),
    ],
)
def test_the_default_time_comes_from_the_inputs(case, xr, observed, now) -> None:
    assert render_now(xr, observed) == now, case
    assert latest_transition([xr, *observed]) in (now, None)
