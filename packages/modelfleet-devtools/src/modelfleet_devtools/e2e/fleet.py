"""Applying an example fleet to the real control plane, as a platform engineer would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .kube import resource_path
from .stack import RealControlPlane
from .workload import ensure_namespace

Json = dict[str, Any]
GROUP_VERSION = "modelfleet.io/v1alpha1"
PLURALS = {
    "InferenceCluster": "inferenceclusters",
    "ModelCache": "modelcaches",
    "ModelDeployment": "modeldeployments",
    "ModelReplica": "modelreplicas",
}
SETTINGS_FILE = "simulation.yaml"  # what the simulated clusters hold; not a Kubernetes object


def load_fleet(folder: Path) -> tuple[list[Json], Json]:
    """The Kubernetes objects of an example folder, and its simulation settings."""
    objects: list[Json] = []
    for path in sorted(folder.glob("*.yaml")):
        if path.name == SETTINGS_FILE:
            continue
        objects.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    settings_path = folder / SETTINGS_FILE
    settings = yaml.safe_load(settings_path.read_text()) if settings_path.exists() else {}
    return objects, settings or {}


def apply_fleet(plane: RealControlPlane, folder: Path) -> list[Json]:
    """Start and connect the fleet's workload clusters, seed them, then apply every object."""
    objects, settings = load_fleet(folder)
    for obj in objects:
        if obj["kind"] == "InferenceCluster":
            plane.clusters.prepare(obj)
    for cluster, held in (settings.get("clusters") or {}).items():
        plane.clusters.seed(cluster, held.get("objects") or [])
    for namespace in sorted({o["metadata"].get("namespace") for o in objects} - {None}):
        ensure_namespace(plane.client, namespace)
    plane.apply(objects)
    return objects


def xr_path(obj: Json) -> str:
    meta = obj["metadata"]
    return resource_path(GROUP_VERSION, PLURALS[obj["kind"]], meta.get("namespace"), meta["name"])


def condition(obj: Json | None, kind: str) -> Json:
    for found in ((obj or {}).get("status") or {}).get("conditions") or []:
        if found.get("type") == kind:
            return dict(found)
    return {}
