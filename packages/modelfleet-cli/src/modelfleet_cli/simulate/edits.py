"""Edits a user makes while the fleet runs: `edits:` in simulation.yaml, each a JSON merge patch
(RFC 7386, as `kubectl patch --type=merge`) of one XR's spec at the start of a round, such as a
ModelService's weights moving a canary from 10% to 100%."""

import copy
import json
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.api import API_VERSION

from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.simulate.objects import Key
from modelfleet_cli.simulate.store import Store
from modelfleet_cli.xrd import check_xr


class EditError(ValueError):
    """An edit that cannot be understood; the message says how to write it."""


@dataclass(frozen=True)
class Edit:
    round: int
    target: str  # Kind/namespace/name, or Kind/name for a cluster-scoped XR
    patch: dict[str, Any]

    @property
    def key(self) -> Key:
        kind, *rest = self.target.split("/")
        namespace, name = (rest[0], rest[1]) if len(rest) == 2 else ("", rest[0])
        return API_VERSION, kind, namespace, name

    def describe(self) -> str:
        return f"{self.target}: {json.dumps(self.patch, separators=(', ', ': '))}"


def merge_patch(target: Any, patch: Any) -> Any:
    """`target` with the JSON merge patch `patch` applied (a null removes a key; a list or a
    scalar replaces what was there)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def edits_from_settings(entries: Any) -> list[Edit]:
    """`edits:` of simulation.yaml: a list of {round, target, patch}."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise EditError("simulation.yaml: edits must be a list of {round, target, patch}")
    edits = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("patch"), dict):
            raise EditError(
                f"simulation.yaml: edit {entry!r}: write {{round: N, target: "
                "Kind/namespace/name, patch: {spec: {...}}}"
            )
        target = str(entry.get("target") or "")
        if not 2 <= len(target.split("/")) <= 3 or not all(target.split("/")):
            raise EditError(
                f"simulation.yaml: edit target {target!r}: write Kind/namespace/name "
                "(Kind/name for a cluster-scoped XR)"
            )
        try:
            round_no = int(entry.get("round", 0))
        except (TypeError, ValueError):
            raise EditError(f"simulation.yaml: edit {target}: round must be a number") from None
        if round_no < 1:
            raise EditError(f"simulation.yaml: edit {target}: round must be >= 1")
        edits.append(Edit(round_no, target, entry["patch"]))
    return sorted(edits, key=lambda e: e.round)


def apply_edit(store: Store, edit: Edit) -> str | None:
    """The user's merge patch of an XR on the control plane, as the API server takes it (its
    XRD's schema and rules; the generation moves on); why it refused, or None once applied."""
    xr = store.get(edit.key)
    if xr is None:
        return "no such XR"
    patched = merge_patch(xr, edit.patch)
    check = check_xr({k: v for k, v in patched.items() if k != "status"})
    if check.refused:
        return check.refusal(xr_id(xr))
    xr.clear()
    xr.update(patched)
    metadata = xr.setdefault("metadata", {})
    metadata["generation"] = int(metadata.get("generation") or 1) + 1
    return None
