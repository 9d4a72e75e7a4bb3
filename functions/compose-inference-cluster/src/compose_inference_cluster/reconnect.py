"""Retrying a lost cluster at its own check interval.

provider-kubernetes (crossplane-runtime's managed reconciler) answers an Object whose
observation fails with a requeue through its per-Object error backoff, 1 s doubling to 60 s,
reset only by a success; the Object's `crossplane.io/poll-interval` is not read on that path.
After a minute away a cluster is therefore retried once a minute, and its return can go
unseen for up to 60 s. The provider observes an Object at once when one of its annotations
changes, so while the Namespace's Object fails the InferenceCluster changes `RETRY_ANNOTATION`
on it once per check and asks to be run again as often: a lost cluster is retried at about its
`connection.checkInterval`, as a connected one is checked. At rest nothing changes.
"""

import re
from datetime import UTC, datetime, timedelta

from modelfleet_contracts.recheck import RECHECK_FIRST, RECHECK_LAST

# Changes once per retry while the cluster's Namespace Object fails; absent otherwise.
RETRY_ANNOTATION = "modelfleet.io/connection-retry"
# Never faster than the quickest recheck of any XR; never slower than the provider's own
# backoff at its cap (then retrying ourselves gains nothing).
FASTEST_RETRY = RECHECK_FIRST
SLOWEST_RETRY = RECHECK_LAST

_UNITS = {"s": 1, "m": 60, "h": 3600}


def go_duration(text: str) -> timedelta:
    """A duration as the schema admits it (`20s`, `1m30s`, `1h`): digits and s/m/h only."""
    return timedelta(seconds=sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([smh])", text)))


def retry_pace(check_interval: str) -> timedelta:
    """How often a lost cluster is retried: its check interval, within the bounds above."""
    return min(max(go_duration(check_interval), FASTEST_RETRY), SLOWEST_RETRY)


def retry_mark(pace: timedelta, now: datetime) -> str:
    """The annotation's value at `now`: the start of the current half-pace slot (UTC).

    Crossplane runs the XR again after the TTL asked (`pace`, jittered by at most 10%), so
    every such run falls in a later slot and changes the value; the runs its own write
    triggers a moment later fall in the same slot and change nothing."""
    slot = max(int(pace.total_seconds()) // 2, 1)
    start = int(now.timestamp()) // slot * slot
    return datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
