"""Reading the required resources a ModelService decides on (views.py) from their protobuf
Structs, tolerantly: a field of another shape reads as absent, never raises. Only the few
values the core decides on are converted (a deployment may list a thousand clusters)."""

from typing import Any

from google.protobuf import struct_pb2
from modelfleet_contracts.edge.clusters import read_cluster_struct
from modelfleet_contracts.edge.structs import to_plain
from modelfleet_contracts.fields import as_int

from compose_model_service.views import ClusterFacts, DeploymentView, RivalService, ServingRow


def _fields(fields: Any, key: str) -> Any:
    v = fields.get(key)
    return v.struct_value.fields if v is not None and v.HasField("struct_value") else {}


def _string(fields: Any, key: str) -> str:
    v = fields.get(key)
    return v.string_value if v is not None and v.HasField("string_value") else ""


def _rows(fields: Any, key: str) -> list[Any]:
    v = fields.get(key)
    if v is None or not v.HasField("list_value"):
        return []
    return [i.struct_value.fields for i in v.list_value.values if i.HasField("struct_value")]


def read_deployment(s: struct_pb2.Struct) -> DeploymentView:
    metadata, spec, status = (_fields(s.fields, k) for k in ("metadata", "spec", "status"))
    rows = tuple(
        ServingRow(
            cluster=_string(row, "name"),
            replicas=as_int(to_plain(row.get("replicas"))),
            phase=_string(row, "phase"),
            message=_string(row, "message"),
            address=_string(row, "address"),
        )
        for row in _rows(status, "clusters")
    )
    return DeploymentView(
        name=_string(metadata, "name"),
        served_model_name=_string(status, "servedModelName"),
        cache_name=_string(_fields(spec, "modelCacheRef"), "name"),
        rows=rows,
    )


def read_cluster_facts(s: struct_pb2.Struct) -> ClusterFacts:
    reason = message = ""
    for condition in _rows(_fields(s.fields, "status"), "conditions"):
        if _string(condition, "type") == "GatewayReady":
            reason, message = _string(condition, "reason"), _string(condition, "message")
            break
    return ClusterFacts(read_cluster_struct(s, node_pools=False), reason, message)


def read_rival(s: struct_pb2.Struct) -> RivalService:
    metadata, spec, status = (_fields(s.fields, k) for k in ("metadata", "spec", "status"))
    return RivalService(
        namespace=_string(metadata, "namespace"),
        name=_string(metadata, "name"),
        model_name=_string(spec, "modelName"),
        created=_string(metadata, "creationTimestamp"),
        clusters=frozenset(_string(row, "name") for row in _rows(status, "clusters")),
    )
