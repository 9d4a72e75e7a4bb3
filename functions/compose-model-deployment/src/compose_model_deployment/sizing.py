"""How many nodes one serving group needs on a node pool."""

import math
from dataclasses import dataclass

from modelfleet_contracts.clusters import NodePool
from modelfleet_contracts.models.modelreplica import ModelReplicaSpec

# The largest group a ModelReplica can carry (its XRD's spec.nodes maximum): a bigger one
# would compose a ModelReplica the API server refuses.
MAX_GROUP_NODES: int = next(
    m.le for m in ModelReplicaSpec.model_fields["nodes"].metadata if hasattr(m, "le")
)


@dataclass(frozen=True)
class GroupSize:
    nodes: int
    gpus_per_node: int


def group_size(
    pool: NodePool, *, nodes: int | None, gpus_per_node: int | None, vram_gib: int | None
) -> GroupSize | str:
    """The group's shape on `pool`, or why the pool cannot host it.

    `nodes` wins when set; otherwise the model's VRAM over one node's share of it
    (gpusPerNode x the pool's GPU memory), rounded up; otherwise one node. Pods that claim
    no GPU (gpusPerNode 0) run only on a pool without GPUs, and only they do (_cpu_group).
    """
    gpus = pool.gpu_count if gpus_per_node is None else gpus_per_node
    if gpus == 0 or pool.gpu_count <= 0:
        return _cpu_group(pool, gpus_per_node, nodes=nodes, vram_gib=vram_gib)
    if pool.gpu_count < gpus:
        return f"pool {pool.name} has {pool.gpu_count} GPUs per node, fewer than gpusPerNode {gpus}"
    if nodes:
        return GroupSize(nodes, gpus)
    if not vram_gib:
        return GroupSize(1, gpus)
    if pool.gpu_memory_gib <= 0:
        return f"pool {pool.name} does not report GPU memory"
    needed = max(1, math.ceil(vram_gib / (gpus * pool.gpu_memory_gib)))
    if needed > MAX_GROUP_NODES:
        return (
            f"pool {pool.name} would need {needed} nodes per group for vramGiB {vram_gib} "
            f"({gpus} x {pool.gpu_memory_gib} GiB per node), more than the {MAX_GROUP_NODES} "
            "a group can span"
        )
    return GroupSize(needed, gpus)


def _cpu_group(
    pool: NodePool, gpus_per_node: int | None, *, nodes: int | None, vram_gib: int | None
) -> GroupSize | str:
    """A group of pods that claim no GPU, on a pool without GPUs: asked for explicitly, so
    that a GPU model never lands on CPU nodes, and sized by `nodes` (a CPU pool has no GPU
    memory for vramGiB to divide)."""
    if pool.gpu_count > 0:
        return (
            f"pool {pool.name} has GPUs; gpusPerNode 0 runs only on a pool without GPUs "
            "(gpu.count 0)"
        )
    if gpus_per_node != 0:
        asked = "unset" if gpus_per_node is None else str(gpus_per_node)
        return (
            f"pool {pool.name} has no GPUs: it serves only a deployment with "
            f"resources.gpusPerNode 0 (gpusPerNode is {asked})"
        )
    if nodes:
        return GroupSize(nodes, 0)
    if vram_gib:
        return (
            f"pool {pool.name} has no GPUs, so vramGiB {vram_gib} cannot size a group on it: "
            "set spec.nodes, or leave vramGiB out for one node per group"
        )
    return GroupSize(1, 0)
