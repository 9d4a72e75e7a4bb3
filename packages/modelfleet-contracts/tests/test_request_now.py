"""A function decides at the time its request's context says (`modelfleet.io/now`), else at
the machine's clock; a value that is no timestamp never fails the request, it is said in a
Warning and the machine's clock is read."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.now import NOW_KEY, format_now, now_context, request_now

MACHINE = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)


def request(context: dict | None) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    if context is not None:
        req.context.update(context)
    return req


def warnings(rsp: fnv1.RunFunctionResponse) -> list[str]:
    return [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_WARNING]


@pytest.mark.parametrize(
    ("case", "context", "decided_at"),
    [
        (
            "a UTC timestamp",
            {NOW_KEY: "2025-06-01T12:00:00Z"},
            datetime(2025, 6, 1, 12, tzinfo=UTC),
        ),
        (
            "an offset, read as the same instant in UTC",
            {NOW_KEY: "2025-06-01T14:00:00+02:00"},
            datetime(2025, 6, 1, 12, tzinfo=UTC),
        ),
        (
            "fractions of a second kept",
            {NOW_KEY: "2025-06-01T12:00:00.250Z"},
            datetime(2025, 6, 1, 12, 0, 0, 250000, tzinfo=UTC),
        ),
        (
            "other context keys beside it",
            {"x": 1, NOW_KEY: "2020-01-01T00:00:00Z"},
            datetime(2020, 1, 1, tzinfo=UTC),
        ),
        ("no context", None, MACHINE),
        ("a context without the key", {"apiextensions.crossplane.io/environment": {}}, MACHINE),
    ],
)
def test_the_context_key_overrides_the_machines_clock(case, context, decided_at):
    rsp = fnv1.RunFunctionResponse()
    assert request_now(request(context), rsp, clock=MACHINE) == decided_at, case
    assert warnings(rsp) == [], case


@pytest.mark.parametrize(
    ("case", "value"),
    [
        ("not a time", "yesterday"),
        ("empty", ""),
        ("a date and time without an offset", "2025-06-01T12:00:00"),
        ("a number", 1748779200),
        ("a mapping", {"seconds": 1}),
        ("no value", None),
    ],
)
def test_a_malformed_value_reads_the_machines_clock_and_says_so(case, value):
    rsp = fnv1.RunFunctionResponse()
    assert request_now(request({NOW_KEY: value}), rsp, clock=MACHINE) == MACHINE, case
    [warning] = warnings(rsp)
    assert NOW_KEY in warning and "machine's clock" in warning, case
    assert not any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results), case


def test_without_a_clock_given_the_machines_is_read():
    before = datetime.now(UTC)
    decided = request_now(request({NOW_KEY: "garbage"}))
    assert before <= decided <= datetime.now(UTC)


def test_the_context_a_caller_sends_reads_back_as_the_same_time():
    moment = datetime(2025, 6, 1, 12, 0, 7, tzinfo=timezone(timedelta(hours=-5)))
    assert format_now(moment) == "2025-06-01T17:00:07Z"
    assert request_now(request(now_context(moment)), clock=MACHINE) == moment


def test_a_response_carries_the_key_on_to_the_next_step():
    """The SDK copies the request's context into the response, which the next step gets."""
    rsp = response.to(request(now_context(MACHINE)))
    next_step = fnv1.RunFunctionRequest(context=rsp.context)
    assert request_now(next_step, clock=datetime(1999, 1, 1, tzinfo=UTC)) == MACHINE
