"""The simulated control plane's objects, by key and by kind.

Crossplane reads the API server by kind (a required resource is a GET or a LIST of one kind;
the Usage webhook lists Usages), so a lookup here reads the objects of that kind only: at a
thousand clusters the store holds tens of thousands of composed resources, and scanning all of
them for each XR's requirements made a round cost the square of the fleet.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from modelfleet_cli.simulate.objects import Key

Obj = dict[str, Any]


class Store(dict[Key, Obj]):
    """A dict of objects by key (apiVersion, kind, namespace, name) that also keeps them by
    kind. Every write goes through `__setitem__`/`__delitem__`/`pop`, which keep both."""

    def __init__(self) -> None:
        super().__init__()
        self._by_kind: dict[str, dict[Key, Obj]] = {}

    def __setitem__(self, key: Key, obj: Obj) -> None:
        super().__setitem__(key, obj)
        self._by_kind.setdefault(key[1], {})[key] = obj

    def __delitem__(self, key: Key) -> None:
        super().__delitem__(key)
        self._by_kind[key[1]].pop(key, None)

    def pop(self, key: Key, *default: Any) -> Any:  # type: ignore[override]
        if key in self:
            self._by_kind[key[1]].pop(key, None)
        return super().pop(key, *default)

    def setdefault(self, key: Key, default: Obj) -> Obj:  # type: ignore[override]
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, obj in dict(*args, **kwargs).items():
            self[key] = obj

    def clear(self) -> None:
        super().clear()
        self._by_kind.clear()

    def popitem(self) -> tuple[Key, Obj]:
        key, obj = super().popitem()
        self._by_kind[key[1]].pop(key, None)
        return key, obj

    def of_kind(self, kind: str) -> Mapping[Key, Obj]:
        """The objects of `kind` (any apiVersion), by key; read it, do not write it."""
        return self._by_kind.get(kind, {})

    def candidates(self, api_version: str, kind: str) -> Iterable[Obj]:
        """What a function's requirement for `kind` is resolved from: Secrets are never
        offered (credentials do not pass through a function)."""
        if kind == "Secret":
            return ()
        return [o for k, o in self.of_kind(kind).items() if k[0] == api_version]

    def named(self, api_version: str, kind: str, namespace: str, name: str) -> Iterable[Obj]:
        """The object a requirement names, if any (one GET; Secrets are not offered)."""
        found = self.get((api_version, kind, namespace, name))
        return () if kind == "Secret" or found is None else (found,)
