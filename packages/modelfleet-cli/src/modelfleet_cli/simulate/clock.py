"""Simulate's clock, as the functions read it.

Simulate stamps conditions on its own clock (a minute per round from START), so that a run
prints the same thing every time. The functions run on the machine's clock: an XR that waits
on something Crossplane may not tell it of asks for a TTL that grows with the age of its newest
condition transition (`modelfleet_contracts.recheck`), which against 2025 stamps would always
read as a wait of years. For the length of one call, the XR's condition stamps in the request
are moved by (the machine's clock - simulate's), so the function measures the age simulate
means; nothing stored is changed.
"""

import contextlib
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.struct_pb2 import Struct

from modelfleet_cli.xr_conditions import rfc3339

STAMP = "lastTransitionTime"


def _parse(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _conditions(composite: Struct) -> Any:
    """The XR's status.conditions (a ListValue), or an empty list. A protobuf Struct has no
    `get`: membership first."""
    status = composite["status"] if "status" in composite else None  # noqa: SIM401
    if not isinstance(status, Struct) or "conditions" not in status:
        return []
    return status["conditions"]


@contextlib.contextmanager
def on_machine_clock(
    req: fnv1.RunFunctionRequest, now: datetime, machine_now: datetime | None = None
) -> Iterator[None]:
    """Within the block, `req`'s observed XR carries its condition stamps moved from
    simulate's `now` to the machine's (whole seconds: stamps have no more); restored on
    exit. In place rather than on a copy: a request at a thousand clusters is megabytes."""
    machine = (machine_now or datetime.now(UTC)).replace(microsecond=0)
    shift = machine - now
    conditions = _conditions(req.observed.composite.resource)
    moved: list[tuple[int, str]] = []
    for i, condition in enumerate(conditions):
        if not isinstance(condition, Struct) or STAMP not in condition:
            continue
        stamp = condition[STAMP]
        moment = _parse(stamp) if isinstance(stamp, str) else None
        if moment is not None:
            moved.append((i, str(stamp)))
            condition[STAMP] = rfc3339(moment + shift)
    try:
        yield
    finally:
        for i, stamp in moved:
            conditions[i][STAMP] = stamp


def whole_seconds(ttl: timedelta) -> int:
    """A TTL as simulate reports it: whole seconds, rounded down. The function measured the
    wait a little older than simulate means (the time between the shift and its own reading
    of the clock, plus the shift's lost fraction of a second), and the recheck grows by a
    tenth of that: dropping the fraction keeps runs identical."""
    return math.floor(ttl.total_seconds())
