"""Applying what an XR's pipeline desires, as Crossplane does: each composed resource named
(`names`), created or updated unless another XR controls the object under that name, and what
was observed but is no longer desired deleted."""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from modelfleet_contracts.fields import mapping_at

from modelfleet_cli.composed import composed_metadata
from modelfleet_cli.pipeline import PipelineResult
from modelfleet_cli.simulate import deletion, names
from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.simulate.objects import Key, is_xr, key_of
from modelfleet_cli.simulate.records import Event

if TYPE_CHECKING:
    from modelfleet_cli.simulate.control_plane import ControlPlane


def apply_desired(
    plane: "ControlPlane", key: Key, result: PipelineResult, observed: set[str]
) -> None:
    """Create or update what the pipeline desires; delete what was observed but is no
    longer desired (Crossplane garbage-collects only observed resources: one it could not
    observe this time is left alone)."""
    xr = plane.store[key]
    refs = plane.refs[key]
    resource_names = sorted(result.resources)
    if plane.order is not None:
        plane.order.shuffle(resource_names)
    for name in resource_names:
        desired = result.resources[name]
        previous = plane.store.get(refs[name]) if name in refs else None
        obj = composed_metadata(desired, xr, name, previous)
        metadata = obj["metadata"]
        try:
            metadata["name"] = metadata.get("name") or names.composed_name(
                obj, str(key), _name_taken(plane, obj)
            )
        except names.NameGenerationError as exc:  # Crossplane's reconcile error
            plane.events.append(Event(plane.round, xr_id(xr), "Warning", str(exc)))
            continue
        metadata.pop("generateName", None)
        if previous is not None:
            metadata["uid"] = mapping_at(previous, "metadata").get("uid")
            if "status" in previous:
                obj["status"] = previous["status"]
        new_key = key_of(obj)
        refs[name] = new_key  # recorded before the apply, as Crossplane does
        existing = plane.store.get(new_key)
        refused = names.controller_conflict(existing, obj) if existing else None
        if refused:  # the API server keeps the other XR's object
            message = f'cannot apply composed resource "{name}": {refused}'
            plane.events.append(Event(plane.round, xr_id(xr), "Warning", message))
            continue
        if is_xr(obj) and new_key not in plane.store:
            plane._add_xr(obj, root=plane.roots.get(key, key))
        else:
            plane._put(obj)
    for name in sorted(n for n in refs if n in observed and n not in result.resources):
        gone = refs.pop(name)
        if gone in plane.store:
            deletion.check_loss(plane, key, gone)
            plane.delete(gone, f"left out of {xr_id(xr)}'s desired state")


def _name_taken(plane: "ControlPlane", obj: dict[str, Any]) -> Callable[[str], bool]:
    """Whether a name is taken for `obj`'s kind and namespace (a GET before a create)."""
    api_version, kind, namespace, _ = key_of(obj)
    return lambda name: (api_version, kind, namespace, name) in plane.store
