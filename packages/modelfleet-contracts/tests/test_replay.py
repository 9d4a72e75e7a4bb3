"""A request answered before is answered again without deciding, only when the answer is
a function of the request alone (replay.py); `run` always decides."""

import asyncio
import hashlib
from datetime import timedelta

import pytest
from crossplane.function import resource, response
from google.protobuf import struct_pb2
from modelfleet_contracts.edge.replay import Encoded, Replays, decoded, read_the_clock, request_key
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import conditions, desired_status, run_function_request

XR = {"apiVersion": "modelfleet.io/v1alpha1", "kind": "ModelCache", "metadata": {"name": "m"}}


class CountingCore:
    """Reports how many times it decided; `recheck`: asks to be called again in 5 s (a
    wait read off the clock); `long_wait`: reads the clock for a wait old enough that its
    recheck is the SDK's default TTL; `fail`: raises."""

    def __init__(self, *, recheck: bool = False, long_wait: bool = False, fail: bool = False):
        self.calls, self.recheck, self.long_wait, self.fail = 0, recheck, long_wait, fail

    def __call__(self, req, rsp) -> None:
        self.calls += 1
        if self.fail:
            raise RuntimeError("boom")
        name = req.observed.composite.resource["metadata"]["name"]
        resource.update(rsp.desired.composite, {"status": {"seen": name}})
        if self.recheck:
            rsp.meta.ttl.FromTimedelta(timedelta(seconds=5))
        if self.long_wait:
            read_the_clock()
            rsp.meta.ttl.FromTimedelta(response.DEFAULT_TTL)


def serve(runner: SafeRunner, *reqs):
    return [decoded(asyncio.run(runner.RunFunction(req))) for req in reqs]


def request(name: str = "m", tag: str = "test"):
    return run_function_request({**XR, "metadata": {"name": name}}, tag=tag)


@pytest.mark.parametrize(
    ("core", "requests", "decisions"),
    [
        # The same content twice: decided once, answered twice.
        (CountingCore(), [request(), request()], 1),
        # Another XR, or the same content under another tag: decided again.
        (CountingCore(), [request("m"), request("n"), request("m")], 2),
        (CountingCore(), [request(tag="a"), request(tag="b")], 2),
        # A recheck's wait is read off the clock: never answered from before.
        (CountingCore(recheck=True), [request(), request()], 2),
        # A wait of hours (a release grace period) asks for the default TTL, read off the clock.
        (CountingCore(long_wait=True), [request(), request()], 2),
        # An internal error is tried again.
        (CountingCore(fail=True), [request(), request()], 2),
    ],
    ids=["same", "another-xr", "another-tag", "recheck", "long-wait", "function-error"],
)
def test_only_a_request_answered_before_with_a_clock_free_answer_is_replayed(
    core, requests, decisions
):
    runner = SafeRunner(core, "compose-test", replays=Replays())
    answers = serve(runner, *requests)
    assert core.calls == decisions
    for req, rsp in zip(requests, answers, strict=True):
        if core.fail:
            assert conditions(rsp)["FunctionError"].reason == "InternalError"
        else:  # every answer is the one to its own request
            name = req.observed.composite.resource["metadata"]["name"]
            assert desired_status(rsp) == {"seen": name}
            assert rsp.meta.tag == req.meta.tag


def test_a_replayed_answer_is_sent_as_it_was_encoded_whatever_became_of_the_first():
    runner = SafeRunner(CountingCore(), "compose-test", replays=Replays())
    first = asyncio.run(runner.RunFunction(request()))
    assert not isinstance(first, Encoded)  # decided
    response.normal(first, "changed after it was sent")
    again = asyncio.run(runner.RunFunction(request()))
    assert isinstance(again, Encoded)  # replayed: neither copied nor encoded again
    assert not decoded(again).results and desired_status(decoded(again)) == {"seen": "m"}


def test_without_replays_and_through_run_every_request_is_decided():
    core = CountingCore()
    serve(SafeRunner(core, "compose-test"), request(), request())
    replaying = SafeRunner(core, "compose-test", replays=Replays())
    replaying.run(request())
    replaying.run(request())
    assert core.calls == 4


def test_the_oldest_answers_go_once_the_budget_is_spent():
    core = CountingCore()
    size = SafeRunner(core, "compose-test").run(request("a")).ByteSize()
    replays = Replays(budget_bytes=2 * size + size // 2)  # room for two answers
    runner = SafeRunner(core, "compose-test", replays=replays)
    serve(runner, request("a"), request("b"), request("c"))
    assert len(replays) == 2
    calls = core.calls
    serve(runner, request("c"), request("b"))  # kept
    assert core.calls == calls
    serve(runner, request("a"))  # went first
    assert core.calls == calls + 1


def test_a_tag_answered_before_is_no_answer_to_the_request_with_its_requirements_resolved():
    """Crossplane tags a request once (xfn.Tag) and, once the function asked for required
    resources, sends it again under the same tag with them resolved: that is a new request."""
    tag = hashlib.sha256(b"what Crossplane encoded").hexdigest()
    asked = request(tag=tag)
    resolved = request(tag=tag)
    resolved.required_resources["clusters"].items.add()
    core = CountingCore()
    runner = SafeRunner(core, "compose-test", replays=Replays())
    serve(runner, asked, resolved, request(tag=tag))
    assert core.calls == 2  # the first content answered again, the second decided
    assert request_key(asked) != request_key(resolved)


def test_the_key_is_the_content_whatever_order_its_maps_were_written_in():
    """As Crossplane's encoder writes them: map entries in any order on the wire."""
    entries = []
    for key, value in XR.items():
        one = struct_pb2.Struct()
        one.fields[key].string_value = value if isinstance(value, str) else ""
        entries.append(one.SerializeToString())
    forward, backward = run_function_request(XR), run_function_request(XR)
    forward.observed.composite.resource.Clear()
    backward.observed.composite.resource.Clear()
    wire = b"".join(entries), b"".join(reversed(entries))
    assert wire[0] != wire[1]
    forward.observed.composite.resource.MergeFromString(wire[0])
    backward.observed.composite.resource.MergeFromString(wire[1])
    assert request_key(forward) == request_key(backward)


def test_the_replays_count_what_they_answered_and_what_was_decided():
    """What a server logs: calls answered from a kept response against calls decided (a
    recheck's answer is decided every time)."""
    replays = Replays()
    runner = SafeRunner(CountingCore(), "compose-test", replays=replays)
    serve(runner, request("a"), request("a"), request("b"), request("a"))
    assert (replays.hits, replays.misses, len(replays)) == (2, 2, 2)
    rechecking = Replays()
    serve(SafeRunner(CountingCore(recheck=True), "compose-test", replays=rechecking), request())
    serve(SafeRunner(CountingCore(recheck=True), "compose-test", replays=rechecking), request())
    assert (rechecking.hits, rechecking.misses, len(rechecking)) == (0, 2, 0)


def test_a_server_started_with_debug_says_how_it_answered_each_call_and_every_minute_the_counts(
    monkeypatch,
):
    from modelfleet_contracts.edge import runner as runner_module
    from structlog.testing import capture_logs

    monkeypatch.setattr(runner_module, "REPLAY_SUMMARY_EVERY_SECONDS", 0.0)
    runner = SafeRunner(CountingCore(), "compose-test", replays=Replays())
    runner.log_calls = True
    with capture_logs() as logged:
        serve(runner, request("a"), request("a"))
    calls = [(e["answer"], e["name"]) for e in logged if e["event"] == "RunFunction"]
    assert calls == [("decided, kept", "a"), ("replayed", "a")]
    counts = [(e["replayed"], e["decided"]) for e in logged if e["event"] == "Replays"]
    assert counts == [(0, 0), (0, 1)]  # each logged before its call is counted

    quiet = SafeRunner(CountingCore(), "compose-test", replays=Replays())
    with capture_logs() as logged:
        serve(quiet, request("a"))
    assert not [e for e in logged if e["event"] == "RunFunction"]
