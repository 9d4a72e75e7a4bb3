"""Where a ModelCache stages its weights among the clusters it matches (`spec.staging`).

`Everywhere` (the default): every matched cluster, as always.

`WhereServed`: the clusters where a ModelReplica referencing the cache is placed (served),
plus `warmSpares` more, plus those no longer needed whose grace period (`releaseAfterSeconds`)
has not run out. Spares are chosen where the next replica can go (a node free, as the fleet's
ModelReplicas leave it), in the order the scheduler (compose-model-deployment) picks a cluster
for a new replica among equally loaded ones: where the weights are Ready first, then where
they are being staged, then by name. So the next replica placed, or one moved off a
failing cluster, lands where its weights already are, and no GPU waits for a download it could
have avoided; a replica placed where nothing is staged waits (WaitingForCache) holding no GPU,
as always, while the cache stages there.

A cluster no longer needed (no replica, not a spare) keeps its copy for the grace period, then
leaves its shard, which drops its claim: deleted, or kept on the cluster with
`storage.reclaimPolicy: Retain` (that is how a shard lets go of any cluster). A replica placed
there meanwhile finds its weights still Ready. More spares than the matched clusters that can
stage stage every one of them and say so (`Staging` False, `SparesExceedFleet`): nothing is
released for a spec that asks for more than the fleet has.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from modelfleet_contracts.conditions import Status
from modelfleet_contracts.models.modelcache import Policy, Staging

from compose_model_cache.rows import FAILED, HYDRATING, READY

CONDITION = "Staging"
EVERYWHERE, WHERE_SERVED = Policy.Everywhere.value, Policy.WhereServed.value
SPARES_EXCEED_FLEET = "SparesExceedFleet"
DEFAULT_SPARES = 1
DEFAULT_RELEASE_AFTER_SECONDS = 3600


@dataclass(frozen=True)
class Footprint:
    """The clusters to stage on (`staged`), and why each is there."""

    staged: frozenset[str]
    served: tuple[str, ...] = ()
    spares: tuple[str, ...] = ()
    # Cluster -> (since when it is not needed, when its claim is released).
    releasing: dict[str, tuple[datetime, datetime]] = field(default_factory=dict)
    released: tuple[str, ...] = ()
    condition: Status | None = None

    def status(self) -> dict[str, Any]:
        """`status.staging` as the ModelCache reports it."""
        return {
            "policy": WHERE_SERVED,
            "servedOn": list(self.served),
            "spares": list(self.spares),
            "releasing": [
                {"name": c, "since": _stamp(since), "releaseAfter": _stamp(until)}
                for c, (since, until) in sorted(self.releasing.items())
            ],
        }


def _stamp(t: datetime) -> str:
    return t.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _parse(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def releasing_since(previous: dict[str, Any]) -> dict[str, datetime]:
    """When each cluster listed in the previous `status.staging.releasing` stopped being
    needed (an entry that cannot be read is not trusted: its wait starts again)."""
    since: dict[str, datetime] = {}
    entries = previous.get("releasing")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            stamp = _parse(entry.get("since"))
            if stamp is not None and stamp.tzinfo is not None:
                since[entry["name"]] = stamp
    return since


def is_where_served(staging: Staging | None) -> bool:
    return staging is not None and staging.policy == Policy.WhereServed


def staging_footprint(
    staging: Staging | None,
    matched: Iterable[str],
    stageable: Iterable[str],
    served: Iterable[str],
    staged_before: Iterable[str],
    phases: dict[str, str],
    previously_releasing: dict[str, datetime],
    now: datetime,
    free: dict[str, int] | None = None,
) -> Footprint:
    """`matched`: the clusters the selector matches; `stageable`: those of them that can take
    the cache now (a spare is picked among the others only when these run out); `served`:
    where ModelReplicas referencing the cache are placed;
    `staged_before`: the clusters its shards were told to stage on; `phases`: each cluster's
    phase as last reported; `previously_releasing`: the previous status's release clocks;
    `free`: nodes each cluster has left for another replica (None: not known). A spare is
    where the next replica can go: clusters with a node free come first."""
    matched_set = set(matched)
    if not is_where_served(staging):
        return Footprint(staged=frozenset(matched_set))
    assert staging is not None
    spares_wanted = DEFAULT_SPARES if staging.warmSpares is None else staging.warmSpares
    grace = timedelta(
        seconds=staging.releaseAfterSeconds
        if staging.releaseAfterSeconds is not None
        else DEFAULT_RELEASE_AFTER_SECONDS
    )
    before = set(staged_before) & matched_set
    served_here = sorted(set(served) & matched_set)
    can_stage = set(stageable)
    candidates = sorted(
        (c for c in matched_set if c not in served_here),
        key=lambda c: (
            free is not None and free.get(c, 0) <= 0,
            _spare_rank(c, phases, before, can_stage),
            c,
        ),
    )
    spares = candidates[:spares_wanted]
    condition: Status
    if spares_wanted > len(candidates):
        condition = Status.false(
            CONDITION,
            SPARES_EXCEED_FLEET,
            f"spec.staging.warmSpares is {spares_wanted} but only {len(candidates)} matched "
            "cluster(s) are not served: staging on every one of them; lower warmSpares or "
            "match more clusters",
        )
    else:
        condition = Status.true(
            CONDITION,
            WHERE_SERVED,
            f"staged where served ({_listed(served_here)}) and on {len(spares)} warm "
            f"spare(s) ({_listed(spares)})",
        )
    needed = set(served_here) | set(spares)
    releasing: dict[str, tuple[datetime, datetime]] = {}
    released: list[str] = []
    for cluster in sorted(before - needed):
        since = previously_releasing.get(cluster, now)
        since = min(since, now)  # a clock read from the future is not waited for
        if now - since >= grace:
            released.append(cluster)
        else:
            releasing[cluster] = (since, since + grace)
    return Footprint(
        staged=frozenset(needed | set(releasing)),
        served=tuple(served_here),
        spares=tuple(spares),
        releasing=releasing,
        released=tuple(released),
        condition=condition,
    )


def _spare_rank(cluster: str, phases: dict[str, str], before: set[str], can: set[str]) -> int:
    """The scheduler's order among equally loaded clusters: weights Ready, then under way,
    then where they can be staged now, then the rest; where staging failed, last (the
    scheduler does not place there either)."""
    if cluster in before and phases.get(cluster) == READY:
        return 0
    if cluster in before and phases.get(cluster) in (HYDRATING, READY):
        return 1
    if phases.get(cluster) == FAILED:
        return 4
    return 2 if cluster in can else 3


def _listed(names: Iterable[str]) -> str:
    names = list(names)
    return ", ".join(names) if names else "none"


NOT_STAGED = (
    "not staged here: no ModelReplica referencing this cache is placed on this cluster and it "
    "is not a warm spare (spec.staging.policy WhereServed); it is staged once one is"
)
