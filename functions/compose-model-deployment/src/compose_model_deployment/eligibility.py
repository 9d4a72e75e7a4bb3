"""Which clusters can host a deployment's groups, and why the others cannot."""

from dataclasses import dataclass

from modelfleet_contracts.clusters import ClusterView, NodePool
from modelfleet_contracts.models.modeldeployment import Resources

from compose_model_deployment.sizing import GroupSize, group_size

SHARED_STORAGE_MESSAGE = "multi-node model requires shared storage on the inference cluster"


@dataclass(frozen=True)
class Candidate:
    """A cluster that can host groups: its pool, the group shape and free groups."""

    cluster: ClusterView
    pool: NodePool
    size: GroupSize
    free_nodes: int

    @property
    def slots(self) -> int:
        return max(0, self.free_nodes // self.size.nodes)


@dataclass(frozen=True)
class Rejection:
    cluster: str
    reason: str  # a Scheduled reason: SharedStorageRequired, InsufficientCapacity, ...
    message: str


def evaluate_cluster(
    view: ClusterView,
    *,
    resources: Resources | None,
    nodes: int | None,
    cache_name: str | None,
    cache_clusters: set[str],
    used_nodes: dict[tuple[str, str], int],
    sticky_pool: str | None,
) -> Candidate | Rejection:
    """Candidate or the reason `view` cannot host a group of this deployment."""
    if not view.reachable:
        return Rejection(view.name, "NoClusters", f"cluster {view.name} is not connected")
    shapes: list[tuple[NodePool, GroupSize]] = []
    reasons: list[str] = []
    for pool in sorted(view.node_pools, key=lambda p: p.name):
        size = group_size(
            pool,
            nodes=nodes,
            gpus_per_node=resources.gpusPerNode if resources else None,
            vram_gib=resources.vramGiB if resources else None,
        )
        if isinstance(size, str):
            reasons.append(size)
        else:
            shapes.append((pool, size))
    if not shapes:
        why = "; ".join(reasons) or f"cluster {view.name} reports no GPU node pools"
        return Rejection(view.name, "InsufficientCapacity", why)
    if not (view.has_shared_storage and cache_name):
        # Several nodes of one group must read the same weights: shared storage + a cache.
        single = [(pool, size) for pool, size in shapes if size.nodes == 1]
        if not single:
            # The SPEC's words in both cases (the weights reach that storage through a cache).
            message = f"{SHARED_STORAGE_MESSAGE} {view.name}"
            if view.has_shared_storage:
                message += (
                    ", read through a ModelCache: set spec.modelCacheRef so every node of a "
                    "group reads the same weights"
                )
            return Rejection(view.name, "SharedStorageRequired", message)
        shapes = single
    if cache_name and view.name not in cache_clusters:
        message = (
            f"ModelCache {cache_name} does not stage to cluster {view.name}"
            if cache_clusters
            else f"ModelCache {cache_name} has not reported any cluster yet (status.clusters)"
        )
        return Rejection(view.name, "ModelCacheNotFound", message)
    options = [
        Candidate(view, pool, size, pool.node_count - used_nodes.get((view.name, pool.name), 0))
        for pool, size in shapes
    ]
    # Stay on the pool already used; otherwise the one with the most free groups.
    for option in options:
        if option.pool.name == sticky_pool:
            return option
    return max(options, key=lambda c: (c.slots, [-ord(ch) for ch in c.pool.name]))
