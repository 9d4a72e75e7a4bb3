"""Reading an observed provider-kubernetes Object's few facts (`ObservedObject`) straight
from its protobuf Struct, tolerantly: a field of another shape reads as absent (empty
string, zero), never raises."""

from typing import Any

from google.protobuf import json_format, struct_pb2

from modelfleet_contracts.observed import Condition, ObservedObject, secret_fields_with_values


def _struct(fields: Any, key: str) -> Any:
    """`fields[key]`'s Struct fields when it is a Struct, else None (`get`: never inserts)."""
    v = fields.get(key)
    return v.struct_value.fields if v is not None and v.HasField("struct_value") else None


def _string(fields: Any, key: str) -> str:
    v = fields.get(key)
    return v.string_value if v is not None else ""  # "" when the value is not a string


def _count(fields: Any, key: str) -> int:
    v = fields.get(key)
    if v is None or not v.HasField("number_value"):
        return 0
    n = v.number_value
    return int(n) if 0 <= n < 2**53 else 0


def _conditions(fields: Any) -> list[Any]:
    v = fields.get("conditions")
    if v is None or not v.HasField("list_value"):
        return []
    return [c.struct_value.fields for c in v.list_value.values if c.HasField("struct_value")]


def read_observed(s: struct_pb2.Struct) -> ObservedObject:
    """The facts of an observed Object, read from its Struct without converting it."""
    status = _struct(s.fields, "status")
    if status is None:
        return ObservedObject()
    failure = ""
    for c in _conditions(status):
        if _string(c, "status") == "False" and (message := _string(c, "message")):
            failure = message
            break
    remote = _struct(status, "atProvider")
    manifest = _struct(remote, "manifest") if remote is not None else None
    exposed = _exposed_secret_fields(manifest) if manifest is not None else ()
    remote = _struct(manifest, "status") if manifest is not None else None
    if not remote:
        return ObservedObject(failure_message=failure, exposed_secret_fields=exposed)
    return ObservedObject(
        remote_seen=True,
        remote_phase=_string(remote, "phase"),
        remote_conditions=tuple(
            Condition(
                _string(c, "type"),
                _string(c, "status"),
                _string(c, "reason"),
                _string(c, "message"),
            )
            for c in _conditions(remote)
        ),
        remote_succeeded=_count(remote, "succeeded"),
        remote_failed=_count(remote, "failed"),
        failure_message=failure,
        exposed_secret_fields=exposed,
    )


def _exposed_secret_fields(manifest: Any) -> tuple[str, ...]:
    """`secret_fields_with_values` of an echoed manifest; only a Secret's (a few keys) is
    converted to plain data."""
    if _string(manifest, "kind") != "Secret":
        return ()
    echoed = struct_pb2.Struct()
    for key, value in manifest.items():
        echoed.fields[key].CopyFrom(value)
    return secret_fields_with_values(json_format.MessageToDict(echoed))
