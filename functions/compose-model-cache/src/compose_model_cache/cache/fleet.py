"""A ModelCache's reconcile: which ModelCacheShards it composes, and the fleet's rows.

The ModelCache selects its clusters (`select`), shares them out among its ModelCacheShards
(shards.py) and tells each shard its clusters, a digest of what their InferenceClusters
report, its spec and the pinned commit. Each shard stages the cache on its clusters
(shard/) and reports a row per cluster (rows.py); the ModelCache lists every matched
cluster's row from its shard, with the `ready/matched` roll-up and the conditions users
read, their reasons taken from the rows.

A cluster its shard has not taken over yet (not reported; or, Ready before, not reported
Ready) keeps the row the ModelCache reported before (a Ready cluster never regresses while a
shard starts, whatever the order of their reconciles), or else is Pending, waiting for its
shard. Objects the ModelCache itself composed on clusters (handover.py) go to the shards
without a remote object lost.

Which matched clusters are staged on follows `spec.staging` (footprint.py): every one, or
where the cache is served plus warm spares; a matched cluster not staged on is listed Pending,
saying why.
"""

from datetime import datetime
from typing import Any

from modelfleet_contracts.clusters import SELECTED_CLUSTERS, ClusterView, select
from modelfleet_contracts.conditions import Status, previous_condition
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.models.modelcache import ModelCacheSpec
from modelfleet_contracts.naming import composed_key
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.spec import InvalidSpec, parse_spec

from compose_model_cache.cache.footprint import (
    NOT_STAGED,
    is_where_served,
    releasing_since,
    staging_footprint,
)
from compose_model_cache.cache.handover import LegacyObject, hand_over
from compose_model_cache.cache.shards import (
    ObservedShard,
    assign_shards,
    clusters_revision,
    shard_entry,
    shard_resource,
)
from compose_model_cache.fingerprint import source_fingerprint
from compose_model_cache.keys import current_job_keys, resource_keys
from compose_model_cache.rows import (
    PENDING,
    READY,
    REASONS,
    cache_status,
    is_revision,
    row_phase,
    staging_under_way,
)
from compose_model_cache.shard.manifests import CacheRef
from compose_model_cache.staging import spec_problem, why_cannot_stage
from compose_model_cache.status import CLAIMS_SIZED, CREDENTIALS_REDACTED, cache_conditions

# Conditions a shard reports of its own clusters that the ModelCache reports of all of them.
ROLLED_UP = (CREDENTIALS_REDACTED, CLAIMS_SIZED)


def _pin(
    previous: dict[str, Any], fingerprint: str, shards: dict[str, ObservedShard]
) -> dict[str, Any] | None:
    """The ModelCache's pin for this source: kept once chosen, else the first a shard chose
    (in the order of their keys); every shard is handed it. Only a well-formed pin counts (a
    status is read, not trusted), and only its three fields are handed on."""
    for pinned in (previous, *(shards[k].pinned for k in sorted(shards))):
        pin = {k: pinned.get(k) for k in ("commit", "fingerprint", "cluster")}
        if pin["fingerprint"] == fingerprint and is_revision(pin["commit"]):
            return {k: v for k, v in pin.items() if isinstance(v, str)}
    return None


def _rolled_up(
    typ: str, shards: dict[str, ObservedShard], previous: dict[str, Any] | None
) -> Status | None:
    """A shard's False first; else True once any shard (or the ModelCache before) had it."""
    seen = [shards[k].conditions[typ] for k in sorted(shards) if typ in shards[k].conditions]
    for c in seen:
        if c.get("status") == "False":
            return Status.false(typ, str(c.get("reason") or ""), str(c.get("message") or ""))
    for c in (*seen, previous or {}):
        if c.get("status") == "True":
            return Status.true(typ, str(c.get("reason") or ""), str(c.get("message") or ""))
    return None


def compose_fleet(
    xr: dict[str, Any],
    clusters: list[ClusterView] | None,
    shards: dict[str, ObservedShard],
    legacy: dict[str, LegacyObject] | None = None,
    asks: dict[str, str] | None = None,
    served: list[str] | None = None,
    *,
    now: datetime,
    free: dict[str, int] | None = None,
) -> Outcome:
    """`shards`: the ModelCacheShards composed before, as observed, by key. `legacy`: Objects
    of the unsharded layout composed here (handover.py); `asks`: the Job name each of their
    own manifests asks for, by key. `served`: the clusters of the ModelReplicas referencing
    the cache (None: not resolved yet; read only with `spec.staging.policy: WhereServed`);
    `now`: the time release clocks are measured against; `free`: the nodes each cluster has
    left for another replica (None: not known; then spares do not weigh it)."""
    legacy, asks = legacy or {}, asks or {}
    spec = parse_spec(ModelCacheSpec, mapping_at(xr, "spec"), spec_problem)
    if isinstance(spec, InvalidSpec):
        return Outcome.held(Status.false("ArtifactReady", "InvalidSpec", spec.message))
    where_served = is_where_served(spec.staging)
    if clusters is None or (where_served and served is None):
        awaited = [SELECTED_CLUSTERS] if clusters is None else []
        if where_served and served is None:
            awaited.append("the ModelReplicas serving from it")
        return Outcome.resolving(xr, "ArtifactReady", *awaited)

    metadata, status = mapping_at(xr, "metadata"), mapping_at(xr, "status")
    name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace", ""))
    fingerprint = source_fingerprint(spec)
    matched = select(clusters, spec.clusterSelector)
    previous = {
        row["name"]: row
        for row in list_at(status, "clusters")
        if isinstance(row, dict) and isinstance(row.get("name"), str)
    }
    reported: dict[str, dict[str, Any]] = {}
    as_reported: dict[str, Any] = {}  # the row whole, where it is listed as reported
    for key in sorted(shards, reverse=True):  # the first shard's row wins (shards.py)
        reported.update(shards[key].rows)
        for cluster in shards[key].rows:
            as_reported.pop(cluster, None)
        as_reported.update(shards[key].written)
    pin = _pin(mapping_at(status, "pinnedRevision"), fingerprint, shards)

    byo_claim = bool(spec.storage and spec.storage.existingClaimName)
    blocked = {v.name: why for v in matched if (why := why_cannot_stage(v, byo_claim))}
    staged_before = {c for shard in shards.values() for c in shard.clusters}
    footprint = staging_footprint(
        spec.staging,
        [v.name for v in matched],
        [v.name for v in matched if v.name not in blocked],
        served or [],
        staged_before,
        {c: str(r.get("phase")) for c, r in reported.items()},
        releasing_since(mapping_at(status, "staging")),
        now,
        free,
    )

    outcome = Outcome()
    views = {v.name: v for v in matched if v.name in footprint.staged}
    # A shard takes a cluster over once it reports it; one the ModelCache had Ready, once it
    # reports it Ready. Until then what was staged is handed to the shard (its `staged`), and
    # the ModelCache's row stands, but only with the claim the unsharded layout composed
    # there: a shard deleted by hand and composed again gets nothing (its claim went with it)
    # and stages afresh.
    was_ready = {
        c
        for c, r in previous.items()
        if r.get("phase") == READY and r.get("fingerprint") == fingerprint
    }
    taken = {c for c, r in reported.items() if c not in was_ready or r.get("phase") == READY}
    handed = {
        v.name
        for v in matched
        if resource_keys(v.name, fingerprint)[0] in legacy and v.name not in taken
    }
    raw_spec = mapping_at(xr, "spec")
    for key, members in assign_shards(views, shards).items():
        entries = [shard_entry(c, previous.get(c) if c in handed else None) for c in members]
        revision = clusters_revision(views[c] for c in members)
        outcome.desired[key] = shard_resource(name, namespace, raw_spec, pin, entries, revision)

    rows, listed, phases = [], [], []
    for view in matched:
        if view.name not in footprint.staged:
            row = _current({"name": view.name, "phase": PENDING, "message": NOT_STAGED},
                           name, namespace, spec, fingerprint)  # fmt: skip
            rows.append(row)
            listed.append(row)
            phases.append(row_phase(row))
            continue
        shard_row = reported.get(view.name) if view.name not in handed else None
        row = _row(view.name, shard_row, previous.get(view.name))
        current = _current(row, name, namespace, spec, fingerprint)
        if current.get("reason") not in REASONS:
            current.pop("reason", None)  # read, not trusted: only a reason the XRD allows
        rows.append(current)
        # A shard's row listed as it reported it, unless it had to change.
        whole = as_reported.get(view.name) if shard_row is not None else None
        listed.append(whole if whole is not None and current is row else current)
        phases.append(row_phase(current))

    handover = hand_over(
        legacy,
        {composed_key(v.name): v.name for v in matched},
        set(blocked),
        {c for c in taken if reported[c].get("fingerprint") == fingerprint},
        {c for c, r in reported.items() if r.get("phase") == READY},
        _current_jobs(legacy, [v.name for v in matched], fingerprint, name, namespace, spec, asks),
    )
    outcome.desired.update(handover.desired)
    outcome.kept += handover.kept

    outcome.status = cache_status(rows, pin) | {"clusters": listed}
    outcome.conditions = cache_conditions(matched, phases)
    staged_phases = [p for v, p in zip(matched, phases, strict=True) if v.name in views]
    if where_served:
        outcome.conditions[1:] = staged_artifact(list(views.values()), staged_phases)
        outcome.status["staging"] = footprint.status()
        outcome.happenings += staging_changes(footprint.staged, staged_before, footprint)
    if footprint.condition is not None:
        outcome.conditions.append(footprint.condition)
    for typ in ROLLED_UP:
        if rolled := _rolled_up(typ, shards, previous_condition(xr, typ)):
            outcome.conditions.append(rolled)
    outcome.ready = bool(views) and all(p.phase == READY for p in staged_phases)
    # InferenceClusters are read, not watched: look again soon while one cannot stage yet or
    # none matches; and while old Objects are being handed over. ModelReplicas are read, not
    # watched either: where the cache is served, it looks again soon.
    # And while its shards stage (rows.staging_under_way): their rows change faster than
    # Crossplane's circuit breaker lets their events through.
    outcome.recheck_soon = (
        not matched
        or bool(blocked)
        or handover.pending
        or where_served
        or staging_under_way(staged_phases)
    )
    return outcome


def staged_artifact(views: list[ClusterView], phases: list[Any]) -> list[Status]:
    """ArtifactReady of the clusters staged on (WhereServed); staged nowhere is said so."""
    if views:
        return cache_conditions(views, phases)[1:]
    return [
        Status.false(
            "ArtifactReady",
            "NoClusters",
            "staged nowhere: no ModelReplica referencing this cache is placed and "
            "spec.staging.warmSpares is 0",
        )
    ]


def staging_changes(staged: frozenset[str], before: set[str], footprint: Any) -> list[str]:
    """The Normal events of a WhereServed decision that changes where the cache is staged."""
    why = {
        **dict.fromkeys(footprint.spares, "a warm spare"),
        **dict.fromkeys(footprint.served, "a ModelReplica is placed there"),
    }
    started = [f"staging on {c}: {why.get(c, 'needed')}" for c in sorted(staged - before)]
    released = [
        f"released {c}: neither served nor a spare for spec.staging.releaseAfterSeconds"
        for c in footprint.released
    ]
    return started + released


def _row(
    cluster: str, reported: dict[str, Any] | None, before: dict[str, Any] | None
) -> dict[str, Any]:
    """The cluster's row: its shard's, else the one reported before (a shard starting up must
    not regress it), else Pending."""
    if reported is not None:
        return dict(reported)
    if before is not None and before.get("phase"):
        return dict(before)
    return {"name": cluster, "phase": PENDING, "message": "waiting for its ModelCacheShard"}


def _current(
    row: dict[str, Any], name: str, namespace: str, spec: ModelCacheSpec, fingerprint: str
) -> dict[str, Any]:
    """A row carried over from another source reports the current source's names: what
    consumers mount, once Ready, is the current source's copy (and until then they wait)."""
    if row.get("fingerprint") == fingerprint and row.get("claimName"):
        return row
    cache = CacheRef(name, namespace, spec, fingerprint)
    same_source = row.get("fingerprint") == fingerprint
    phase = row["phase"] if same_source else PENDING
    kept = ("name", "reason", "message") if same_source else ("name", "message")
    current = {
        **{k: v for k, v in row.items() if k in kept},
        "phase": phase,
        "claimName": cache.claim_name,
        "path": cache.path,
        "fingerprint": fingerprint,
    }
    if phase == PENDING and not current.get("message"):
        current["message"] = "waiting for its ModelCacheShard to stage the current source"
    return current


def _current_jobs(
    legacy: dict[str, LegacyObject],
    clusters: list[str],
    fingerprint: str,
    name: str,
    namespace: str,
    spec: ModelCacheSpec,
    asks: dict[str, str],
) -> set[str]:
    if not legacy:
        return set()
    job_name = CacheRef(name, namespace, spec, fingerprint).job_name
    observed: dict[str, ObservedObject] = {k: o.facts for k, o in legacy.items()}
    return {
        key
        for cluster in clusters
        for key in current_job_keys(cluster, fingerprint, job_name, observed, asks)
        if key in legacy
    }
