"""Converting between protobuf Structs and plain data, at the cost of what is read.

The SDK's converters go through `json_format`, which inspects descriptors for every value;
at 1000 clusters that, not the decisions, dominated a RunFunction. These walk the Struct
directly and give the same plain data (numbers as floats, as Crossplane sends them).
`project` goes further and converts only the part a reader asks for.
"""

from collections.abc import Mapping
from typing import Any, TypeAlias

from google.protobuf import struct_pb2

from modelfleet_contracts.stamps import DROP, Stamp, Trie, Verbatim


def _value(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "struct_value":
        # Indexing by key: a protobuf map's items() walks a slow pure-Python view.
        fields = v.struct_value.fields
        return {k: _value(fields[k]) for k in fields}
    if kind == "list_value":
        return [_value(x) for x in v.list_value.values]
    if kind == "number_value":
        return v.number_value
    if kind == "bool_value":
        return v.bool_value
    return None


def to_plain(v: struct_pb2.Value | None) -> Any:
    """One Value as plain data; None for an absent one (`fields.get(key)` of a missing key)."""
    return None if v is None else _value(v)


def to_dict(s: struct_pb2.Struct) -> dict[str, Any]:
    """The Struct as plain data (what `resource.struct_to_dict` returns, faster)."""
    fields = s.fields
    return {k: _value(fields[k]) for k in fields}


def _set(target: struct_pb2.Value, value: Any) -> None:
    if isinstance(value, str):
        target.string_value = value
    elif isinstance(value, Mapping):
        # Replace, not merge (as Struct.update does); Clear also marks an empty one as set.
        target.struct_value.Clear()
        fields = target.struct_value.fields
        for k, v in value.items():
            _set(fields[k], v)
    elif isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int | float):
        target.number_value = value
    elif isinstance(value, list | tuple):
        target.list_value.Clear()
        values = target.list_value.values
        for v in value:
            _set(values.add(), v)
    elif value is None:
        target.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, Verbatim):
        target.CopyFrom(value.value)
    else:
        raise ValueError(f"cannot encode a {type(value).__name__} in a Struct")


def update(s: struct_pb2.Struct, data: Mapping[str, Any]) -> None:
    """Write `data` into `s` (what `Struct.update` does, faster)."""
    fields = s.fields
    for k, v in data.items():
        _set(fields[k], v)


def set_at(s: struct_pb2.Struct, path: tuple[str, ...], value: Any) -> None:
    """Set the value at `path` in `s`, making the mappings on the way where they are absent
    (as `setdefault(key, {})` on plain data does)."""
    fields = s.fields
    for key in path[:-1]:
        fields = fields[key].struct_value.fields
    _set(fields[path[-1]], value)


# What to convert of a Struct: a nested mapping of keys; `None` converts the whole value
# below that key. A mapping applied to a list applies to each of its items.
Paths: TypeAlias = Mapping[str, "Paths | None"]


def project(s: struct_pb2.Struct, paths: Paths) -> dict[str, Any]:
    """Only the parts of `s` at `paths`, as plain data. A key that is absent stays absent; a
    value of another shape than `paths` expects is converted whole, as tolerant readers
    expect it. Keys are tested before indexing: indexing a missing key would add it."""
    fields = s.fields
    return {key: _projected(fields[key], below) for key, below in paths.items() if key in fields}


def _projected(v: struct_pb2.Value, below: Paths | None) -> Any:
    if below is not None:
        kind = v.WhichOneof("kind")
        if kind == "struct_value":
            return project(v.struct_value, below)
        if kind == "list_value":
            return [_projected(x, below) for x in v.list_value.values]
    return _value(v)


def write_stamp(
    target: struct_pb2.Struct, stamp: Stamp, converted: dict[int, struct_pb2.Struct]
) -> None:
    """Write `stamp` into `target`: a copy of its shape's Struct (converted once per shape,
    remembered in `converted` for the shapes' lifetime) with the stamp's values set and its
    replaced fields in place (a `Verbatim` copied as the protobuf it is)."""
    shape = stamp.shape
    template = converted.get(id(shape))
    if template is None:
        template = converted[id(shape)] = struct_pb2.Struct()
        update(template, shape.data)
    target.CopyFrom(template)
    _fill(target.fields, shape.holes, stamp.values)
    if stamp.fields:
        fields = target.fields
        for key in stamp.at:
            fields = fields[key].struct_value.fields
        for key, value in stamp.fields.items():
            if value is DROP:
                if key in fields:
                    del fields[key]
            else:
                _set(fields[key], value)


def _fill(container: Any, node: Trie, values: Mapping[str, Any]) -> None:
    """Set `node`'s leaves below `container`: a Struct's fields (keys) or a list's values
    (indexes); both are indexed the same way."""
    for key, below in node.items():
        v = container[key]
        if isinstance(below, str):
            _set(v, values[below])
        elif v.HasField("struct_value"):
            _fill(v.struct_value.fields, below, values)
        else:
            _fill(v.list_value.values, below, values)
