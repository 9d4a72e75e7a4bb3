"""Placement that heals: which placed clusters cannot serve their replicas, since when, and
how a move off them is told.

A cluster cannot serve a replica placed on it when it is not connected, when the deployment
reads a ModelCache and the cluster's shared storage is gone, or when that cache is `Failed`
there (its hydration Job failed after its retries). Replicas move off it once this has lasted
the grace period (`spec.healing.moveAfterSeconds`) without a break.

Time comes from the inputs only: the `PlacementHealthy` condition says which clusters cannot
serve, in a message that stays the same while the set of clusters and their reasons do, so
its `lastTransitionTime` (stamped by Crossplane when the message changes) is when the current
trouble began. Any change (a cluster recovering, another failing, the spec changing the grace
period) starts the wait again: a flapping cluster never causes a move.
"""

from datetime import datetime, timedelta
from typing import Any

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.conditions import Status, listed

HEALTH = "PlacementHealthy"
DEFAULT_MOVE_AFTER_SECONDS = 600
UNSERVABLE = "ClusterUnservable"
MOVING = "Moving"
MOVED = "Moved"
# A cluster whose replicas are moving, which can serve again: the move goes on.
RECOVERED = (
    "could not serve them (it has recovered since; a move under way is finished, not undone)"
)


def cannot_serve(view: ClusterView, cache_name: str | None, cache_phase: str | None) -> str | None:
    """Why `view` cannot serve this deployment's replicas, in words; None when it can (or
    may soon: a cache still hydrating can be staged)."""
    if not view.reachable:
        return "not connected"
    if cache_name and not view.has_shared_storage:
        return "its shared storage is gone"
    if cache_name and cache_phase == "Failed":
        return f"ModelCache {cache_name} Failed there"
    return None


def unservable_condition(unservable: dict[str, str], grace_seconds: int) -> Status | None:
    """`PlacementHealthy` False while replicas sit on clusters that cannot serve them; its
    message names only what does not change while the trouble lasts (no countdown)."""
    if not unservable:
        return None
    where = listed(f"{c} ({why})" for c, why in sorted(unservable.items()))
    return Status.false(
        HEALTH,
        UNSERVABLE,
        f"replicas are placed where they cannot be served: {where}; they move to another "
        f"cluster once this has lasted {grace_seconds}s without a break "
        "(spec.healing.moveAfterSeconds)",
    )


def _stamp(condition: dict[str, Any]) -> datetime | None:
    stamp = condition.get("lastTransitionTime")
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else None


def unservable_for(previous: dict[str, Any] | None, current: Status, now: datetime) -> timedelta:
    """How long the trouble `current` describes has lasted: since the previous condition's
    `lastTransitionTime` when it said exactly the same; zero otherwise (it starts now)."""
    if not previous or _stamp(previous) is None:
        return timedelta(0)
    same = (
        previous.get("status") == current.status_text
        and previous.get("reason") == current.reason
        and previous.get("message", "") == current.message
    )
    since = _stamp(previous)
    return max(now - since, timedelta(0)) if same and since else timedelta(0)


def move_text(
    counts: dict[str, int], targets: list[str], why: dict[str, str], grace_seconds: int
) -> str:
    """`N replica(s) from A to B: A <why> for longer than <grace>s` (the body of the
    condition message and events for a move)."""
    replicas = sum(counts.values())
    sources = sorted(counts)
    reasons = "; ".join(f"{c} {why.get(c, RECOVERED)}" for c in sources)
    return (
        f"{replicas} replica(s) from {listed(sources)} to {listed(targets) or 'nowhere'}: "
        f"{reasons}, for longer than {grace_seconds}s (spec.healing.moveAfterSeconds)"
    )


MOVING_PREFIX = "moving "
MOVING_TAIL = "; the replicas on "


def moving_condition(text: str, sources: list[str], targets: list[str]) -> Status:
    return Status.false(
        HEALTH,
        MOVING,
        f"{MOVING_PREFIX}{text}{MOVING_TAIL}{listed(sources)} serve until those on "
        f"{listed(targets)} are Available, then they are deleted",
    )


def finished_move(previous: dict[str, Any] | None) -> str | None:
    """The text of a move the XR still tells as under way (`previous`, its stored
    `PlacementHealthy`) once nothing is left to move: the call that deleted the old replicas
    was not the one whose status Crossplane stored (a write lost to a conflict), so the move
    is told as done from what `moving_condition` wrote. None when no move was under way."""
    if not previous or previous.get("reason") != MOVING:
        return None
    message = str(previous.get("message", ""))
    if not message.startswith(MOVING_PREFIX) or MOVING_TAIL not in message:
        return None
    return message.removeprefix(MOVING_PREFIX).split(MOVING_TAIL, 1)[0]


def moved_condition(text: str) -> Status:
    return Status.true(HEALTH, MOVED, f"moved {text}")


def serving_condition(previous: dict[str, Any] | None) -> Status:
    """Every placed cluster can serve. The last finished move stays told until new trouble."""
    if previous and previous.get("status") == "True" and previous.get("reason") == MOVED:
        return Status.true(HEALTH, MOVED, str(previous.get("message", "")))
    return Status.true(HEALTH, "Serving", "every cluster a replica is placed on can serve it")


def stuck_note(scheduled: Status, stuck: set[str]) -> Status:
    """`Scheduled` telling that replicas due to move have nowhere to go (they stay)."""
    note = (
        f"replicas on {listed(sorted(stuck))} cannot move: no other matching cluster has "
        "capacity and a cache that is Ready or can be staged; they stay where they are"
    )
    return Status(
        scheduled.type, scheduled.status, scheduled.reason, f"{scheduled.message}; {note}"
    )
