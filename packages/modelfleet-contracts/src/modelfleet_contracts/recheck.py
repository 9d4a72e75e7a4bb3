"""How soon an XR that waits on something Crossplane does not watch asks to be run again.

Crossplane watches an XR's composed resources, not the resources its functions only read
(an InferenceCluster, a ModelCache): it sees those again when the function's response TTL
runs out, a minute by default. A function whose XR waits on one asks for less, growing with
how long the wait has lasted: a young wait (a cache about to turn Ready) is noticed within
seconds, a wait of hours (a cluster with no storage) costs a reconcile a minute, as before.
An XR whose composed resources change faster than Crossplane's circuit breaker lets their
events through (a shard whose downloads run, a deployment whose replicas roll out) asks the
same way.
"""

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

RECHECK_FIRST = timedelta(seconds=5)
RECHECK_LAST = timedelta(minutes=1)  # the SDK's default TTL: never slower than without this
# The recheck grows to a tenth of the wait's age: 5 s for its first 50 s, a minute after 10 min.
RECHECK_SHARE = 10
# An XR that is Ready and waits on nothing (Outcome.settled): Crossplane runs it again as soon
# as one of its composed resources changes (realtime compositions), so its TTL only bounds how
# long a change of what it reads but Crossplane does not watch goes unseen (a named
# ClusterProviderConfig deleted). The same round as provider-kubernetes' poll in the
# recommended configuration (docs/install/provider-kubernetes.yaml): a fleet at rest does its
# routine work once per round (docs/benchmarks.md). Only while Crossplane delivers its events:
# with its circuit breaker open it keeps the default (edge/outcome.py), or less if its core
# asks (`Outcome.recheck_in`: an InferenceCluster looks once per connection.checkInterval).
RECHECK_SETTLED = timedelta(minutes=60)
# The condition Crossplane (>= v2.3) sets on every XR from its watch circuit breaker.
RESPONSIVE = "Responsive"
# Crossplane's --circuit-breaker-cooldown (default 5m): how long an XR's watch circuit breaker
# stays open. Past it, the next event is let through and closes the breaker, yet the XR's
# Responsive condition reads False until an event runs it again, at rest possibly never.
BREAKER_COOLDOWN = timedelta(minutes=5)


def _times(conditions: Iterable[Any]) -> Iterable[datetime]:
    for condition in conditions:
        stamp = condition.get("lastTransitionTime") if isinstance(condition, dict) else None
        if isinstance(stamp, str):
            try:
                yield datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                continue


def recheck_after(conditions: Iterable[Any], now: datetime) -> timedelta:
    """The TTL for an XR whose observed conditions are `conditions`: the wait's age is the
    time since the newest transition (any change restarts the quick checks)."""
    newest = max(_times(conditions), default=None)
    if newest is None:
        return RECHECK_FIRST
    if newest.tzinfo is None:
        newest = newest.replace(tzinfo=UTC)
    age = max(now - newest, timedelta(0))
    return min(max(age / RECHECK_SHARE, RECHECK_FIRST), RECHECK_LAST)


def breaker_holds_events(responsive: dict[str, Any] | None, now: datetime) -> bool:
    """Whether Crossplane's circuit breaker drops the XR's events (its own spec edits among
    them, but for one each 30 s), by the XR's `Responsive` condition: False, and since less
    than BREAKER_COOLDOWN (or since when, unknown)."""
    if not responsive or responsive.get("status") != "False":
        return False
    opened = next(iter(_times([responsive])), None)
    if opened is None:
        return True
    if opened.tzinfo is None:
        opened = opened.replace(tzinfo=UTC)
    return now - opened < BREAKER_COOLDOWN
