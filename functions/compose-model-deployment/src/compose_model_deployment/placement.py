"""Spreading serving groups over clusters: deterministic, sticky, capacity-bound.

Scale-up adds to the least-loaded eligible cluster (ties: the better ranked, such as where the
weights are already staged, then by name); scale-down removes from the most-loaded (ties: the
worse ranked, then the reverse of the name order), so scaling up and back down returns to
where it started. Replicas already placed stay while their cluster exists and matches, whatever
its status says for a moment.
"""


def place(
    desired: int,
    current: dict[str, int],
    slots: dict[str, int],
    rank: dict[str, int] | None = None,
) -> dict[str, int]:
    """`current`: replicas per cluster to keep (sticky); `slots`: how many more groups
    each eligible cluster can take beyond its current ones; `rank`: among clusters equally
    loaded, the lower rank wins (default 0). Returns replicas per cluster (clusters with
    zero left out)."""
    rank = rank or {}
    placement = {c: n for c, n in current.items() if n > 0}
    while sum(placement.values()) > desired:
        most = max(placement, key=lambda c: (placement[c], rank.get(c, 0), c))
        placement[most] -= 1
        if placement[most] == 0:
            del placement[most]
    free = dict(slots)
    while sum(placement.values()) < desired:
        open_clusters = [c for c, n in free.items() if n > 0]
        if not open_clusters:
            break
        least = min(open_clusters, key=lambda c: (placement.get(c, 0), rank.get(c, 0), c))
        placement[least] = placement.get(least, 0) + 1
        free[least] -= 1
    return placement
