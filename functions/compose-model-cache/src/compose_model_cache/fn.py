"""The gRPC edge of compose-model-cache: protobuf in, plain data to the core, protobuf out."""

from datetime import datetime
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelfleet_contracts.api import API_VERSION, MODEL_CACHE_SHARD, MODEL_REPLICA
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.clusters import read_cluster_struct
from modelfleet_contracts.edge.now import request_now
from modelfleet_contracts.edge.observed import read_observed
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.edge.requirements import (
    require_named_clusters,
    require_selected_clusters,
    resolved,
    resolved_named,
)
from modelfleet_contracts.fields import list_at, mapping_at, mapping_path
from modelfleet_contracts.immutable import JOB_GENERATED_TEMPLATE_LABELS
from modelfleet_contracts.stamps import Verbatim

from compose_model_cache.cache.fleet import compose_fleet
from compose_model_cache.cache.handover import LegacyObject
from compose_model_cache.cache.served import PlacedReplica, free_nodes, placed_replica, wants_served
from compose_model_cache.cache.shards import ObservedShard, shard_index
from compose_model_cache.keys import echoed_key
from compose_model_cache.rows import REASONS
from compose_model_cache.shard.core import compose_shard
from compose_model_cache.shard.existing import ECHOED_SPEC_READ, TEMPLATE
from compose_model_cache.shard.plan import cluster_names
from compose_model_cache.status import PROGRESS_REASONS

CLUSTERS = "inference-clusters"
REPLICAS = "model-replicas"
# Of a ModelReplica, for a cache staging where it is served (cache/served.py).
REPLICA_PATHS: structs.Paths = {
    "metadata": {"namespace": None},
    "spec": {"clusterName": None, "modelCacheRef": {"name": None}, "replicas": None, "nodes": None},
}


# What the core reads, and only that, is converted to plain data (docs/benchmarks.md: a
# 1000-cluster request is millions of values; the decisions need a few per cluster).
XR_PATHS: structs.Paths = {
    "apiVersion": None,
    "kind": None,
    "metadata": None,
    "spec": None,
    # The previous rows: what latches Ready and keeps a blocked cluster's phase, the figures
    # a Ready cluster keeps once its Job is gone; a ModelCache's, the rows it keeps while its
    # shards have not reported them. And the pinned commit.
    "status": {
        "conditions": None,
        "clusters": None,
        "pinnedRevision": None,
        "staging": None,
    },
}
# Of an observed ModelCacheShard: the clusters it was told of, the rows, pin and conditions
# it reports (what the ModelCache's status is made of).
SHARD_PATHS: structs.Paths = {
    "spec": {"clusters": {"name": None}},
    "status": {"pinnedRevision": None, "conditions": None},
}
# Of each of its rows, what the ModelCache decides on (the rest is listed as it is).
ROW_READ: structs.Paths = dict.fromkeys(
    ("name", "phase", "reason", "message", "fingerprint", "claimName", "bytesDone", "bytesTotal")
)
# Of an observed claim or hydration Job: the remote object provider-kubernetes echoes, its
# apiVersion, kind, name and annotations (where the hydrator reports) and the parts of its
# spec that what exists keeps (existing.py); and the name the Object's own manifest asks
# for, which is what provider-kubernetes deletes when the Object goes (keys.current_job_keys
# decides on it).
READ_PATHS: structs.Paths = {
    "spec": {"forProvider": {"manifest": {"metadata": {"name": None}}}},
    "status": {
        "atProvider": {
            "manifest": {
                "apiVersion": None,
                "kind": None,
                "metadata": {"name": None, "annotations": None},
                "spec": ECHOED_SPEC_READ,
            }
        }
    },
}


def echoed_and_asked(s: Any) -> tuple[dict[str, Any], str | None]:
    """The remote object an observed Object echoes (only the parts of READ_PATHS, and a
    Job's pod template as composable `Verbatim`), and the name in its own
    `spec.forProvider.manifest`, if it has one."""
    read = structs.project(s, READ_PATHS)
    asked = mapping_path(read, "spec", "forProvider", "manifest", "metadata").get("name")
    echoed = mapping_path(read, "status", "atProvider", "manifest")
    spec = echoed.get("spec")
    if echoed.get("kind") == "Job" and isinstance(spec, dict):
        template = composable_template(_echoed_template(s))
        if template is not None:
            spec[TEMPLATE] = template
    return echoed, asked if isinstance(asked, str) else None


def _echoed_template(s: Any) -> struct_pb2.Value | None:
    fields = s.fields
    for key in ("status", "atProvider", "manifest", "spec"):
        if key not in fields or fields[key].WhichOneof("kind") != "struct_value":
            return None
        fields = fields[key].struct_value.fields
    return fields.get(TEMPLATE)


def composable_template(template: struct_pb2.Value | None) -> Verbatim | None:
    """An echoed Job's pod template as a Job composed under its name may carry it: without
    the labels generated from the Job's uid and name and the empty `creationTimestamp` the
    API server echoes (existing.py says why), copied as protobuf. None for a template that
    is absent, empty or not a mapping."""
    if template is None or template.WhichOneof("kind") != "struct_value":
        return None
    if not template.struct_value.fields:
        return None
    copied = struct_pb2.Value()
    copied.CopyFrom(template)
    fields = copied.struct_value.fields
    if "metadata" in fields:
        metadata = fields["metadata"]
        if metadata.WhichOneof("kind") == "struct_value":
            meta = metadata.struct_value.fields
            if "creationTimestamp" in meta:
                del meta["creationTimestamp"]
            if "labels" in meta:
                labels = meta["labels"]
                if labels.WhichOneof("kind") == "struct_value":
                    own = labels.struct_value.fields
                    for generated in JOB_GENERATED_TEMPLATE_LABELS:
                        if generated in own:
                            del own[generated]
                if labels.WhichOneof("kind") != "struct_value" or not labels.struct_value.fields:
                    del meta["labels"]
        if metadata.WhichOneof("kind") != "struct_value" or not metadata.struct_value.fields:
            del fields["metadata"]
    return Verbatim(copied)


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    """A ModelCache composes its shards; a ModelCacheShard, its clusters' objects."""
    now = request_now(req, rsp)
    xr = structs.project(req.observed.composite.resource, XR_PATHS)
    if xr.get("kind") == MODEL_CACHE_SHARD:
        _run_shard(req, rsp, xr, now)
    else:
        _run_cache(req, rsp, xr, now)


def _run_cache(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, xr: Any, now: datetime
) -> None:
    require_selected_clusters(rsp, CLUSTERS, mapping_at(xr, "spec"))
    clusters = resolved(req, CLUSTERS, lambda s: read_cluster_struct(s, node_pools=False))
    resources = req.observed.resources
    shards = {
        name: _observed_shard(resources[name].resource)
        for name in resources
        if shard_index(name) is not None
    }
    # The unsharded layout's Objects composed here, to be handed over (handover.py).
    legacy = {
        name: _legacy(resources[name].resource) for name in resources if shard_index(name) is None
    }
    asks = {
        name: asked
        for name in legacy
        if echoed_key(name) and (asked := echoed_and_asked(resources[name].resource)[1])
    }
    served, free = None, None
    if wants_served(mapping_at(xr, "spec")):
        # Where the fleet's ModelReplicas are placed (spec.staging WhereServed): those
        # referencing this cache are where it is served; all of them hold nodes.
        metadata = mapping_at(xr, "metadata")
        name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace", ""))
        response.require_resources(rsp, REPLICAS, API_VERSION, MODEL_REPLICA, match_labels={})
        placed = resolved(req, REPLICAS, lambda s: _placed(s, name, namespace))
        if placed is not None:
            replicas = [r for r in placed if r is not None]
            served = sorted({r.cluster for r in replicas if r.serves_this_cache})
            pools = resolved(req, CLUSTERS, read_cluster_struct) or []
            free = free_nodes(
                {v.name: sum(p.node_count for p in v.node_pools) for v in pools}, replicas
            )
    outcome = compose_fleet(xr, clusters, shards, legacy, asks, served=served, now=now, free=free)
    apply_outcome(req, rsp, xr, outcome, now=now, progress_reasons=PROGRESS_REASONS)


def _placed(s: Any, cache: str, namespace: str) -> PlacedReplica | None:
    return placed_replica(structs.project(s, REPLICA_PATHS), cache, namespace)


def _legacy(s: Any) -> LegacyObject:
    spec = s.fields.get("spec")
    plain = structs.to_plain(spec) if spec is not None else None
    return LegacyObject(read_observed(s), plain if isinstance(plain, dict) else {})


def _observed_shard(s: Any) -> ObservedShard:
    read = structs.project(s, SHARD_PATHS)
    status = mapping_at(read, "status")
    rows: dict[str, dict[str, Any]] = {}
    written: dict[str, Verbatim] = {}
    for row in _listed(s, "status", "clusters"):
        if row.WhichOneof("kind") != "struct_value":
            continue
        plain = structs.project(row.struct_value, ROW_READ)
        name = plain.get("name")
        if not isinstance(name, str):
            continue
        if plain.get("reason", REASONS[0]) in REASONS:
            rows[name], written[name] = plain, Verbatim(row)
        else:  # listed again without its reason (fleet.py): read whole
            rows[name] = structs.to_plain(row)
            written.pop(name, None)
    return ObservedShard(
        clusters=tuple(
            str(e["name"])
            for e in list_at(mapping_at(read, "spec"), "clusters")
            if isinstance(e, dict) and isinstance(e.get("name"), str)
        ),
        rows=rows,
        written=written,
        pinned=mapping_at(status, "pinnedRevision"),
        conditions={
            str(c["type"]): c
            for c in list_at(status, "conditions")
            if isinstance(c, dict) and isinstance(c.get("type"), str)
        },
    )


def _listed(s: Any, *path: str) -> list[Any]:
    """The values of the list at `path` in Struct `s`, unconverted; [] when there is none."""
    fields = s.fields
    for key in path[:-1]:
        if key not in fields or fields[key].WhichOneof("kind") != "struct_value":
            return []
        fields = fields[key].struct_value.fields
    last = path[-1]
    if last not in fields or fields[last].WhichOneof("kind") != "list_value":
        return []
    return list(fields[last].list_value.values)


def _run_shard(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse, xr: Any, now: datetime
) -> None:
    resources = req.observed.resources
    # The few facts the phases derive from; Objects kept unchanged are copied as protobuf
    # (Outcome.kept), so no observed manifest is ever converted.
    observed = {name: read_observed(resources[name].resource) for name in resources}
    read = {
        name: echoed_and_asked(resources[name].resource) for name in resources if echoed_key(name)
    }
    echoes = {name: echoed for name, (echoed, _) in read.items()}
    asks = {name: asked for name, (_, asked) in read.items() if asked}
    names = cluster_names(xr)
    require_named_clusters(rsp, names)
    clusters = resolved_named(req, names, lambda s: read_cluster_struct(s, node_pools=False))
    outcome = compose_shard(xr, clusters, observed, echoes, asks)
    apply_outcome(req, rsp, xr, outcome, now=now, progress_reasons=PROGRESS_REASONS)
