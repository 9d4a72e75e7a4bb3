"""Applying what an XR's pipeline desires, as Crossplane does: each composed resource named
(`names`), created or updated unless another XR controls the object under that name, and what
was observed but is no longer desired deleted.

`Composing` is that part of the control plane (control_plane.py), with the store's own
writes (an object put, an XR added); what it deletes goes through `Deletions`."""

import random
from collections.abc import Callable
from typing import Any

from modelfleet_contracts.fields import mapping_at

from modelfleet_cli.composed import composed_metadata
from modelfleet_cli.pipeline import PipelineResult
from modelfleet_cli.simulate import names
from modelfleet_cli.simulate.deletion import Deletions
from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.simulate.objects import Key, is_xr, key_of
from modelfleet_cli.simulate.records import Event


class Composing(Deletions):
    """Writing objects into the control plane's store, and applying a pipeline's result."""

    # None: composed resources are applied sorted by name; a Random shuffles that order.
    order: random.Random | None
    _serial: int  # uids handed out so far
    _added_xrs: list[Key]  # XRs added since the reconcile loop last looked

    def _put(self, obj: dict[str, Any]) -> Key:
        key = key_of(obj)
        if key not in self.store:
            self._serial += 1
            obj.setdefault("metadata", {}).setdefault("uid", f"cp-{self._serial:05d}")
        self.store[key] = obj
        return key

    def _add_xr(self, xr: dict[str, Any], root: Key | None = None) -> Key:
        key = self._put(xr)
        self._added_xrs.append(key)
        self.refs.setdefault(key, {})
        self.roots[key] = root or key
        return key

    def _apply_desired(self, key: Key, result: PipelineResult, observed: set[str]) -> None:
        """Create or update what the pipeline desires; delete what was observed but is no
        longer desired (Crossplane garbage-collects only observed resources: one it could not
        observe this time is left alone)."""
        xr = self.store[key]
        refs = self.refs[key]
        resource_names = sorted(result.resources)
        if self.order is not None:
            self.order.shuffle(resource_names)
        for name in resource_names:
            desired = result.resources[name]
            previous = self.store.get(refs[name]) if name in refs else None
            obj = composed_metadata(desired, xr, name, previous)
            metadata = obj["metadata"]
            try:
                metadata["name"] = metadata.get("name") or names.composed_name(
                    obj, str(key), self._name_taken(obj)
                )
            except names.NameGenerationError as exc:  # Crossplane's reconcile error
                self.events.append(Event(self.round, xr_id(xr), "Warning", str(exc)))
                continue
            metadata.pop("generateName", None)
            if previous is not None:
                metadata["uid"] = mapping_at(previous, "metadata").get("uid")
                if "status" in previous:
                    obj["status"] = previous["status"]
            new_key = key_of(obj)
            refs[name] = new_key  # recorded before the apply, as Crossplane does
            existing = self.store.get(new_key)
            refused = names.controller_conflict(existing, obj) if existing else None
            if refused:  # the API server keeps the other XR's object
                message = f'cannot apply composed resource "{name}": {refused}'
                self.events.append(Event(self.round, xr_id(xr), "Warning", message))
                continue
            if is_xr(obj) and new_key not in self.store:
                self._add_xr(obj, root=self.roots.get(key, key))
            else:
                self._put(obj)
        for name in sorted(n for n in refs if n in observed and n not in result.resources):
            gone = refs.pop(name)
            if gone in self.store:
                self.check_loss(key, gone)
                self.delete(gone, f"left out of {xr_id(xr)}'s desired state")

    def _name_taken(self, obj: dict[str, Any]) -> Callable[[str], bool]:
        """Whether a name is taken for `obj`'s kind and namespace (a GET before a create)."""
        api_version, kind, namespace, _ = key_of(obj)
        return lambda name: (api_version, kind, namespace, name) in self.store
