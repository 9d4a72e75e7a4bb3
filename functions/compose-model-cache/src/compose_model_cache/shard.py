"""A ModelCacheShard: the cache staged on a share of its clusters.

A shard is the ModelCache as it was before shards, over the clusters its spec lists: the
same claims, Secrets and hydration Jobs under the same names and keys, decided by the same
core (core.compose_cache). What the ModelCache read of its InferenceClusters, its spec and
its pin arrive in the shard's spec (fleet.py), so a shard reads nothing else and reconciling
it costs its own clusters' objects, whatever the size of the fleet.
"""

from typing import Any

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.outcome import Outcome

from compose_model_cache.core import compose_cache


def cluster_view(entry: dict[str, Any]) -> ClusterView:
    """A shard's `spec.clusters[]` entry as the view the core reads (fleet.shard_entry writes
    it): storage is listed only when the cluster reports ready ReadWriteMany storage."""

    def text(key: str) -> str | None:
        value = entry.get(key)
        return value if isinstance(value, str) and value else None

    storage = text("storageClassName")
    return ClusterView(
        name=text("name") or "",
        labels={},
        provider_config_name=text("providerConfigName"),
        workload_namespace=text("workloadNamespace"),
        connected=entry.get("connected") is True,
        storage_class_name=storage,
        shared_storage_ready=storage is not None,
    )


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


def compose_shard(
    shard: dict[str, Any],
    observed: dict[str, ObservedObject],
    echoes: dict[str, dict[str, Any]] | None = None,
    asks: dict[str, str] | None = None,
) -> Outcome:
    """What the shard composes and reports: the cache's core over the clusters it lists."""
    clusters = [e for e in list_at(mapping_at(shard, "spec"), "clusters") if isinstance(e, dict)]
    views = [cluster_view(e) for e in clusters]
    outcome = compose_cache(as_cache(shard), views, observed, echoes, asks)
    # What the core would look again for (a cluster that cannot stage yet) reaches a shard
    # as a change to its spec, which Crossplane watches: no need to ask for an early run.
    outcome.recheck_soon = False
    return outcome
