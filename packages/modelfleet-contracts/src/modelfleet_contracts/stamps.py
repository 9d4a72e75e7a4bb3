"""Many desired resources of one shape: built once, copied per resource with a few leaves set.

A function composing the same Object on 1000 clusters builds 1000 manifests that differ in a
handful of leaves (cluster name, namespace, provider config); converting each one to
protobuf is most of what writing the response costs. A `Shape` is the plain data built once
with `marker(name)` strings where per-resource values go; `Shape.stamp(values)` is one
resource. `apply_outcome` converts a shape once and copies it (in C) per stamp;
`Stamp.to_dict()` is the same resource as plain data.
"""

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_PREFIX, _SUFFIX = "\x00stamp:", "\x00"

# Where a shape's markers are: a key leads to a deeper node or, at a leaf, to a marker name.
# Keys are strings in mappings and indexes in lists.
Trie = dict[str | int, "Trie | str"]


def marker(name: str) -> str:
    """The placeholder for the per-resource value `name` in a shape's data."""
    return f"{_PREFIX}{name}{_SUFFIX}"


class Shape:
    """Plain data with markers at the leaves that differ per resource."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.holes: Trie = {}
        self.names: set[str] = set()
        self._find(data, self.holes)

    def _find(self, value: Any, node: Trie) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, v in items:
            if isinstance(key, str) and _PREFIX in key:
                raise ValueError(f"a marker in a key ({key!r}) cannot be stamped")
            if isinstance(v, str) and _PREFIX in v:
                name = v[len(_PREFIX) : -len(_SUFFIX)]
                if v != marker(name):
                    # A derived string (f"{cluster}-x") would keep the first resource's value.
                    raise ValueError(f"a marker inside a longer string ({v!r}) cannot be stamped")
                node[key] = name
                self.names.add(name)
            elif isinstance(v, dict | list):
                below: Trie = {}
                self._find(v, below)
                if below:
                    node[key] = below

    def stamp(self, values: dict[str, Any]) -> "Stamp":
        """One resource of this shape; `values` has a value for every marker name."""
        missing = self.names - values.keys()
        if missing:
            raise ValueError(f"no value for {sorted(missing)}")
        return Stamp(self, values)


@dataclass(frozen=True)
class Stamp:
    """One resource of `shape` with `values` at its markers; and, when `fields` is given,
    the mapping at path `at` with `fields` in place of the shape's own (a value `DROP`: the
    field left out; the values are shared, not copied)."""

    shape: Shape
    values: dict[str, Any]
    at: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        if not self.fields:
            data = copy.deepcopy(self.shape.data)
            _fill(data, self.shape.holes, self.values)
            return data
        # Only what stays is copied and stamped.
        data = _copy_except(self.shape.data, self.at, self.fields.keys())
        _fill(data, _pruned(self.shape.holes, self.at, self.fields.keys()), self.values)
        node = data
        for key in self.at:
            node = node[key]
        node.update({k: v for k, v in self.fields.items() if v is not DROP})
        return data

    def replacing(self, at: tuple[str, ...], fields: Mapping[str, Any]) -> "Stamp":
        """This resource with the mapping at `at` taking `fields` in place of its own."""
        return Stamp(self.shape, self.values, at, fields)


@dataclass(frozen=True)
class Verbatim:
    """A value carried from the request to the response as it is: a protobuf
    `struct_pb2.Value` the edge read and copies (in C) where it is written, never converted
    to plain data. The core moves it around and never looks inside."""

    value: Any


# In `Stamp.replacing`: leave the field out.
DROP = object()


def _copy_except(data: dict[str, Any], at: tuple[str, ...], gone: Any) -> dict[str, Any]:
    if not at:
        return {k: copy.deepcopy(v) for k, v in data.items() if k not in gone}
    head, *rest = at
    return {
        k: _copy_except(v, tuple(rest), gone) if k == head else copy.deepcopy(v)
        for k, v in data.items()
    }


def _pruned(node: Trie, at: tuple[str, ...], gone: Any) -> Trie:
    if not at:
        return {k: v for k, v in node.items() if k not in gone}
    head, *rest = at
    below = node.get(head)
    if not isinstance(below, dict):
        return node
    return {**node, head: _pruned(below, tuple(rest), gone)}


def _fill(data: Any, node: Trie, values: dict[str, Any]) -> None:
    for key, below in node.items():
        if isinstance(below, str):
            data[key] = values[below]
        else:
            _fill(data[key], below, values)
