"""Which example fleets can share the control plane at once without seeing each other.

Two fleets interfere when a selector of one (a ModelCache's or ModelDeployment's
clusterSelector; none matches every cluster) matches an InferenceCluster of the other, when
they name the same object (same kind, namespace and name: a cache, a Secret, a cluster), or
when they reach clusters through the same provider config. Fleets that do none of these are
reconciled side by side exactly as each would be alone, so the suite applies them together
and waits for all at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelfleet_contracts.clusters import matches_selector

Json = dict[str, Any]
SELECTING_KINDS = ("ModelCache", "ModelDeployment")


def _clusters(objects: Iterable[Json]) -> list[Json]:
    return [o for o in objects if o["kind"] == "InferenceCluster"]


def _selects_any(selecting: Iterable[Json], clusters: list[Json]) -> bool:
    for obj in selecting:
        if obj["kind"] not in SELECTING_KINDS:
            continue
        selector = (obj.get("spec") or {}).get("clusterSelector")
        for cluster in clusters:
            if matches_selector(cluster["metadata"].get("labels") or {}, selector):
                return True
    return False


def _names(objects: Iterable[Json]) -> set[tuple[str, str, str]]:
    named = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects
    }
    for cluster in _clusters(objects):
        connection = (cluster.get("spec") or {}).get("connection") or {}
        if connection.get("providerConfigName"):
            named.add(("ClusterProviderConfig", "", connection["providerConfigName"]))
        ref = connection.get("kubeconfigSecretRef")
        if ref:
            named.add(("Secret", ref["namespace"], ref["name"]))
    return named


def interfere(a: list[Json], b: list[Json]) -> bool:
    return (
        _selects_any(a, _clusters(b))
        or _selects_any(b, _clusters(a))
        or bool(_names(a) & _names(b))
    )


def batches(fleets: Mapping[str, list[Json]], alone: Iterable[str] = ()) -> list[list[str]]:
    """Fleets grouped so that no two of a group interfere, in the order given (each joins the
    first group it fits); those named in `alone` get a group of their own."""
    solo = set(alone)
    groups: list[list[str]] = []
    for name, objects in fleets.items():
        if name not in solo:
            for group in groups:
                if group[0] not in solo and not any(
                    interfere(objects, fleets[other]) for other in group
                ):
                    group.append(name)
                    break
            else:
                groups.append([name])
        else:
            groups.append([name])
    return groups
