"""Reading the fleet's ModelReplicas for a ModelCache that stages where it is served
(spec.staging WhereServed, footprint.py): where each is placed, whether it serves from this
cache, and the nodes it holds (what is left for the next replica decides the spares). Only
these few fields of a replica are read."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.fields import mapping_at, mapping_path

from compose_model_cache.cache.footprint import WHERE_SERVED


@dataclass(frozen=True)
class PlacedReplica:
    """A ModelReplica of the fleet: its cluster, the nodes it holds, and whether it serves
    from this cache."""

    cluster: str
    nodes: int
    serves_this_cache: bool


def wants_served(spec: dict[str, Any]) -> bool:
    """The ModelCache stages where it is served, so it reads its ModelReplicas."""
    return mapping_at(spec, "staging").get("policy") == WHERE_SERVED


def placed_replica(replica: dict[str, Any], cache: str, namespace: str) -> PlacedReplica | None:
    """A ModelReplica (its metadata.namespace and spec, as read) for the cache `cache` in
    `namespace`; None without a cluster."""
    spec = mapping_at(replica, "spec")
    cluster = spec.get("clusterName")
    if not isinstance(cluster, str) or not cluster:
        return None
    ours = (
        mapping_at(replica, "metadata").get("namespace") == namespace
        and mapping_path(replica, "spec", "modelCacheRef").get("name") == cache
    )
    return PlacedReplica(cluster, _count(spec.get("replicas")) * _count(spec.get("nodes")), ours)


def _count(value: object) -> int:
    return int(value) if isinstance(value, int | float) and value > 0 else 0


def free_nodes(pools: dict[str, int], replicas: list[PlacedReplica]) -> dict[str, int]:
    """Nodes left per cluster: its pools' nodes (`pools`, by cluster) less what replicas hold."""
    free = dict(pools)
    for r in replicas:
        if r.cluster in free:
            free[r.cluster] -= r.nodes
    return {c: max(0, n) for c, n in free.items()}
