"""The scheduler: one ModelDeployment -> one ModelReplica per cluster.

Inputs that are unresolved or missing hold the placement as it is (the observed
ModelReplicas are kept) and say why; they never remove a replica.
"""

import re
from typing import Any

from modelfleet_contracts.api import API_VERSION, MODEL_DEPLOYMENT, MODEL_REPLICA
from modelfleet_contracts.clusters import SELECTED_CLUSTERS, ClusterView, select
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.labels import CLUSTER_LABEL, owner_labels
from modelfleet_contracts.models.modeldeployment import ModelDeploymentSpec
from modelfleet_contracts.naming import composed_key, remote_name
from modelfleet_contracts.observed import PlacedReplica, StagedCache
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.served_names import (
    CONFLICT,
    ENGINE_DEFAULT,
    FROM_ENGINE_ARGS,
    FROM_MODEL_CACHE,
    FROM_SPEC,
    SERVED_MODEL_NAME_FLAG,
    ServedName,
    is_servable_name,
    resolve_served_name,
)
from modelfleet_contracts.spec import InvalidSpec, filled, parse_spec

from compose_model_deployment.eligibility import Candidate, Rejection, evaluate_cluster
from compose_model_deployment.placement import place
from compose_model_deployment.status import deployment_status

_PLAIN_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# Conditions that only change when something this deployment reads (not composes) changes.
READ_NOT_WATCHED = ("Scheduled", "ModelCacheReady")
SERVED_NAME_CONDITION = "ServedModelNameResolved"
# What a ModelReplica takes over from its ModelDeployment as written (same schema in both).
CARRIED_FIELDS = ("engine", "rollout", "gang", "placement")


def spec_problem(spec: ModelDeploymentSpec) -> str | None:
    """What the schema alone does not catch (its CEL rules), in words; None when valid."""
    if spec.engine and spec.engine.framework == "Custom" and not spec.engine.command:
        return "engine.command is required when engine.framework is Custom"
    return None


def served_name(spec: ModelDeploymentSpec, cache: StagedCache | None) -> ServedName:
    """The name clients send (`served_names` has the precedence)."""
    engine = spec.engine
    return resolve_served_name(
        framework=str(filled(engine.framework)) if engine else "vLLM",
        engine_args=[a.root for a in (engine.args or [])] if engine else [],
        spec_name=spec.servedModelName,
        natural=cache.natural_name if cache is not None else "",
    )


def served_name_condition(served: ServedName) -> Status:
    """ServedModelNameResolved: which name clients send and where it comes from; False when
    engine.args and spec.servedModelName disagree (the engine args win)."""
    if served.overridden is not None:
        return Status.false(
            SERVED_NAME_CONDITION,
            CONFLICT,
            f"engine.args sets {SERVED_MODEL_NAME_FLAG}={served.name}, which wins over "
            f"spec.servedModelName {served.overridden}: clients send {served.name!r}; "
            "remove one of the two",
        )
    said = {
        FROM_ENGINE_ARGS: f"from {SERVED_MODEL_NAME_FLAG} in engine.args",
        FROM_SPEC: "from spec.servedModelName",
        FROM_MODEL_CACHE: "the ModelCache source's id",
    }
    if served.name is None:
        return Status(
            SERVED_NAME_CONDITION,
            True,
            ENGINE_DEFAULT,
            "no spec.servedModelName and no ModelCache to name the model: the engine serves it "
            "under its own default (vLLM: the --model value)",
        )
    return Status(
        SERVED_NAME_CONDITION,
        True,
        served.origin,
        f"clients send model {served.name!r} ({said[served.origin]})",
    )


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
) -> Outcome:
    """`clusters`, `cache`, `replicas`: what Crossplane resolved for the requirements (None:
    not yet); `replicas` are every ModelReplica of the fleet, this deployment's included.
    `mine`: the ModelReplicas this deployment composed, as observed, by resource name."""
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
    # Sticky: a placed replica stays while its cluster exists and matches.
    current = {c: r.replicas for c, r in sticky.items() if c in matched}
    slots = {
        c: max(0, e.slots - current.get(c, 0))
        for c, e in evaluations.items()
        if isinstance(e, Candidate)
    }
    desired_total = filled(spec.replicas)
    placement = place(desired_total, current, slots)

    served = served_name(spec, staged)
    out = Outcome()
    for cluster, count in sorted(placement.items()):
        evaluation = evaluations.get(cluster)
        key = replica_key(cluster)
        if isinstance(evaluation, Candidate):
            out.desired[key] = replica_for(
                spec, name, namespace, evaluation, count, cache_name, served.name
            )
        elif key in mine:
            # Placed before, cluster still matches but cannot be evaluated right now
            # (e.g. disconnected): keep the replica as it was, with the new count.
            out.kept.append(key)
            out.kept_changes[key] = {("spec", "replicas"): count}
    out.status, out.conditions, out.ready = deployment_status(
        desired_total, views, evaluations, placement, mine, cache_name, staged
    )
    if served.name is not None:
        out.status["servedModelName"] = served.name
    out.conditions.append(served_name_condition(served))
    # Placement and the cache's state come from InferenceClusters, ModelReplicas of other
    # deployments and the ModelCache, which Crossplane reads but does not watch.
    out.recheck_soon = any(not c.status for c in out.conditions if c.type in READ_NOT_WATCHED)
    return out


def replica_for(
    spec: ModelDeploymentSpec,
    name: str,
    namespace: str,
    candidate: Candidate,
    count: int,
    cache_name: str | None,
    served_model_name: str | None,
) -> dict[str, Any]:
    """The ModelReplica carrying this cluster's share, its fully resolved placement and the
    resolved served model name."""
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
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_REPLICA,
        "metadata": {"name": remote_name(name, candidate.cluster.name), "labels": labels},
        "spec": body,
    }
