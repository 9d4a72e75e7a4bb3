"""A ModelCacheShard's plan: what it stages, read once from its spec and status.

The ModelCache tells each shard (cache/shards.py) its name, its spec without the selector,
the pinned commit and the clusters to stage on; the shard reports a row per cluster. The
core (core.py) composes from a `ShardPlan` and the clusters' InferenceClusters, read by name:
it never sees a selector, and a shard's reconcile costs its own clusters' objects whatever
the size of the fleet. What it composes is named after the cache (`cache_name`), exactly as
the ModelCache named it on every cluster.
"""

from dataclasses import dataclass, field
from typing import Any

from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.models.modelcache import ModelCacheSpec
from modelfleet_contracts.spec import InvalidSpec, parse_spec

from compose_model_cache.rows import READY
from compose_model_cache.staging import spec_problem


@dataclass(frozen=True)
class ShardPlan:
    """What a shard stages, and what it reported before."""

    cache_name: str  # the ModelCache: names and labels what the shard composes
    namespace: str
    spec: ModelCacheSpec
    clusters: tuple[str, ...]  # the clusters it stages on, in its spec's order, each once
    # The pin the ModelCache hands it (else the one it reported): commit, fingerprint, cluster.
    pin: dict[str, Any] = field(default_factory=dict)
    # Its own rows by cluster; for a cluster it has not reported yet, or not reported Ready
    # when the ModelCache had it Ready, what the ModelCache had staged there (a cluster's
    # `staged`), so Ready stays latched through the handover.
    previous: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The clusters the ModelCache still hands a `staged` row: what was staged there is on the
    # cluster under the ModelCache's old Objects, though the shard observes none of its own.
    handed: frozenset[str] = frozenset()
    conditions: dict[str, dict[str, Any]] = field(default_factory=dict)  # its own, by type

    def previous_condition(self, typ: str) -> dict[str, Any] | None:
        return self.conditions.get(typ)


def cluster_names(shard: dict[str, Any]) -> list[str]:
    """The clusters the shard's spec lists, in order, each once."""
    names = (e.get("name") for e in list_at(mapping_at(shard, "spec"), "clusters"))
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def read_plan(shard: dict[str, Any]) -> ShardPlan | InvalidSpec:
    """The plan in an observed ModelCacheShard; InvalidSpec (with the reason in words) when
    its spec cannot be acted on."""
    spec, status = mapping_at(shard, "spec"), mapping_at(shard, "status")
    cache_name = spec.get("cacheName")
    if not isinstance(cache_name, str) or not cache_name:
        return InvalidSpec("spec.cacheName is required: the ModelCache this shard stages")
    cache_spec = {k: v for k, v in mapping_at(spec, "cache").items() if k != "clusterSelector"}
    parsed = parse_spec(ModelCacheSpec, cache_spec, spec_problem)
    if isinstance(parsed, InvalidSpec):
        return parsed
    namespace = mapping_at(shard, "metadata").get("namespace")
    previous, handed = _previous_rows(list_at(status, "clusters"), list_at(spec, "clusters"))
    return ShardPlan(
        cache_name=cache_name,
        namespace=namespace if isinstance(namespace, str) else "",
        spec=parsed,
        clusters=tuple(cluster_names(shard)),
        pin=mapping_at(spec, "pinnedRevision") or mapping_at(status, "pinnedRevision"),
        previous=previous,
        handed=handed,
        conditions={
            c["type"]: c
            for c in reversed(list_at(status, "conditions"))
            if isinstance(c, dict) and isinstance(c.get("type"), str)
        },
    )


def _previous_rows(
    own: list[Any], entries: list[Any]
) -> tuple[dict[str, dict[str, Any]], frozenset[str]]:
    """The rows a reconcile starts from, and the clusters handed a `staged` row.

    A cluster's `staged` row stands in for its own row while it has none, and also while it
    is Ready and its own is not: the ModelCache hands it until this shard reports the
    cluster Ready (cache/fleet.py), so a report short of Ready (the cluster unable to stage
    at the first reconcile, a status written in between) never unlatches a staged copy."""
    rows = {r["name"]: r for r in own if isinstance(r, dict) and isinstance(r.get("name"), str)}
    handed: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name, staged = entry.get("name"), mapping_at(entry, "staged")
        if not staged or not isinstance(name, str):
            continue
        handed.add(name)
        mine = rows.get(name)
        if mine is None or (staged.get("phase") == READY and mine.get("phase") != READY):
            rows[name] = {"name": name, **staged}
    return rows, frozenset(handed)
