"""Simulate's clock, as the functions read it.

Simulate stamps conditions on its own clock (a minute per round from START), so that a run
prints the same thing every time. The functions read the same clock: every request simulate
sends carries simulate's time in its function context (`modelfleet.io/now`,
modelfleet_contracts.edge.now), so an XR that waits on something Crossplane may not tell it
of measures the age of its newest condition transition (`modelfleet_contracts.recheck`) as
simulate means it, never against the machine's clock.
"""

import math
from datetime import datetime, timedelta

from modelfleet_contracts.edge.now import now_context


def simulated_context(now: datetime) -> dict[str, str]:
    """The initial function context of a reconcile at simulate's `now`."""
    return now_context(now)


def whole_seconds(ttl: timedelta) -> int:
    """A TTL as simulate reports it: whole seconds, rounded down (a function's TTL may carry
    a fraction of a second; the report does not)."""
    return math.floor(ttl.total_seconds())
