"""Resolving a function's resource requirements from a pool of objects, the way Crossplane's
required-resources fetcher does against the API server:

- apiVersion and kind must match exactly;
- `match_name`: the one object of that name in the selector's namespace (no namespace in
  the selector means a cluster-scoped object, i.e. one without a namespace);
- `match_labels` (or no match at all): every object whose labels include all the selector's
  labels, within the selector's namespace when one is given, else in every namespace;
- lists come back sorted by namespace/name, so requests are stable from call to call.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from crossplane.function.proto.v1 import run_function_pb2 as fnv1


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _namespace(obj: Mapping[str, Any]) -> str:
    namespace = _metadata(obj).get("namespace")
    return namespace if isinstance(namespace, str) else ""


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = _metadata(obj).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _sort_key(obj: Mapping[str, Any]) -> str:
    return f"{_namespace(obj)}/{_metadata(obj).get('name', '')}"


def matches(selector: fnv1.ResourceSelector, obj: Mapping[str, Any]) -> bool:
    """Whether Crossplane would return `obj` for `selector`."""
    if obj.get("apiVersion") != selector.api_version or obj.get("kind") != selector.kind:
        return False
    wanted_namespace = selector.namespace if selector.HasField("namespace") else ""
    if selector.WhichOneof("match") == "match_name":
        return (
            _metadata(obj).get("name") == selector.match_name
            and _namespace(obj) == wanted_namespace
        )
    if wanted_namespace and _namespace(obj) != wanted_namespace:
        return False
    labels = _labels(obj)
    return all(labels.get(k) == v for k, v in selector.match_labels.labels.items())


class KindIndex(Protocol):
    """A pool that hands out the objects of one apiVersion and kind, or the one of that name
    (the simulated control plane's store), so that resolving a requirement does not read
    every object."""

    def candidates(self, api_version: str, kind: str) -> Iterable[Mapping[str, Any]]: ...

    def named(
        self, api_version: str, kind: str, namespace: str, name: str
    ) -> Iterable[Mapping[str, Any]]: ...


Pool = Sequence[Mapping[str, Any]] | KindIndex


def _candidates(selector: fnv1.ResourceSelector, pool: Pool) -> Iterable[Mapping[str, Any]]:
    if isinstance(pool, Sequence):
        return pool
    if selector.WhichOneof("match") == "match_name":
        namespace = selector.namespace if selector.HasField("namespace") else ""
        return pool.named(selector.api_version, selector.kind, namespace, selector.match_name)
    return pool.candidates(selector.api_version, selector.kind)


def select(selector: fnv1.ResourceSelector, pool: Pool) -> list[dict]:
    """The objects of `pool` that `selector` selects, sorted by namespace/name (a name
    selector yields at most one object)."""
    found = sorted(
        (dict(obj) for obj in _candidates(selector, pool) if matches(selector, obj)),
        key=_sort_key,
    )
    if selector.WhichOneof("match") == "match_name":
        return found[:1]
    return found


def resources_message(objects: Sequence[Mapping[str, Any]]) -> fnv1.Resources:
    """A `Resources` message holding `objects`; empty when nothing matched (Crossplane still
    sends the requirement's key, so the function knows it was resolved)."""
    out = fnv1.Resources()
    for obj in objects:
        out.items.add().resource.update(dict(obj))
    return out


def resolve(
    selectors: Mapping[str, fnv1.ResourceSelector], pool: Pool
) -> dict[str, fnv1.Resources]:
    """Requirement name -> the resources Crossplane would send for it."""
    return {name: resources_message(select(sel, pool)) for name, sel in selectors.items()}
