"""How many nodes one serving group needs on a node pool."""

import math
from dataclasses import dataclass

from modelfleet_contracts.clusters import NodePool


@dataclass(frozen=True)
class GroupSize:
    nodes: int
    gpus_per_node: int


def group_size(
    pool: NodePool, *, nodes: int | None, gpus_per_node: int | None, vram_gib: int | None
) -> GroupSize | str:
    """The group's shape on `pool`, or why the pool cannot host it.

    `nodes` wins when set; otherwise the model's VRAM over one node's share of it
    (gpusPerNode x the pool's GPU memory), rounded up; otherwise one node.
    """
    gpus = gpus_per_node or pool.gpu_count
    if gpus <= 0:
        return f"pool {pool.name} reports no GPUs"
    if pool.gpu_count < gpus:
        return f"pool {pool.name} has {pool.gpu_count} GPUs per node, fewer than gpusPerNode {gpus}"
    if nodes:
        return GroupSize(nodes, gpus)
    if vram_gib:
        if pool.gpu_memory_gib <= 0:
            return f"pool {pool.name} does not report GPU memory"
        return GroupSize(max(1, math.ceil(vram_gib / (gpus * pool.gpu_memory_gib))), gpus)
    return GroupSize(1, gpus)
