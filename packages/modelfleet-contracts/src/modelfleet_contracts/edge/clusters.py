"""Reading a required InferenceCluster (`ClusterView`) straight from its protobuf Struct."""

from typing import Any

from google.protobuf import struct_pb2

from modelfleet_contracts.clusters import (
    RWX,
    ClusterView,
    connected_as_reported,
    gateway_view,
    node_pool,
)
from modelfleet_contracts.edge.structs import to_plain


def _struct_fields(fields: Any, key: str) -> Any:
    """`fields[key]`'s Struct fields, or an empty mapping when it is absent or no Struct."""
    v = fields.get(key)
    return v.struct_value.fields if v is not None and v.HasField("struct_value") else {}


def _string_at(fields: Any, key: str) -> str | None:
    """Like `clusters._text`, on a Struct: a non-empty string, or None."""
    v = fields.get(key)
    return (v.string_value or None) if v is not None and v.HasField("string_value") else None


def _connected(status: Any, workload_namespace: str | None) -> bool:
    """`clusters.connected_as_reported` of the first `Connected` condition."""
    v = status.get("conditions")
    if v is None or not v.HasField("list_value"):
        return False
    for c in v.list_value.values:
        if c.HasField("struct_value"):
            fields = c.struct_value.fields
            typ = fields.get("type")
            if typ is not None and typ.HasField("string_value") and typ.string_value == "Connected":
                return connected_as_reported(
                    to_plain(fields.get("status")),
                    to_plain(fields.get("reason")),
                    workload_namespace,
                )
    return False


def read_cluster_struct(s: struct_pb2.Struct, *, node_pools: bool = True) -> ClusterView:
    """`read_cluster` straight from the protobuf Struct, reading only the few values a
    ClusterView holds (at 1000 clusters, converting them first cost more than deciding).
    `node_pools=False` leaves the pools out, for readers that never look at them."""
    fields = s.fields
    metadata = _struct_fields(fields, "metadata")
    status = _struct_fields(fields, "status")
    storage = _struct_fields(status, "storage")
    labels = to_plain(metadata.get("labels"))
    access_mode = storage.get("accessMode")
    pools_raw = to_plain(status.get("nodePools")) if node_pools else None
    if not isinstance(pools_raw, list):
        pools_raw = []
    pools = tuple(p for p in (node_pool(r) for r in pools_raw) if p is not None)
    workload_namespace = _string_at(status, "workloadNamespace")
    return ClusterView(
        name=str(to_plain(metadata.get("name")) or ""),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        provider_config_name=_string_at(status, "providerConfigName"),
        workload_namespace=workload_namespace,
        connected=_connected(status, workload_namespace),
        storage_class_name=_string_at(storage, "storageClassName"),
        shared_storage_ready=bool(to_plain(storage.get("ready")))
        and access_mode is not None
        and access_mode.HasField("string_value")
        and access_mode.string_value == RWX,
        node_pools=pools,
        hydrator_service_account=_string_at(status, "hydratorServiceAccount"),
        gateway=gateway_view(to_plain(status.get("gateway"))) if "gateway" in status else None,
        gateway_declared="gateway" in status,
    )
