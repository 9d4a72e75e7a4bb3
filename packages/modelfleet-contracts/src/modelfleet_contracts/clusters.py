"""Reading what compose-inference-cluster reports about a workload cluster.

Consumers (the cache, the scheduler, the replica) read an InferenceCluster only through
this module, and only from its observed `status` — never ahead of what was observed.
"""

from dataclasses import dataclass, field
from typing import Any

from google.protobuf import struct_pb2

from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.structs import to_plain

DEFAULT_WORKLOAD_NAMESPACE = "modelfleet"
RWX = "ReadWriteMany"


@dataclass(frozen=True)
class NodePool:
    name: str
    node_count: int
    gpu_count: int
    gpu_memory_gib: int
    gpu_product: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ClusterView:
    """The facts about one InferenceCluster that other functions act on."""

    name: str
    labels: dict[str, str]
    provider_config_name: str | None
    workload_namespace: str | None
    connected: bool
    storage_class_name: str | None
    shared_storage_ready: bool
    node_pools: tuple[NodePool, ...] = ()

    @property
    def reachable(self) -> bool:
        """Objects can be composed on it: connected, with a provider config and namespace."""
        return self.connected and bool(self.provider_config_name and self.workload_namespace)

    @property
    def has_shared_storage(self) -> bool:
        """It offers ReadWriteMany storage that is ready for model caches."""
        return self.shared_storage_ready and bool(self.storage_class_name)


def _condition_true(status: dict[str, Any], typ: str) -> bool:
    for c in list_at(status, "conditions"):
        if isinstance(c, dict) and c.get("type") == typ:
            return c.get("status") == "True"
    return False


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _text(value: Any) -> str | None:
    """A non-empty string, or None: a status value of another type is as good as absent
    (the API server would never store it, so it must not reach a composed manifest)."""
    return value if isinstance(value, str) and value else None


def _node_pool(raw: Any) -> NodePool | None:
    if not isinstance(raw, dict) or not _text(raw.get("name")):
        return None
    gpu = mapping_at(raw, "gpu")
    selector = mapping_at(raw, "nodeSelector")
    tolerations = list_at(raw, "tolerations")
    return NodePool(
        name=str(raw["name"]),
        node_count=_int(raw.get("nodeCount")),
        gpu_count=_int(gpu.get("count")),
        gpu_memory_gib=_int(gpu.get("memoryGiB")),
        gpu_product=str(gpu.get("product") or ""),
        node_selector={str(k): v for k, v in selector.items() if isinstance(v, str)},
        tolerations=[t for t in tolerations if isinstance(t, dict)],
    )


def read_cluster(ic: dict[str, Any]) -> ClusterView:
    """A ClusterView from an InferenceCluster as Crossplane returns it; tolerant of any shape.

    Node pools come from `status.nodePools` (validated and reported by
    compose-inference-cluster); a pool that is malformed there is skipped.
    """
    metadata = mapping_at(ic, "metadata")
    status = mapping_at(ic, "status")
    storage = mapping_at(status, "storage")
    pools_raw = list_at(status, "nodePools")
    pools = tuple(p for p in (_node_pool(r) for r in pools_raw) if p is not None)
    labels = mapping_at(metadata, "labels")
    return ClusterView(
        name=str(metadata.get("name") or ""),
        labels={str(k): str(v) for k, v in labels.items()},
        provider_config_name=_text(status.get("providerConfigName")),
        workload_namespace=_text(status.get("workloadNamespace")),
        connected=_condition_true(status, "Connected"),
        storage_class_name=_text(storage.get("storageClassName")),
        shared_storage_ready=bool(storage.get("ready")) and storage.get("accessMode") == RWX,
        node_pools=pools,
    )


def _struct_fields(fields: Any, key: str) -> Any:
    """`fields[key]`'s Struct fields, or an empty mapping when it is absent or no Struct."""
    v = fields.get(key)
    return v.struct_value.fields if v is not None and v.HasField("struct_value") else {}


def _string_at(fields: Any, key: str) -> str | None:
    """Like `_text`, on a Struct: a non-empty string, or None."""
    v = fields.get(key)
    return (v.string_value or None) if v is not None and v.HasField("string_value") else None


def _connected(status: Any) -> bool:
    v = status.get("conditions")
    if v is None or not v.HasField("list_value"):
        return False
    for c in v.list_value.values:
        if c.HasField("struct_value"):
            fields = c.struct_value.fields
            typ = fields.get("type")
            if typ is not None and typ.HasField("string_value") and typ.string_value == "Connected":
                state = fields.get("status")
                return state is not None and state.string_value == "True"
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
    pools = tuple(p for p in (_node_pool(r) for r in pools_raw) if p is not None)
    return ClusterView(
        name=str(to_plain(metadata.get("name")) or ""),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        provider_config_name=_string_at(status, "providerConfigName"),
        workload_namespace=_string_at(status, "workloadNamespace"),
        connected=_connected(status),
        storage_class_name=_string_at(storage, "storageClassName"),
        shared_storage_ready=bool(to_plain(storage.get("ready")))
        and access_mode is not None
        and access_mode.HasField("string_value")
        and access_mode.string_value == RWX,
        node_pools=pools,
    )


def matches_selector(labels: dict[str, str], selector: dict[str, Any] | None) -> bool:
    """Kubernetes label-selector semantics (matchLabels and matchExpressions).

    An absent or empty selector matches everything (SPEC: default, every InferenceCluster).
    """
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key"), expr.get("operator")
        values = expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True
