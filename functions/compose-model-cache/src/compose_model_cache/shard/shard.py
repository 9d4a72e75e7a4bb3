"""A ModelCacheShard: the cache staged on a share of its clusters.

A shard is the ModelCache as it was before shards, over the clusters its spec lists: the
same claims, Secrets and hydration Jobs under the same names and keys, decided by the same
core (core.compose_cache). The ModelCache's spec and pin arrive in the shard's spec
(fleet.py); the shard reads its own clusters' InferenceClusters, by name. Reconciling it
costs its own clusters' objects, whatever the size of the fleet.
"""

from typing import Any

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.outcome import Outcome

from compose_model_cache.shard.core import compose_cache


def _previous_rows(own: list[Any], clusters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The shard's own rows; for a cluster it has not reported yet, what the ModelCache had
    staged there (`staged`, handed over once by fleet.py) so Ready stays latched."""
    rows = [r for r in own if isinstance(r, dict) and isinstance(r.get("name"), str)]
    reported = {r["name"] for r in rows}
    for entry in clusters:
        staged = mapping_at(entry, "staged")
        if staged and entry.get("name") not in reported:
            rows.append({"name": entry.get("name"), **staged})
    return rows


def as_cache(shard: dict[str, Any]) -> dict[str, Any]:
    """The ModelCache the shard stands for, as core.compose_cache reads one: its name and
    namespace, its spec (every cluster listed matches: no selector) and the status the rows
    latch from."""
    spec = mapping_at(shard, "spec")
    status = mapping_at(shard, "status")
    clusters = [e for e in list_at(spec, "clusters") if isinstance(e, dict)]
    cache_spec = {k: v for k, v in mapping_at(spec, "cache").items() if k != "clusterSelector"}
    pinned = mapping_at(spec, "pinnedRevision") or mapping_at(status, "pinnedRevision")
    return {
        "apiVersion": shard.get("apiVersion"),
        "kind": "ModelCache",
        "metadata": {
            "name": spec.get("cacheName"),
            "namespace": mapping_at(shard, "metadata").get("namespace"),
        },
        "spec": cache_spec,
        "status": {
            "conditions": list_at(status, "conditions"),
            "clusters": _previous_rows(list_at(status, "clusters"), clusters),
            **({"pinnedRevision": pinned} if pinned else {}),
        },
    }


def cluster_names(shard: dict[str, Any]) -> list[str]:
    """The clusters the shard's spec lists, in order, each once."""
    names = (e.get("name") for e in list_at(mapping_at(shard, "spec"), "clusters"))
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def compose_shard(
    shard: dict[str, Any],
    clusters: list[ClusterView] | None,
    observed: dict[str, ObservedObject],
    echoes: dict[str, dict[str, Any]] | None = None,
    asks: dict[str, str] | None = None,
) -> Outcome:
    """What the shard composes and reports: the cache's core over the clusters it lists.
    `clusters`: their InferenceClusters as Crossplane resolved them (None: not yet); one
    that no longer exists is not among them, and loses its objects as it always did."""
    if clusters is None:
        return Outcome.resolving(shard, "ArtifactReady", "the InferenceClusters this shard lists")
    listed = set(cluster_names(shard))
    views = [v for v in clusters if v.name in listed]
    return compose_cache(as_cache(shard), views, observed, echoes, asks)
