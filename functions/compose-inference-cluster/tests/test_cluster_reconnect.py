"""A lost cluster is retried at its own check interval, not at provider-kubernetes' error
backoff (a minute once the outage has lasted that long): while its Namespace's Object fails,
the InferenceCluster changes an annotation on that Object once per check, which the provider
answers with an observation at once, and asks Crossplane to run it again as often. Connected
and at rest, nothing of this is there (while Crossplane's circuit breaker drops the XR's events
it looks at the same pace: test_cluster_recheck.py)."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from compose_inference_cluster.core import NAMESPACE, PROVIDER_CONFIG, compose_cluster
from compose_inference_cluster.reconnect import RETRY_ANNOTATION, retry_mark, retry_pace
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelfleet_contracts.edge.now import NOW_KEY
from modelfleet_contracts.edge.observed import read_observed
from modelfleet_devtools.provider_words import connection_refused
from modelfleet_devtools.requests import conditions, desired_resources, run_function_request
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import RUNNER, cluster, run

REFUSED = connection_refused("/api/v1/namespaces/modelfleet")
ACTIVE = {"phase": "Active"}


def lost(xr: dict[str, Any], *, error: str | None = REFUSED) -> dict[str, Any]:
    """The cluster's composed resources as observed once it was Active, then (with `error`)
    as provider-kubernetes leaves them when it can no longer reach it: Ready as last seen,
    Synced False with its words."""
    composed = desired_resources(run(xr))
    return {
        PROVIDER_CONFIG: composed[PROVIDER_CONFIG],
        NAMESPACE: observed_object(
            composed[NAMESPACE], remote_status=ACTIVE, ready=True, synced_error=error
        ),
    }


def retry_annotation(rsp) -> str | None:
    annotations = desired_resources(rsp)[NAMESPACE]["metadata"].get("annotations") or {}
    return annotations.get(RETRY_ANNOTATION)


@pytest.mark.parametrize(
    ("case", "check_interval", "every"),
    [
        ("the default", None, 20),
        ("a platform team that checks sooner", "10s", 10),
        ("a check interval under the quickest recheck of any XR", "1s", 5),
        ("a fleet checked every few minutes: the provider's own minute is as fast", "5m", 60),
    ],
)
def test_a_lost_cluster_is_retried_at_its_check_interval(case, check_interval, every):
    connection = {"checkInterval": check_interval} if check_interval else {}
    xr = cluster(None)
    xr["spec"]["connection"].update(connection)
    rsp = run(xr, lost(xr))
    connected = conditions(rsp)["Connected"]
    assert connected.reason == "Unavailable", case
    assert REFUSED in connected.message
    assert retry_annotation(rsp), "the provider is asked to observe the namespace again"
    assert rsp.meta.ttl.ToTimedelta() == timedelta(seconds=every), case


def test_a_connected_cluster_carries_no_retry_and_asks_for_no_quick_run():
    xr = cluster(None)
    rsp = run(xr, lost(xr, error=None))
    assert conditions(rsp)["Connected"].reason == "Available"
    assert retry_annotation(rsp) is None
    assert rsp.meta.ttl.ToTimedelta() != retry_pace("20s")


def test_the_retry_changes_at_every_timed_run_and_not_at_the_runs_its_write_triggers():
    """Crossplane runs the XR again after the TTL asked, jittered by up to 10%: each such run
    changes the annotation (one observation asked of the provider). The runs its own write
    triggers, a moment later, change nothing (no loop of writes)."""
    xr = cluster(None)
    observed = {k: read_observed(_struct(v)) for k, v in lost(xr).items()}
    pace = retry_pace("20s")
    start = datetime(2026, 12, 2, 16, 10, 0, tzinfo=UTC)

    def mark(at: datetime) -> str:
        outcome = compose_cluster(xr, observed, None, at)
        assert outcome.recheck_in == pace
        desired = outcome.desired[NAMESPACE]
        assert isinstance(desired, dict)
        return str(desired["metadata"]["annotations"][RETRY_ANNOTATION])

    for offset in range(0, 120):
        at = start + timedelta(seconds=offset)
        assert mark(at) != mark(at + pace * 0.9), f"a timed run {offset} s in changes nothing"
        assert mark(at + pace * 1.1) != mark(at)
    # Runs within the same half-pace slot (a write's echo, a second later) agree.
    assert mark(start) == mark(start + timedelta(seconds=1)) == retry_mark(pace, start)


def test_once_the_provider_sees_the_cluster_again_the_retry_is_gone():
    xr = cluster(None)
    during = run(xr, lost(xr))
    assert conditions(during)["Connected"].reason == "Unavailable"
    assert retry_annotation(during)
    after = run(xr, lost(xr, error=None))
    assert conditions(after)["Connected"].reason == "Available"
    assert retry_annotation(after) is None, "the provider is no longer asked again"


def _struct(obj: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(obj)
    return s


def run_at(xr: dict[str, Any], observed: dict[str, Any], now: object) -> Any:
    """One call with `now` as the request's context `modelfleet.io/now`."""
    req = run_function_request(xr, observed=observed)
    req.context.update({NOW_KEY: now})
    return RUNNER.run(req)


AT = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("case", "now", "marked_at"),
    [
        ("the time the context says", "2025-06-01T12:00:00Z", AT),
        ("within the same half-pace slot: the same mark", "2025-06-01T12:00:09Z", AT),
        ("a slot later: the next mark", "2025-06-01T12:00:10Z", AT + timedelta(seconds=10)),
        ("an hour later", "2025-06-01T13:00:03+00:00", AT + timedelta(hours=1)),
    ],
)
def test_the_retry_is_marked_at_the_time_the_request_says_not_the_machines(case, now, marked_at):
    xr = cluster(None)
    observed = lost(xr)
    first, again = run_at(xr, observed, now), run_at(xr, observed, now)
    assert conditions(first)["Connected"].reason == "Unavailable", case
    assert retry_annotation(first) == marked_at.strftime("%Y-%m-%dT%H:%M:%SZ"), case
    assert first == again, "the same request gets the same response"


@pytest.mark.parametrize("now", ["not a time", "2025-06-01T12:00:00", 42])
def test_a_malformed_time_in_the_context_is_said_and_the_machines_clock_read(now):
    xr = cluster(None)
    before = datetime.now(UTC) - retry_pace("20s")
    rsp = run_at(xr, lost(xr), now)
    assert "FunctionError" not in conditions(rsp), "decided, not failed"
    assert conditions(rsp)["Connected"].reason == "Unavailable"
    assert any(NOW_KEY in r.message for r in rsp.results if r.severity == fnv1.SEVERITY_WARNING)
    mark = datetime.fromisoformat(str(retry_annotation(rsp)))
    assert before <= mark <= datetime.now(UTC), "marked at the machine's clock"
