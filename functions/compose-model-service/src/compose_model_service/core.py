"""Deciding what a ModelService composes: on each cluster where any of its ModelDeployments
serves, one HTTPRoute on the cluster's Gateway that splits the model's traffic by the spec's
weights across the deployments that are healthy there (backends.py).

Bad input never removes a route: a spec that cannot be acted on (weights summing to zero, a
deployment of another namespace) keeps everything composed and reported before; a cluster
whose InferenceCluster cannot be read, whose Gateway does not exist, or whose model name an
older ModelService already routes there keeps its route as it is. A route is removed only
when what the user wrote says so: no deployment serves there any more, or none is healthy
there (a route never sends traffic to an unhealthy backend).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelfleet_contracts.api import MODEL_SERVICE
from modelfleet_contracts.conditions import Status, listed
from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.labels import CLUSTER_LABEL, owner_labels
from modelfleet_contracts.models.modelservice import ModelServiceSpec
from modelfleet_contracts.naming import composed_key, remote_name
from modelfleet_contracts.objects import kubernetes_object
from modelfleet_contracts.observed import ObservedObject, StagedCache
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.routes import route_admission
from modelfleet_contracts.serving import model_route_prefix
from modelfleet_contracts.spec import InvalidSpec, filled, parse_spec

from compose_model_service.backends import BackendDecision, decide_backend
from compose_model_service.routes import weighted_route_manifest
from compose_model_service.status import CONDITION, ClusterRow, service_status
from compose_model_service.views import ClusterFacts, DeploymentView, RivalService

CLUSTER_NOT_FOUND = "ClusterNotFound"
CLUSTER_UNAVAILABLE = "ClusterUnavailable"
NO_GATEWAY = "NoGateway"
GATEWAY_NOT_FOUND = "GatewayNotFound"
GATEWAY_UNKNOWN = "GatewayUnknown"
NAME_CONFLICT = "NameConflict"
NO_AVAILABLE_BACKEND = "NoAvailableBackend"
UNWEIGHTED = "Unweighted"


def route_key(cluster: str) -> str:
    """The composed resource name of the route on `cluster`."""
    return composed_key("route", cluster)


def route_name(namespace: str, name: str) -> str:
    """The HTTPRoute's name on every cluster, qualified by the ModelService's namespace."""
    return remote_name("modelservice", namespace, name)


def spec_problem(namespace: str) -> Callable[[ModelServiceSpec], str | None]:
    """The checks the schema alone does not make, for a ModelService in `namespace`."""

    def check(spec: ModelServiceSpec) -> str | None:
        for i, backend in enumerate(spec.backends):
            ref = backend.modelDeploymentRef
            if ref.namespace and ref.namespace != namespace:
                return (
                    f"spec.backends[{i}].modelDeploymentRef names ModelDeployment "
                    f"{ref.namespace}/{ref.name} of another namespace: a ModelService routes "
                    f"only to ModelDeployments of its own namespace ({namespace})"
                )
        names = [b.modelDeploymentRef.name for b in spec.backends]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            return f"spec.backends names ModelDeployment {', '.join(twice)} more than once"
        if sum(filled(b.weight) for b in spec.backends) == 0:
            return "spec.backends[].weight sum to 0: give at least one backend a weight above 0"
        return None

    return check


def weights_text(spec: ModelServiceSpec) -> str:
    """`name=weight` pairs, in the spec's order (the WEIGHTS column)."""
    return " ".join(f"{b.modelDeploymentRef.name}={filled(b.weight)}" for b in spec.backends)


@dataclass
class _Composing:
    """The outcome being built, cluster by cluster."""

    observed: dict[str, ObservedObject]
    out: Outcome = field(default_factory=Outcome)
    rows: list[ClusterRow] = field(default_factory=list)

    def keep(self, cluster: str, reason: str, message: str, backends: list[dict[str, Any]]) -> None:
        key = route_key(cluster)
        kept = key in self.observed
        if kept:
            self.out.kept.append(key)
            message = f"{message}; keeping the route composed before as it is"
        self.rows.append(ClusterRow(cluster, False, reason, message, backends=backends))


def compose_service(
    xr: dict[str, Any],
    deployments: dict[str, DeploymentView] | None,
    caches: dict[str, StagedCache | None] | None,
    clusters: dict[str, ClusterFacts] | None,
    rivals: list[RivalService] | None,
    observed: dict[str, ObservedObject],
) -> Outcome:
    """`deployments`, `clusters`: what Crossplane resolved, by name (None: not resolved yet; a
    name absent: it does not exist). `caches`: each referenced cache by name, None when it does
    not exist (the mapping None: not resolved yet). `rivals`: every ModelService (this one
    included, ignored), None while not resolved. `observed`: the composed routes, by key."""
    metadata = mapping_at(xr, "metadata")
    name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace", ""))
    spec = parse_spec(ModelServiceSpec, mapping_at(xr, "spec"), spec_problem(namespace))
    if isinstance(spec, InvalidSpec):
        return Outcome.held(
            Status.false(
                CONDITION,
                "InvalidSpec",
                f"{spec.message}; every route composed before is kept as it is",
            )
        )
    wanted = [b.modelDeploymentRef.name for b in spec.backends]
    if deployments is None:
        return Outcome.resolving(xr, CONDITION, f"ModelDeployment {listed(wanted)}")
    found = [deployments[n] for n in wanted if n in deployments]
    placed = sorted({c for d in found for c in d.placed_on})
    awaited = []
    if caches is None and any(d.cache_name for d in found):
        awaited.append("the ModelCaches of its ModelDeployments")
    if clusters is None and placed:
        awaited.append(f"InferenceCluster {listed(placed)}")
    if rivals is None:
        awaited.append("the other ModelServices")
    if awaited:
        return Outcome.resolving(xr, CONDITION, *awaited)
    assert rivals is not None  # for the type checker: awaited above otherwise

    weights = {b.modelDeploymentRef.name: filled(b.weight) for b in spec.backends}
    labels = owner_labels(MODEL_SERVICE, name, namespace)
    prefix = model_route_prefix(spec.modelName)
    older = [
        r
        for r in rivals
        if r.model_name == spec.modelName
        and (r.namespace, r.name) != (namespace, name)
        and r.seniority < _seniority(metadata, namespace, name)
    ]
    work = _Composing(observed)
    for cluster in placed:
        decisions = [
            decide_backend(
                d,
                weights[d.name],
                cluster=cluster,
                model_name=spec.modelName,
                workload_namespace=_workload_namespace(clusters, cluster),
                caches=caches or {},
            )
            for d in found
            if cluster in d.placed_on
        ]
        rows = [d.as_row() for d in decisions]
        if all(d.weight == 0 for d in decisions):
            # The user sends this cluster nothing: it is listed, not counted, not routed.
            work.rows.append(
                ClusterRow(
                    cluster,
                    False,
                    UNWEIGHTED,
                    f"every backend placed on {cluster} has weight 0",
                    backends=rows,
                    counted=False,
                )
            )
            continue
        facts = (clusters or {}).get(cluster)
        if facts is None:
            work.keep(cluster, CLUSTER_NOT_FOUND, f"InferenceCluster {cluster} not found", rows)
            continue
        view = facts.view
        if not view.reachable:
            work.keep(cluster, CLUSTER_UNAVAILABLE, f"cluster {cluster} is not connected", rows)
            continue
        if facts.gateway_reason == GATEWAY_NOT_FOUND:
            work.keep(cluster, GATEWAY_NOT_FOUND, facts.gateway_message, rows)
            continue
        gateway = view.gateway
        if gateway is None:
            if view.gateway_declared:
                work.keep(
                    cluster,
                    GATEWAY_UNKNOWN,
                    f"InferenceCluster {cluster} reports a Gateway that cannot be read",
                    rows,
                )
            else:
                work.rows.append(
                    ClusterRow(
                        cluster,
                        False,
                        NO_GATEWAY,
                        f"InferenceCluster {cluster} declares no Gateway (spec.gatewayRef): "
                        "its serving groups are reached through their own addresses",
                        backends=rows,
                    )
                )
            continue
        rival = next(
            (r for r in sorted(older, key=lambda r: r.seniority) if cluster in r.clusters), None
        )
        if rival is not None:
            work.keep(
                cluster,
                NAME_CONFLICT,
                f"ModelService {rival.namespace}/{rival.name} already routes {spec.modelName!r} "
                f"on {cluster}: rename one of them, or route one ModelService to both "
                "deployments",
                rows,
            )
            continue
        routed = [d for d in decisions if d.target is not None]
        if not routed:
            work.rows.append(
                ClusterRow(
                    cluster,
                    False,
                    NO_AVAILABLE_BACKEND,
                    f"no backend is healthy on {cluster}: {_held_out(decisions)}",
                    backends=rows,
                )
            )
            continue
        key = route_key(cluster)
        cluster_labels = {**labels, CLUSTER_LABEL: cluster}
        route = weighted_route_manifest(
            name=route_name(namespace, name),
            namespace=view.workload_namespace or "",
            labels=cluster_labels,
            gateway=gateway,
            prefix=prefix,
            backends=[d.target for d in routed if d.target is not None],
        )
        work.out.desired[key] = kubernetes_object(
            route, view.provider_config_name or "", labels=cluster_labels, watch=True
        )
        admission = route_admission(gateway, prefix, observed.get(key))
        message = admission.message
        if len(routed) < len(decisions):
            message = f"{message}; held out: {_held_out(decisions)}"
        work.rows.append(
            ClusterRow(cluster, True, admission.reason, message, admission.address, rows)
        )

    missing = [n for n in wanted if n not in deployments]
    out = work.out
    out.status, out.conditions, out.ready = service_status(weights_text(spec), work.rows, missing)
    # What it routes to (deployments, caches, clusters) is read, not watched.
    out.recheck_soon = not out.ready or any(r.reason != "Accepted" for r in work.rows)
    return out


def _held_out(decisions: list[BackendDecision]) -> str:
    return "; ".join(d.message for d in decisions if d.target is None)


def _workload_namespace(clusters: dict[str, ClusterFacts] | None, cluster: str) -> str:
    facts = (clusters or {}).get(cluster)
    return (facts.view.workload_namespace or "") if facts else ""


def _seniority(metadata: dict[str, Any], namespace: str, name: str) -> tuple[str, str, str]:
    created = metadata.get("creationTimestamp")
    return (created if isinstance(created, str) and created else "~", namespace, name)
