"""Crossplane Usages, as the simulated control plane honours them.

A `protection.crossplane.io` Usage (namespaced) or ClusterUsage names a resource in use
(`spec.of`) and, optionally, who uses it (`spec.by`) or why (`spec.reason`). While one exists,
Crossplane's admission webhook refuses to delete the resource in use. With
`spec.replayDeletion`, a refused deletion is remembered and carried out once the Usage is
deleted. Crossplane's Usage controller marks a Usage Ready (Available) once the resource in
use, and its user when it names one, exist. Only `resourceRef` is resolved here (Crossplane
turns a `resourceSelector` into a `resourceRef` before it protects anything; the functions
here always name the resource).
"""

from datetime import datetime
from typing import Any

from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import mapping_at, mapping_path

from modelfleet_cli.xr_conditions import set_conditions

PROTECTION_GROUP = "protection.crossplane.io"
USAGE_KINDS = frozenset({"Usage", "ClusterUsage"})

Key = tuple[str, str, str, str]  # apiVersion, kind, namespace, name


def is_usage(obj: dict[str, Any]) -> bool:
    api_version = str(obj.get("apiVersion") or "")
    return api_version.split("/")[0] == PROTECTION_GROUP and obj.get("kind") in USAGE_KINDS


def used_key(usage: dict[str, Any], role: str = "of") -> Key | None:
    """The key of the resource `usage` protects (`role` "by": of its user), None when it
    names none."""
    of = mapping_path(usage, "spec", role)
    ref = mapping_at(of, "resourceRef")
    if not ref.get("name"):
        return None
    namespace = ""
    if usage.get("kind") == "Usage":  # namespaced: the Usage's namespace unless it names one
        # Named, even as "" (how a namespaced Usage names a cluster-scoped resource), it is
        # taken as it is, as Crossplane does.
        named = ref.get("namespace")
        namespace = str(
            named if named is not None else mapping_at(usage, "metadata").get("namespace") or ""
        )
    return (str(of.get("apiVersion") or ""), str(of.get("kind") or ""), namespace, str(ref["name"]))


def mark_configured(store: dict[Key, dict[str, Any]], now: datetime) -> None:
    """Crossplane's Usage controller: a Usage whose resource in use and named user exist is
    Ready; one naming an absent resource is left as it is (the controller retries)."""
    available = Status.true("Ready", "Available").as_condition()
    for usage in [obj for obj in store.values() if is_usage(obj)]:
        of, by = used_key(usage), used_key(usage, "by")
        if of in store and (by is None or by in store):
            set_conditions(usage, [available], now)


def replays_deletion(usage: dict[str, Any]) -> bool:
    return mapping_at(usage, "spec").get("replayDeletion") is True


def in_use_message(usages: list[dict[str, Any]]) -> str:
    """What the webhook answers a refused deletion, naming the first Usage and its user."""
    first = usages[0]
    metadata = mapping_at(first, "metadata")
    name = "/".join(p for p in (metadata.get("namespace"), metadata.get("name")) if p)
    text = (
        f"This resource is in-use by {len(usages)} usage(s), including the {first['kind']} {name}"
    )
    by = mapping_path(first, "spec", "by")
    by_name = mapping_at(by, "resourceRef").get("name")
    reason = mapping_at(first, "spec").get("reason")
    if by_name:  # like Crossplane: the user when there is one, else the reason
        text += f" by resource {by.get('kind')}/{by_name}"
    elif reason:
        text += f" with reason: {reason}"
    return text + "."
