"""The scheduler: one ModelDeployment -> one ModelReplica per cluster.

Inputs that are unresolved or missing hold the placement as it is (the observed
ModelReplicas are kept) and say why; they never remove a replica.

With each ModelReplica it composes or keeps, the deployment composes the Crossplane Usages
`by` that replica of its ModelCache and of its InferenceCluster (usage.py), so neither can be
deleted from under the replica; a replica dropped takes its Usages with it.
"""

import re
from datetime import datetime, timedelta
from typing import Any

from modelfleet_contracts.api import API_VERSION, MODEL_DEPLOYMENT, MODEL_REPLICA
from modelfleet_contracts.clusters import SELECTED_CLUSTERS, ClusterView, matches_selector, select
from modelfleet_contracts.conditions import Status, listed, previous_condition
from modelfleet_contracts.engine_rules import engine_problem
from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.labels import CLUSTER_LABEL, REPLACES_ANNOTATION, owner_labels
from modelfleet_contracts.models.modeldeployment import ModelDeploymentSpec
from modelfleet_contracts.naming import composed_key, remote_name
from modelfleet_contracts.observed import PlacedReplica, StagedCache
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.served_names import is_servable_name
from modelfleet_contracts.spec import InvalidSpec, filled, parse_spec

from compose_model_deployment.eligibility import Candidate, Rejection, evaluate_cluster
from compose_model_deployment.healing import (
    DEFAULT_MOVE_AFTER_SECONDS,
    HEALTH,
    MOVED,
    cannot_serve,
    finished_move,
    move_text,
    moved_condition,
    moving_condition,
    serving_condition,
    stuck_note,
    unservable_condition,
    unservable_for,
)
from compose_model_deployment.placement import place
from compose_model_deployment.served import served_name, served_name_condition
from compose_model_deployment.status import deployment_status
from compose_model_deployment.usage import replica_usages

# A cluster's rank among equally loaded ones, by the cache's phase there (lower first).
STAGE_RANK = {"Ready": 0, "Hydrating": 1}
STAGEABLE_RANK, UNSERVABLE_RANK = 2, 3
_PLAIN_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# Conditions that only change when something this deployment reads (not composes) changes.
READ_NOT_WATCHED = ("Scheduled", "ModelCacheReady", HEALTH)
# Conditions that change with its own ModelReplicas: Crossplane watches those, yet as they roll
# out their events can outrun its circuit breaker, which then drops them (docs/benchmarks.md,
# "Looking again while replicas roll out").
ROLLING_OUT = ("Available",)
# What a ModelReplica takes over from its ModelDeployment as written (same schema in both).
CARRIED_FIELDS = ("engine", "rollout", "gang", "placement")


def spec_problem(spec: ModelDeploymentSpec) -> str | None:
    """What the schema alone does not catch (its CEL rules), in words; None when valid."""
    return engine_problem(spec.engine)


def replica_key(cluster: str) -> str:
    """The composition-resource-name of the ModelReplica on `cluster`. InferenceCluster
    names may contain dots; those get a hashed key so `a.b` and `a-b` never share one."""
    if _PLAIN_NAME.fullmatch(cluster):
        return composed_key("replica", cluster)
    return remote_name("replica", cluster)


def compose_deployment(
    xr: dict[str, Any],
    clusters: list[ClusterView] | None,
    cache: list[StagedCache] | None,
    replicas: list[PlacedReplica] | None,
    mine: dict[str, PlacedReplica],
    now: datetime,
    observed_usages: frozenset[str] = frozenset(),
) -> Outcome:
    """`clusters`, `cache`, `replicas`: what Crossplane resolved for the requirements (None:
    not yet); `replicas` are every ModelReplica of the fleet, this deployment's included.
    `mine`: the ModelReplicas this deployment composed, as observed, by resource name.
    `now`: the time to measure how long the XR's conditions have said what they say.
    `observed_usages`: the names of the Usages this deployment composed, as observed."""
    spec = parse_spec(ModelDeploymentSpec, mapping_at(xr, "spec"), spec_problem)
    if isinstance(spec, InvalidSpec):
        return Outcome.held(Status.false("Scheduled", "InvalidSpec", spec.message))
    cache_name = spec.modelCacheRef.name if spec.modelCacheRef else None
    if clusters is None or replicas is None or (cache_name and cache is None):
        unresolved = {
            SELECTED_CLUSTERS: clusters is None,
            "the fleet's ModelReplicas": replicas is None,
            f"ModelCache {cache_name}": bool(cache_name) and cache is None,
        }
        return Outcome.resolving(xr, "Scheduled", *(w for w, u in unresolved.items() if u))
    if cache_name and not cache:
        missing = f"ModelCache {cache_name} not found in this namespace"
        held = Outcome.held(
            Status.false("Scheduled", "ModelCacheNotFound", f"{missing}; placement held as it is"),
            Status.false("ModelCacheReady", "ModelCacheNotFound", missing),
        )
        held.recheck_soon = True  # the cache may be created at any moment
        return held

    metadata = mapping_at(xr, "metadata")
    name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace", ""))
    staged = cache[0] if cache else None
    cache_phases = staged.phases if staged is not None else {}
    views = select(clusters, spec.clusterSelector)
    if staged is not None and views and not any(can_stage_to(staged, v) for v in views):
        return disjoint_selectors(cache_name or "", [v.name for v in views])
    others = [r for r in replicas if not r.owned_by(name, namespace)]
    used: dict[tuple[str, str], int] = {}
    for r in others:
        used[(r.cluster, r.pool)] = used.get((r.cluster, r.pool), 0) + r.replicas * r.nodes

    sticky = {r.cluster: r for r in mine.values() if r.cluster}
    evaluations: dict[str, Candidate | Rejection] = {
        v.name: evaluate_cluster(
            v,
            resources=spec.resources,
            nodes=spec.nodes,
            cache_name=cache_name,
            cache_clusters=set(cache_phases),
            used_nodes=used,
            sticky_pool=sticky[v.name].pool if v.name in sticky else None,
        )
        for v in views
    }
    matched = {v.name for v in views}
    grace = (
        spec.healing.moveAfterSeconds
        if spec.healing and spec.healing.moveAfterSeconds
        else DEFAULT_MOVE_AFTER_SECONDS
    )
    # Sticky: a placed replica stays while its cluster exists and matches, unless it moves.
    placed = {c: r for c, r in sticky.items() if c in matched}
    by_name = {v.name: v for v in views}
    unservable = {
        c: why
        for c in placed
        if (why := cannot_serve(by_name[c], cache_name, cache_phases.get(c))) is not None
    }
    trouble = unservable_condition(unservable, grace)
    lasted = (
        unservable_for(previous_condition(xr, HEALTH), trouble, now) if trouble else timedelta(0)
    )
    due = set(unservable) if lasted >= timedelta(seconds=grace) else set()
    # A move under way: its new replicas name the clusters they replace, whatever those
    # clusters' state is now (a recovered cluster does not pull its replicas back).
    under_way = {c for r in placed.values() for c in r.replaces if c in placed}
    free_slots = {
        c: max(0, e.slots - placed[c].replicas if c in placed else e.slots)
        for c, e in evaluations.items()
        if isinstance(e, Candidate)
    }
    # Among clusters equally loaded, new replicas go where the weights are Ready, then where
    # they are being staged, then where they can be staged, and last where they cannot be
    # served (never when moving off one). A ModelCache staging where it is served picks its
    # warm spares in this order (compose-model-cache's cache/footprint.py).
    rank = {
        c: UNSERVABLE_RANK
        if cannot_serve(by_name[c], cache_name, cache_phases.get(c))
        else STAGE_RANK.get(cache_phases.get(c) or "", STAGEABLE_RANK)
        for c in free_slots
    }
    desired_total = filled(spec.replicas)

    def placement_without(evicted: set[str]) -> dict[str, int]:
        current = {c: r.replicas for c, r in placed.items() if c not in evicted}
        slots = {
            c: n
            for c, n in free_slots.items()
            if c not in evicted and not (evicted and rank[c] == UNSERVABLE_RANK)
        }
        return place(desired_total, current, slots, rank)

    evicted = due | under_way
    placement = placement_without(evicted)
    stuck: set[str] = set()
    if due - under_way and sum(placement.values()) < sum(placement_without(under_way).values()):
        # Nowhere to go for all of them: they stay where they are (and are said to be stuck).
        stuck = due - under_way
        evicted = set(under_way)
        placement = placement_without(evicted)
    # Where the moved replicas go: clusters that gain replicas now, or whose replicas say
    # they replace one that is moving.
    targets = sorted(
        c
        for c, n in placement.items()
        if evicted
        and (
            n > (placed[c].replicas if c in placed else 0)
            or (c in placed and bool(set(placed[c].replaces) & evicted))
        )
    )
    targets_available = all(
        c in placed and placed[c].ready_replicas >= placement[c] for c in targets
    )
    # Make before break: a replica that was serving stays until its replacements are Available.
    leaving = {
        c: placed[c].replicas
        for c in sorted(evicted)
        if placed[c].ready_replicas > 0 and not targets_available
    }
    gone = {c: placed[c].replicas for c in sorted(evicted) if c not in leaving}

    served = served_name(spec, staged)
    out = Outcome()
    # The ModelReplicas composed or kept: (their name, their cluster), for their Usages.
    composed: dict[str, tuple[str, str]] = {}
    for cluster, count in sorted(placement.items()):
        evaluation = evaluations.get(cluster)
        key = replica_key(cluster)
        if isinstance(evaluation, Candidate) or key in mine:
            composed[key] = (remote_name(name, cluster), cluster)
        if isinstance(evaluation, Candidate):
            # Named while the move is under way, and in the response that ends it (so the
            # deletion of the old replica reads as the move it is).
            replaces = sorted(evicted) if cluster in targets else []
            out.desired[key] = replica_for(
                spec, name, namespace, evaluation, count, cache_name, served.name, replaces
            )
        elif key in mine:
            # Placed before, cluster still matches but cannot be evaluated right now
            # (e.g. disconnected): keep the replica as it was, with the new count.
            out.kept.append(key)
            out.kept_changes[key] = {("spec", "replicas"): count}
    out.kept.extend(replica_key(c) for c in leaving if replica_key(c) in mine)
    composed.update(
        {replica_key(c): (remote_name(name, c), c) for c in leaving if replica_key(c) in mine}
    )
    usages, kept_usages = replica_usages(
        deployment=name,
        namespace=namespace,
        replicas=composed,
        cache=cache_name if staged is not None else None,
        clusters={c.name for c in clusters},
        observed=set(observed_usages),
    )
    out.desired.update(usages)
    out.kept.extend(kept_usages)

    previous_health = previous_condition(xr, HEALTH)
    moves = {**leaving, **gone}
    text = move_text(moves, targets, unservable, grace) if moves else ""
    if leaving:
        health = moving_condition(text, sorted(leaving), targets)
    elif remaining := {c: w for c, w in unservable.items() if c not in gone}:
        health = unservable_condition(remaining, grace) or serving_condition(None)
    elif gone:
        health = moved_condition(text)
    elif finished := finished_move(previous_health):
        health = moved_condition(finished)
    else:
        health = serving_condition(previous_health)
    if gone and health.reason != MOVED:
        out.happenings.append(f"Moved {text}")
    out.status, out.conditions, out.ready = deployment_status(
        desired_total, views, evaluations, placement, mine, cache_name, staged, leaving
    )
    if stuck:
        out.conditions[0] = stuck_note(out.conditions[0], stuck)
    out.conditions.append(health)
    if served.name is not None:
        out.status["servedModelName"] = served.name
    out.conditions.append(served_name_condition(served))
    # Placement and the cache's state come from InferenceClusters, ModelReplicas of other
    # deployments and the ModelCache, which Crossplane reads but does not watch; and while
    # its replicas roll out, their events may be dropped (ROLLING_OUT): look again soon.
    waits = (*READ_NOT_WATCHED, *ROLLING_OUT)
    out.recheck_soon = any(not c.status for c in out.conditions if c.type in waits)
    return out


def can_stage_to(cache: StagedCache, view: ClusterView) -> bool:
    """The cache's selector takes in `view` (or the cache already reports it, or its
    selector is of a shape this cannot read: then it is not ruled out)."""
    if view.name in cache.phases or cache.selector is None:
        return True
    selector = cache.selector
    labels, expressions = selector.get("matchLabels", {}), selector.get("matchExpressions", [])
    if not isinstance(labels, dict) or not isinstance(expressions, list):
        return True
    if not all(isinstance(e, dict) for e in expressions):
        return True
    return matches_selector(view.labels, selector)


def disjoint_selectors(cache_name: str, selected: list[str]) -> Outcome:
    """The deployment's clusters and its cache's have none in common: said at once, without
    waiting for the cache to report; everything composed before is kept."""
    message = (
        f"ModelCache {cache_name} can stage to none of the clusters spec.clusterSelector "
        f"selects ({listed(selected)}): its spec.clusterSelector and this deployment's have no "
        "InferenceCluster in common; change one of them (placement held as it is)"
    )
    held = Outcome.held(
        Status.false("Scheduled", "ModelCacheNotFound", message),
        Status.false("ModelCacheReady", "NotPlaced", message),
    )
    held.recheck_soon = True  # a selector fixed on the cache is not watched from here
    return held


def replica_for(
    spec: ModelDeploymentSpec,
    name: str,
    namespace: str,
    candidate: Candidate,
    count: int,
    cache_name: str | None,
    served_model_name: str | None,
    replaces: list[str] | None = None,
) -> dict[str, Any]:
    """The ModelReplica carrying this cluster's share, its fully resolved placement and the
    resolved served model name; `replaces`: the clusters whose replicas it takes over (a move
    under way)."""
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
    # A name from engine.args may not fit the field; the engine has it in its args anyway.
    if served_model_name is not None and is_servable_name(served_model_name):
        body["servedModelName"] = served_model_name
    for field in CARRIED_FIELDS:
        block = getattr(spec, field)
        written = block.model_dump(mode="json", exclude_none=True, warnings=False) if block else {}
        if written:
            body[field] = written
    labels = {
        **owner_labels(MODEL_DEPLOYMENT, name, namespace),
        CLUSTER_LABEL: candidate.cluster.name,
    }
    metadata: dict[str, Any] = {
        "name": remote_name(name, candidate.cluster.name),
        "labels": labels,
    }
    if replaces:
        metadata["annotations"] = {REPLACES_ANNOTATION: ",".join(replaces)}
    return {"apiVersion": API_VERSION, "kind": MODEL_REPLICA, "metadata": metadata, "spec": body}
