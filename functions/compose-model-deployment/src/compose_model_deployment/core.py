"""The scheduler: one ModelDeployment -> one ModelReplica per cluster, from plain data.

Inputs that are unresolved or missing hold the placement as it is (the observed
ModelReplicas are kept) and say why; they never remove a replica.
"""

import re
from typing import Any

from modelfleet_contracts.api import API_VERSION, MODEL_DEPLOYMENT, MODEL_REPLICA
from modelfleet_contracts.clusters import ClusterView, matches_selector, read_cluster
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.labels import CLUSTER_LABEL, owner_labels
from modelfleet_contracts.models.modeldeployment import ModelDeploymentSpec
from modelfleet_contracts.naming import composed_key, remote_name
from modelfleet_contracts.objects import carry_forward
from modelfleet_contracts.outcome import Outcome
from pydantic import ValidationError

from compose_model_deployment.eligibility import Candidate, Rejection, evaluate_cluster
from compose_model_deployment.placement import place
from compose_model_deployment.replicas import PlacedReplica, read_replica

_PLAIN_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# False for these means work under way: a Normal event, not a Warning.
PROGRESS_REASONS = frozenset({"Progressing", "Hydrating"})


def parse_spec(raw: Any) -> tuple[dict[str, Any], str | None]:
    try:
        model = ModelDeploymentSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return {}, f"spec.{where}: {first['msg']} ({exc.error_count()} problem(s) in total)"
    spec = model.model_dump(mode="json", exclude_none=True, warnings=False)
    engine = spec.get("engine") or {}
    if engine.get("framework") == "Custom" and not engine.get("command"):
        return spec, "engine.command is required when engine.framework is Custom"
    return spec, None


def replica_key(cluster: str) -> str:
    """The composition-resource-name of the ModelReplica on `cluster`. InferenceCluster
    names may contain dots; those get a hashed key so `a.b` and `a-b` never share one."""
    if _PLAIN_NAME.fullmatch(cluster):
        return composed_key("replica", cluster)
    return remote_name("replica", cluster)


def _hold(condition: Status) -> Outcome:
    """Keep every observed ModelReplica as it is; report why placement is on hold."""
    return Outcome(keep_everything=True, conditions=[condition])


def schedule(
    xr: dict[str, Any],
    clusters: list[dict[str, Any]] | None,
    cache: list[dict[str, Any]] | None,
    replicas: list[dict[str, Any]] | None,
    observed: dict[str, dict[str, Any]],
) -> Outcome:
    spec, problem = parse_spec(mapping_at(xr, "spec"))
    if problem:
        return _hold(Status.false("Scheduled", "InvalidSpec", problem))
    cache_name = mapping_at(spec, "modelCacheRef").get("name")
    if clusters is None or replicas is None or (cache_name and cache is None):
        return Outcome(keep_everything=True)
    if cache_name and not cache:
        missing = f"ModelCache {cache_name} not found in this namespace"
        return Outcome(
            keep_everything=True,
            conditions=[
                Status.false(
                    "Scheduled",
                    "ModelCacheNotFound",
                    f"{missing}; placement held as it is",
                ),
                Status.false("ModelCacheReady", "ModelCacheNotFound", missing),
            ],
        )

    metadata = mapping_at(xr, "metadata")
    name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace", ""))
    cache_obj = cache[0] if cache else None
    cache_rows = {
        str(r.get("name")): r
        for r in list_at(mapping_at(cache_obj, "status"), "clusters")
        if isinstance(r, dict)
    }
    selector = spec.get("clusterSelector")
    views = sorted(
        (v for v in map(read_cluster, clusters) if v.name and matches_selector(v.labels, selector)),
        key=lambda v: v.name,
    )
    mine = {k: read_replica(v) for k, v in observed.items()}
    others = [r for r in map(read_replica, replicas) if not r.owned_by(name, namespace)]
    used: dict[tuple[str, str], int] = {}
    for r in others:
        used[(r.cluster, r.pool)] = used.get((r.cluster, r.pool), 0) + r.replicas * r.nodes

    sticky = {r.cluster: r for r in mine.values() if r.cluster}
    evaluations: dict[str, Candidate | Rejection] = {
        v.name: evaluate_cluster(
            v,
            resources=spec.get("resources") or {},
            nodes=spec.get("nodes"),
            cache_name=cache_name,
            cache_clusters=set(cache_rows),
            used_nodes=used,
            sticky_pool=sticky[v.name].pool if v.name in sticky else None,
        )
        for v in views
    }
    matched = {v.name for v in views}
    # Sticky: a placed replica stays while its cluster exists and matches.
    current = {c: r.replicas for c, r in sticky.items() if c in matched}
    slots = {
        c: max(0, e.slots - current.get(c, 0))
        for c, e in evaluations.items()
        if isinstance(e, Candidate)
    }
    desired_total = int(spec.get("replicas", 1))
    placement = place(desired_total, current, slots)

    out = Outcome()
    for cluster, count in sorted(placement.items()):
        evaluation = evaluations.get(cluster)
        key = replica_key(cluster)
        if isinstance(evaluation, Candidate):
            out.desired[key] = replica_for(spec, name, namespace, evaluation, count, cache_name)
        elif key in observed:
            # Placed before, cluster still matches but cannot be evaluated right now
            # (e.g. disconnected): keep the replica as it was, with the new count.
            kept = carry_forward(observed[key])
            kept.setdefault("spec", {})["replicas"] = count
            out.desired[key] = kept
    out.status, out.conditions, out.ready = _report(
        spec, views, evaluations, placement, mine, cache_obj, cache_rows
    )
    return out


def replica_for(
    spec: dict[str, Any],
    name: str,
    namespace: str,
    candidate: Candidate,
    count: int,
    cache_name: str | None,
) -> dict[str, Any]:
    """The ModelReplica carrying this cluster's share and its fully resolved placement."""
    pool = candidate.pool
    body: dict[str, Any] = {
        "clusterName": candidate.cluster.name,
        "replicas": count,
        "nodes": candidate.size.nodes,
        "gpusPerNode": candidate.size.gpus_per_node,
        "nodePool": pool.name,
    }
    if pool.node_selector:
        body["nodeSelector"] = dict(pool.node_selector)
    if pool.tolerations:
        body["tolerations"] = list(pool.tolerations)
    if cache_name:
        body["modelCacheRef"] = {"name": cache_name}
    for field in ("engine", "rollout", "gang", "placement"):
        if spec.get(field):
            body[field] = spec[field]
    labels = {
        **owner_labels(MODEL_DEPLOYMENT, name, namespace),
        CLUSTER_LABEL: candidate.cluster.name,
    }
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_REPLICA,
        "metadata": {"name": remote_name(name, candidate.cluster.name), "labels": labels},
        "spec": body,
    }


def _report(
    spec: dict[str, Any],
    views: list[ClusterView],
    evaluations: dict[str, Candidate | Rejection],
    placement: dict[str, int],
    mine: dict[str, PlacedReplica],
    cache_obj: dict[str, Any] | None,
    cache_rows: dict[str, dict[str, Any]],
) -> tuple[dict[str, Any], list[Status], bool]:
    desired = int(spec.get("replicas", 1))
    placed = sum(placement.values())
    observed_by_cluster = {r.cluster: r for r in mine.values()}
    ready = sum(
        min(observed_by_cluster[c].ready_replicas, n)
        for c, n in placement.items()
        if c in observed_by_cluster
    )
    rows = []
    for v in views:
        e = evaluations[v.name]
        count = placement.get(v.name, 0)
        row: dict[str, Any] = {"name": v.name, "replicas": count}
        if isinstance(e, Candidate):
            row["nodes"] = e.size.nodes
        if count:
            seen = observed_by_cluster.get(v.name)
            row["phase"] = seen.phase if seen and seen.phase else "Pending"
            if seen and seen.message:
                row["message"] = seen.message
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
    where = ", ".join(f"{c}={n}" for c, n in sorted(placement.items())) or "nowhere"
    notes = "; ".join(f"{r.cluster}: {r.message}" for r in rejections)
    if not views:
        scheduled = Status.false(
            "Scheduled", "NoClusters", "no InferenceCluster matches spec.clusterSelector"
        )
    elif placed >= desired:
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
        message = f"{placed}/{desired} replica(s) placed ({where})" + (
            f"; {notes}" if notes else ""
        )
        scheduled = Status.false("Scheduled", reason, message)

    conditions = [scheduled, _cache_condition(spec, cache_obj, cache_rows, placement)]
    available = desired > 0 and ready >= desired
    conditions.append(
        Status.true("Available", "Available", f"{ready}/{desired} replica(s) ready")
        if available or desired == 0
        else Status.false("Available", "Progressing", f"{ready}/{desired} replica(s) ready")
    )
    return status, conditions, scheduled.status and (available or desired == 0)


def _cache_condition(
    spec: dict[str, Any],
    cache_obj: dict[str, Any] | None,
    cache_rows: dict[str, dict[str, Any]],
    placement: dict[str, int],
) -> Status:
    """ModelCacheReady: are the weights staged on every cluster a replica is placed on?"""
    if cache_obj is None:
        return Status.true(
            "ModelCacheReady",
            "NotReferenced",
            "no spec.modelCacheRef: every engine pod loads its own weights",
        )
    cache_name = mapping_at(spec, "modelCacheRef").get("name")
    if not placement:
        return Status.false(
            "ModelCacheReady",
            "NotPlaced",
            f"no replica of this deployment is placed on a cluster of ModelCache {cache_name}",
        )
    phases = {c: str(cache_rows.get(c, {}).get("phase") or "Pending") for c in sorted(placement)}
    waiting = {c: p for c, p in phases.items() if p != "Ready"}
    if not waiting:
        return Status.true("ModelCacheReady", "Ready", "weights staged on every placed cluster")
    where = ", ".join(f"{c} ({p})" for c, p in waiting.items())
    if "Failed" in waiting.values():
        return Status.false("ModelCacheReady", "Failed", f"staging failed on {where}")
    return Status.false("ModelCacheReady", "Hydrating", f"waiting for weights on {where}")
