"""Reading where a ModelCache is served: the cluster of each ModelReplica that references it
(spec.staging WhereServed, footprint.py). Only these few fields of a replica are read."""

from typing import Any

from google.protobuf import struct_pb2
from modelfleet_contracts.edge import structs
from modelfleet_contracts.fields import mapping_at, mapping_path

from compose_model_cache.cache.footprint import WHERE_SERVED

REPLICA_PATHS: structs.Paths = {
    "metadata": {"namespace": None},
    "spec": {"clusterName": None, "modelCacheRef": {"name": None}},
}


def wants_served(spec: dict[str, Any]) -> bool:
    """The ModelCache stages where it is served, so it reads its ModelReplicas."""
    return mapping_at(spec, "staging").get("policy") == WHERE_SERVED


def read_served_cluster(s: struct_pb2.Struct, cache: str, namespace: str) -> str | None:
    """The cluster a ModelReplica is placed on, when it references `cache` in `namespace`."""
    replica = structs.project(s, REPLICA_PATHS)
    if mapping_at(replica, "metadata").get("namespace") != namespace:
        return None
    if mapping_path(replica, "spec", "modelCacheRef").get("name") != cache:
        return None
    cluster = mapping_at(replica, "spec").get("clusterName")
    return cluster if isinstance(cluster, str) and cluster else None
