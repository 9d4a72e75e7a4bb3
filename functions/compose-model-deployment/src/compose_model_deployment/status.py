"""The ModelDeployment's status and conditions: Scheduled, ModelCacheReady, Available."""

from typing import Any

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.conditions import LISTED, Status, listed
from modelfleet_contracts.observed import PlacedReplica, StagedCache

from compose_model_deployment.eligibility import Candidate, Rejection

# False for these means work under way: a Normal event, not a Warning.
PROGRESS_REASONS = frozenset({"Progressing", "Hydrating", "Moving"})


def deployment_status(
    desired: int,
    views: list[ClusterView],
    evaluations: dict[str, Candidate | Rejection],
    placement: dict[str, int],
    mine: dict[str, PlacedReplica],
    cache_name: str | None,
    cache: StagedCache | None,
    leaving: dict[str, int] | None = None,
) -> tuple[dict[str, Any], list[Status], bool]:
    """(status, conditions, ready) of `desired` replicas placed as `placement`; `leaving`:
    replicas per cluster that serve until their replacements are Available (a move)."""
    leaving = leaving or {}
    placed = sum(placement.values())
    observed_by_cluster = {r.cluster: r for r in mine.values()}
    ready = min(
        desired,
        sum(
            min(observed_by_cluster[c].ready_replicas, n)
            for c, n in {**placement, **leaving}.items()
            if c in observed_by_cluster
        ),
    )
    rows = []
    for v in views:
        e = evaluations[v.name]
        count = placement.get(v.name, 0) or leaving.get(v.name, 0)
        row: dict[str, Any] = {"name": v.name, "replicas": count}
        if isinstance(e, Candidate):
            row["nodes"] = e.size.nodes
        if v.name in leaving:
            seen = observed_by_cluster.get(v.name)
            row["phase"] = seen.phase if seen and seen.phase else "Pending"
            row["message"] = "moving away: serves until its replacements are Available"
        elif count:
            seen = observed_by_cluster.get(v.name)
            row["phase"] = seen.phase if seen and seen.phase else "Pending"
            if seen and seen.message:
                row["message"] = seen.message
            if seen and seen.address:
                row["address"] = seen.address
            if seen and seen.gateway_address:
                row["gatewayAddress"] = seen.gateway_address
        elif isinstance(e, Rejection):
            row["phase"] = "Unschedulable"
            row["message"] = e.message
        elif isinstance(e, Candidate) and e.slots == 0:
            row["phase"] = "Unschedulable"
            row["message"] = (
                f"InsufficientCapacity: pool {e.pool.name} has {max(0, e.free_nodes)} of "
                f"{e.pool.node_count} node(s) free; a group needs {e.size.nodes}"
            )
        else:
            row["phase"] = "Unused"
        rows.append(row)
    status = {
        "replicas": {"desired": desired, "ready": ready},
        "summary": {"ready": f"{ready}/{desired}"},
        "clusters": rows,
    }
    rejections = [e for e in evaluations.values() if isinstance(e, Rejection)]
    where = listed(f"{c}={n}" for c, n in sorted(placement.items())) or "nowhere"
    if not views:
        scheduled = Status.false(
            "Scheduled", "NoClusters", "no InferenceCluster matches spec.clusterSelector"
        )
    elif placed >= desired:
        notes = _rejection_notes(rejections)
        message = f"{placed}/{desired} replica(s) placed ({where})" + (
            f"; {notes}" if notes else ""
        )
        scheduled = Status.true("Scheduled", "Scheduled", message)
    else:
        reasons = {r.reason for r in rejections}
        candidates = [e for e in evaluations.values() if isinstance(e, Candidate)]
        if candidates or "InsufficientCapacity" in reasons:
            reason = "InsufficientCapacity"
        elif "SharedStorageRequired" in reasons:
            reason = "SharedStorageRequired"
        elif reasons == {"ModelCacheNotFound"}:
            reason = "ModelCacheNotFound"
        else:
            reason = "NoClusters"
        # The clusters rejected for the reason given come first: a long list is cut short.
        notes = _rejection_notes(sorted(rejections, key=lambda r: r.reason != reason))
        message = f"{placed}/{desired} replica(s) placed ({where})" + (
            f"; {notes}" if notes else ""
        )
        scheduled = Status.false("Scheduled", reason, message)

    conditions = [scheduled, _cache_condition(cache_name, cache, placement)]
    available = desired > 0 and ready >= desired
    conditions.append(
        Status.true("Available", "Available", f"{ready}/{desired} replica(s) ready")
        if available or desired == 0
        else Status.false("Available", "Progressing", f"{ready}/{desired} replica(s) ready")
    )
    return status, conditions, scheduled.status and (available or desired == 0)


def _rejection_notes(rejections: list[Rejection]) -> str:
    """`cluster: why` of the first LISTED rejected clusters, the others counted (each
    cluster's row says why it was rejected)."""
    notes = "; ".join(f"{r.cluster}: {r.message}" for r in rejections[:LISTED])
    if len(rejections) > LISTED:
        notes += f"; and {len(rejections) - LISTED} more cluster(s), each row says why"
    return notes


def _cache_condition(
    cache_name: str | None,
    cache: StagedCache | None,
    placement: dict[str, int],
) -> Status:
    """ModelCacheReady: are the weights staged on every cluster a replica is placed on?"""
    if cache is None:
        return Status.true(
            "ModelCacheReady",
            "NotReferenced",
            "no spec.modelCacheRef: every engine pod loads its own weights",
        )
    if not placement:
        return Status.false(
            "ModelCacheReady",
            "NotPlaced",
            f"no replica of this deployment is placed on a cluster of ModelCache {cache_name}",
        )
    phases = {c: cache.phases.get(c) or "Pending" for c in sorted(placement)}
    waiting = {c: p for c, p in phases.items() if p != "Ready"}
    if not waiting:
        return Status.true("ModelCacheReady", "Ready", "weights staged on every placed cluster")
    # Failed clusters first: a long list is cut short (`listed`).
    ordered = sorted(waiting.items(), key=lambda item: item[1] != "Failed")
    where = listed(f"{c} ({p})" for c, p in ordered)
    if "Failed" in waiting.values():
        return Status.false("ModelCacheReady", "Failed", f"staging failed on {where}")
    return Status.false("ModelCacheReady", "Hydrating", f"waiting for weights on {where}")
