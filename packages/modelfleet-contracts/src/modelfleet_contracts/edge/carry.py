"""Carrying observed composed resources forward at the protobuf level.

An observed resource becomes a desired one: identity and spec kept, status, server-set
metadata (`objects.SERVER_SET_METADATA`) and a Secret's values (`objects.SECRET_VALUE_FIELDS`)
left out. It is never converted to plain data and back: a function that keeps an Object
unchanged pays for a copy in C, not for every value of its manifest (the tests hold it to a
plain-data oracle).
"""

from typing import Any

from google.protobuf import struct_pb2

from modelfleet_contracts.objects import SECRET_VALUE_FIELDS, SERVER_SET_METADATA

_KEPT = frozenset({"apiVersion", "kind", "metadata", "spec"})


def carry_forward_into(target: struct_pb2.Struct, observed: struct_pb2.Struct) -> None:
    """Write `observed` into `target` as a desired resource (see the module)."""
    target.CopyFrom(observed)
    fields = target.fields
    for key in [k for k in fields if k not in _KEPT]:
        del fields[key]
    for key in ("apiVersion", "kind"):
        if key not in fields:
            fields[key].null_value = struct_pb2.NULL_VALUE
    _drop_secret_values(fields)
    if "metadata" not in fields:
        return
    metadata = fields["metadata"]
    if metadata.WhichOneof("kind") != "struct_value":
        del fields["metadata"]
        return
    meta_fields = metadata.struct_value.fields
    for key in SERVER_SET_METADATA:
        if key in meta_fields:
            del meta_fields[key]
    if not meta_fields:
        del fields["metadata"]


def _mapping(fields: Any, key: str) -> Any:
    value = fields.get(key)
    return (
        value.struct_value.fields if value is not None and value.HasField("struct_value") else None
    )


def _text(fields: Any, key: str) -> str:
    value = fields.get(key)
    return value.string_value if value is not None else ""


def _drop_secret_values(fields: Any) -> None:
    """Leave out the values of a carried v1 Secret's manifest."""
    spec = _mapping(fields, "spec")
    provider = _mapping(spec, "forProvider") if spec is not None else None
    manifest = _mapping(provider, "manifest") if provider is not None else None
    if manifest is None:
        return
    if (_text(manifest, "apiVersion"), _text(manifest, "kind")) != ("v1", "Secret"):
        return
    for key in SECRET_VALUE_FIELDS:
        if key in manifest:
            del manifest[key]
