"""Deciding what a ModelReplica composes on its cluster.

The workload is composed only once the cache is Ready on this cluster (no GPU is held
while weights download). Once composed it is kept through any later uncertainty — a cache
or cluster status that flaps, an unresolved requirement — and the status says why.

The Crossplane Usages that keep its ModelCache and its InferenceCluster from being deleted
under it are composed by its ModelDeployment (compose-model-deployment's usage.py), not here:
a replica's own Usages `by` itself would keep a dropped replica Terminating forever. Usages an
earlier release composed here are retired without a wait (legacy_usages.py).

Where the cluster declares a Gateway, it also composes the model's HTTPRoute on it
(routes.py); where the cluster also runs the Inference Extension, an InferencePool over the
serving pods (pools.py), which the route sends to instead of the Service. `status.address`
(the Service's URL) and `status.gatewayAddress` (through the Gateway, once the route is
Accepted) are reported only while a serving group answers.
"""

import re
from typing import Any

from modelfleet_contracts.api import MODEL_REPLICA
from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.conditions import Status, previous_condition
from modelfleet_contracts.engine_rules import engine_problem
from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.labels import CLUSTER_LABEL, owner_labels
from modelfleet_contracts.models.modelreplica import ModelReplicaSpec
from modelfleet_contracts.naming import workload_name
from modelfleet_contracts.objects import kubernetes_object
from modelfleet_contracts.observed import ObservedObject, StagedCache
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.routes import pool_backend, prefix_route, service_backend
from modelfleet_contracts.serving import DEPLOYMENT_LABEL, route_path_prefix, service_address
from modelfleet_contracts.spec import InvalidSpec, parse_spec

from compose_model_replica.phases import (
    WAITING_FOR_CACHE,
    WAITING_FOR_CLUSTER,
    ReplicaPhase,
    derive_replica_phase,
)
from compose_model_replica.pools import inference_pool_manifest
from compose_model_replica.routes import CONDITION as GATEWAY_ROUTED
from compose_model_replica.routes import route_status
from compose_model_replica.shape import STARTUP_OVERRIDDEN, ReplicaShape, replica_shape
from compose_model_replica.status import replica_status
from compose_model_replica.workloads import serving_selector, workload_objects

WORKLOAD = "workload"
SERVICE = "service"
ROUTE = "http-route"
POOL = "inference-pool"
# One directory of the cache's path: compose-model-cache writes names and fingerprints. The
# path reaches argv and env (--model, MODELFLEET_MODEL_PATH), so anything else — a flag, a
# $(VAR) Kubernetes would expand, a glob, an over-long name — is refused, never passed on.
SAFE_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")


def spec_problem(spec: ModelReplicaSpec) -> str | None:
    """What the schema alone does not catch (its CEL rules), in words; None when valid."""
    return engine_problem(spec.engine)


def cache_location(
    cache_name: str, cache: list[StagedCache] | None, cluster: str
) -> tuple[str, str] | str:
    """(claim, path) of the weights on `cluster` once the cache is Ready there, read from
    this cluster's row of the cache's status (the single source of claim and path; fn.py
    reads the cache for `cluster`) as written, never recomputed; otherwise why not."""
    if not cache:
        return f"ModelCache {cache_name} not found"
    row = cache[0].row
    if row is None:
        return f"ModelCache {cache_name} does not stage to cluster {cluster}"
    phase = row.phase or "Pending"
    if phase != "Ready":
        detail = f": {row.message}" if row.message else ""
        return f"ModelCache {cache_name} is {phase} on {cluster}{detail}"
    claim, written = row.claim_name, row.path
    path = written.strip("/")
    if not claim:
        return f"ModelCache {cache_name} is Ready on {cluster} but reports no claimName"
    if ".." in path.split("/"):
        return f"ModelCache {cache_name} reports a path outside its claim on {cluster}: {written!r}"
    if path and not all(SAFE_SEGMENT.fullmatch(part) for part in path.split("/")):
        return f"ModelCache {cache_name} reports an unusable path on {cluster}: {written!r}"
    return claim, path


def previous_address(xr: dict[str, Any]) -> str | None:
    value = mapping_at(xr, "status").get("address")
    return value if isinstance(value, str) and value else None


def _kept(
    xr: dict[str, Any],
    observed: dict[str, ObservedObject],
    spec: ModelReplicaSpec,
    why: str,
    fallback: str,
) -> Outcome:
    """Keep the composed workload as it is and report its observed phase plus `why`."""
    out = Outcome(kept=[key for key in (WORKLOAD, SERVICE, ROUTE, POOL) if key in observed])
    workload = observed.get(WORKLOAD)
    if workload is None:
        phase = ReplicaPhase(fallback, why, spec.replicas, 0)
    else:
        # Only the phase and counts are reported (the message says why the workload is
        # kept), and neither depends on which kind of workload it is.
        seen = derive_replica_phase(
            "workload", spec.replicas, workload if workload.remote_seen else None
        )
        phase = ReplicaPhase(
            seen.phase, f"{why}; keeping the running workload", seen.replicas, seen.ready_replicas
        )
    # Where it answers is not re-derived while an input is uncertain: the address reported
    # before stands as long as the kept workload still serves.
    address = previous_address(xr) if serving(observed) else None
    out.status, out.conditions, out.ready = replica_status(phase, address)
    through = mapping_at(xr, "status").get("gatewayAddress")
    if address and ROUTE in observed and isinstance(through, str) and through:
        out.status["gatewayAddress"] = through
    # What it waits on (its InferenceCluster, its ModelCache) is read, not watched.
    out.recheck_soon = True
    return out


def compose_replica(
    xr: dict[str, Any],
    cluster: list[ClusterView] | None,
    cache: list[StagedCache] | None,
    observed: dict[str, ObservedObject],
) -> Outcome:
    """`cluster` / `cache`: what Crossplane resolved for the requirements (None: unresolved
    yet; an empty list: it does not exist)."""
    spec = parse_spec(ModelReplicaSpec, mapping_at(xr, "spec"), spec_problem)
    if isinstance(spec, InvalidSpec):
        return Outcome.held(Status.false("WorkloadReady", "InvalidSpec", spec.message))
    cache_ref = spec.modelCacheRef
    cluster_name = spec.clusterName
    awaited = [f"InferenceCluster {cluster_name}"] if cluster is None else []
    if cache_ref and cache is None:
        awaited.append(f"ModelCache {cache_ref.name}")
    if awaited:
        return Outcome.resolving(xr, "WorkloadReady", *awaited)

    metadata = mapping_at(xr, "metadata")
    name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace", ""))
    labels = {**owner_labels(MODEL_REPLICA, name, namespace), CLUSTER_LABEL: cluster_name}
    if not cluster:
        return _kept(
            xr,
            observed,
            spec,
            f"InferenceCluster {cluster_name} not found",
            WAITING_FOR_CLUSTER,
        )
    view = cluster[0]
    if not view.reachable:
        return _kept(
            xr,
            observed,
            spec,
            f"cluster {cluster_name} is not connected",
            WAITING_FOR_CLUSTER,
        )

    claim_name = cache_path = None
    if cache_ref:
        located = cache_location(cache_ref.name, cache, cluster_name)
        if isinstance(located, str):
            return _kept(xr, observed, spec, located, WAITING_FOR_CACHE)
        claim_name, cache_path = located

    deployment = _text_label(metadata, DEPLOYMENT_LABEL)
    remote = workload_name(namespace, name)
    remote_namespace = view.workload_namespace or ""
    workload, service = workload_objects(
        spec,
        name=remote,
        namespace=remote_namespace,
        provider_config=view.provider_config_name or "",
        labels=labels,
        claim_name=claim_name,
        cache_path=cache_path,
        deployment=deployment,
    )
    out = Outcome(desired={WORKLOAD: workload, SERVICE: service})
    phase = derive_replica_phase(
        workload["spec"]["forProvider"]["manifest"]["kind"], spec.replicas, observed.get(WORKLOAD)
    )
    shape = replica_shape(spec)
    port = shape.port
    address = (
        service_address(remote, remote_namespace, port)
        if serving(observed) and remote_namespace
        else None
    )
    note = startup_note(xr, shape, out)
    out.status, out.conditions, out.ready = replica_status(phase, address, note)
    if view.gateway is not None:
        prefix = route_path_prefix(namespace, deployment or name)
        backend = service_backend(remote, port)
        picker = view.gateway.inference_pool
        if picker is not None:
            pool = inference_pool_manifest(
                name=remote,
                namespace=remote_namespace,
                # Found from its ModelDeployment, as the Service is.
                labels={**labels, DEPLOYMENT_LABEL: deployment} if deployment else labels,
                selector=serving_selector(shape, name=remote, labels=labels),
                port=port,
                picker=picker,
            )
            out.desired[POOL] = kubernetes_object(
                pool, view.provider_config_name or "", labels=labels
            )
            backend = pool_backend(remote)
        elif view.gateway.inference_pool_declared and POOL in observed and ROUTE in observed:
            # The cluster names an endpoint picker this function cannot read: keep the pool
            # and the route to it as they are.
            out.kept.extend([POOL, ROUTE])
            out.conditions.append(
                Status.false(
                    GATEWAY_ROUTED,
                    "InferencePoolUnknown",
                    f"InferenceCluster {cluster_name} reports an inference pool setting that "
                    "cannot be read; keeping the InferencePool and the route as they are",
                )
            )
            return out
        route = prefix_route(
            name=remote,
            namespace=remote_namespace,
            labels=labels,
            gateway=view.gateway,
            prefix=prefix,
            backends=[backend],
        )
        out.desired[ROUTE] = kubernetes_object(
            route, view.provider_config_name or "", labels=labels, watch=True
        )
        through, routed = route_status(view.gateway, prefix, observed.get(ROUTE))
        if through and address:  # through the Gateway only once a group serves behind it
            out.status["gatewayAddress"] = through
        out.conditions.append(routed)
    elif view.gateway_declared and ROUTE in observed:
        # The cluster reports a Gateway this function cannot read: keep the route (and the
        # pool it sends to) as they are.
        out.kept.extend(key for key in (ROUTE, POOL) if key in observed)
        out.conditions.append(
            Status.false(
                GATEWAY_ROUTED,
                "GatewayUnknown",
                f"InferenceCluster {cluster_name} reports a Gateway that cannot be read; "
                "keeping the route as it is",
            )
        )
    return out


def startup_note(xr: dict[str, Any], shape: ReplicaShape, out: Outcome) -> str | None:
    """Why the gang is not started with the startupPolicy its spec asks (None: it is); a
    Warning event the first time the replica's condition says so."""
    if not shape.startup_overridden:
        return None
    note = STARTUP_OVERRIDDEN.format(asked=shape.asked_startup)
    before = previous_condition(xr, "WorkloadReady") or {}
    if note not in str(before.get("message", "")):
        out.warnings.append(f"WorkloadReady: {note}")
    return note


def serving(observed: dict[str, ObservedObject]) -> bool:
    """A serving group answers behind the Service: the workload reports a ready group (its
    serving pod passed its HTTP readiness probe, probes.py) and the Service was applied."""
    workload, service = observed.get(WORKLOAD), observed.get(SERVICE)
    return (
        workload is not None
        and workload.remote_ready_replicas > 0
        and service is not None
        and service.ready
    )


def _text_label(metadata: dict[str, Any], key: str) -> str | None:
    labels = metadata.get("labels")
    value = labels.get(key) if isinstance(labels, dict) else None
    return value if isinstance(value, str) and value else None
