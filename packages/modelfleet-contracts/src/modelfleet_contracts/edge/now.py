"""The time a function decides a request at: the one place a function reads "now".

A caller that wants the same answer every time (`modelfleet render`, `modelfleet simulate`, a
test, `crossplane render --context-values 'modelfleet.io/now="..."'`) puts an RFC 3339
timestamp in the request's function context under `NOW_KEY`; a control plane does not, and
the function reads the machine's clock. A value that is not a timestamp with a time zone does
not fail the request: the machine's clock is read, and a Warning result says so.

Each function's gRPC edge calls `request_now` once per request and passes the time down; the
pure cores and `apply_outcome` take it as a parameter and never read a clock themselves.
"""

from datetime import UTC, datetime

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

NOW_KEY = "modelfleet.io/now"


def parse_now(value: object) -> datetime | None:
    """`value` as an aware UTC time if it is an RFC 3339 timestamp string (`Z` or an offset),
    else None (a naive time has no offset: None)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(UTC)


def format_now(moment: datetime) -> str:
    """`moment` as the value `NOW_KEY` takes (UTC, whole seconds, `Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_context(moment: datetime) -> dict[str, str]:
    """The function context entry that tells a function it is `moment`."""
    return {NOW_KEY: format_now(moment)}


def request_now(
    req: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse | None = None,
    *,
    clock: datetime | None = None,
) -> datetime:
    """The time `req` is decided at: its context's `NOW_KEY` when that is a valid timestamp,
    else the machine's clock (`clock`, for tests). Given `rsp`, a value that is present but
    invalid adds a Warning result naming it."""
    fields = req.context.fields if req.HasField("context") else {}
    if NOW_KEY in fields:
        value = fields[NOW_KEY]
        text = value.string_value if value.WhichOneof("kind") == "string_value" else None
        given = parse_now(text)
        if given is not None:
            return given
        if rsp is not None:
            shown = text if text is not None else value.WhichOneof("kind") or "an empty value"
            response.warning(
                rsp,
                f"context {NOW_KEY} is not an RFC 3339 timestamp ({shown!r}): decided at the "
                "machine's clock instead",
            )
    return clock or datetime.now(UTC)
