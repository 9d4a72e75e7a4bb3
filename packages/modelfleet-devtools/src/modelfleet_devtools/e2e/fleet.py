"""Applying an example fleet to the real control plane, as a platform engineer would."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .kube import ApiError, resource_path
from .stack import RealControlPlane
from .workload import ensure_namespace

Json = dict[str, Any]
GROUP_VERSION = "modelfleet.io/v1alpha1"
PLURALS = {
    "InferenceCluster": "inferenceclusters",
    "ModelCache": "modelcaches",
    "ModelCacheShard": "modelcacheshards",
    "ModelDeployment": "modeldeployments",
    "ModelReplica": "modelreplicas",
    "ModelService": "modelservices",
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


def apply_fleet(
    plane: RealControlPlane,
    folder: Path,
    edit: Callable[[Json], None] | None = None,
    *,
    real_nodes: bool = False,
) -> list[Json]:
    """Start and connect the fleet's workload clusters (real nodes with `real_nodes`), seed
    them, then apply every object (each first passed to `edit`, to vary an example).

    A real node whose InferenceCluster asks for LeaderWorkerSet runs its controller as the
    platform that installed it would (node_lws.py); the install is then left out of the
    applied spec, since provider-helm, which would install it, is not among the real
    binaries."""
    objects, settings = load_fleet(folder)
    for obj in objects:
        if edit:
            edit(obj)
    for obj in objects:
        if obj["kind"] == "InferenceCluster":
            plane.clusters.prepare(obj, real_node=real_nodes)
            if real_nodes:
                obj.get("spec", {}).pop("leaderWorkerSet", None)
    for cluster, held in (settings.get("clusters") or {}).items():
        plane.clusters.seed(cluster, held.get("objects") or [])
    for namespace in sorted({o["metadata"].get("namespace") for o in objects} - {None}):
        ensure_namespace(plane.client, namespace)
    plane.apply(objects)
    return objects


def start_without(plane: RealControlPlane, objects: list[Json], cluster: str) -> None:
    """Before a module applies `objects` on real nodes: delete what an earlier module left of
    them, and the stand-in workload cluster `cluster`, if one is left."""
    if any(plane.client.get(xr_path(o)) for o in objects if o["kind"] != "Secret"):
        delete_fleet(plane, objects)
        wait_for_nothing_left(plane)
    plane.clusters.discard(cluster)


def xr_path(obj: Json) -> str:
    meta = obj["metadata"]
    return resource_path(GROUP_VERSION, PLURALS[obj["kind"]], meta.get("namespace"), meta["name"])


class ServedFleet:
    """A fleet a scenario applied: its objects, the ModelCache and the ModelDeployment among
    them, read back from the control plane."""

    def __init__(self, plane: RealControlPlane, objects: list[Json]) -> None:
        self.plane, self.objects = plane, objects
        self.cache = next(o for o in objects if o["kind"] == "ModelCache")
        self.deployment = next(o for o in objects if o["kind"] == "ModelDeployment")

    def get(self, xr: Json) -> Json:
        return self.plane.client.get(xr_path(xr)) or {}


def condition(obj: Json | None, kind: str) -> Json:
    for found in ((obj or {}).get("status") or {}).get("conditions") or []:
        if found.get("type") == kind:
            return dict(found)
    return {}


# Deleted in this order: what routes, what serves, then what stages, then the clusters they
# reach through.
DELETION_ORDER = (
    "ModelService",
    "ModelReplica",
    "ModelDeployment",
    "ModelCache",
    "InferenceCluster",
)
CONTROL_PLANE_LEFTOVERS = (
    ("kubernetes.m.crossplane.io/v1alpha1", "objects"),
    ("modelfleet.io/v1alpha1", "modelreplicas"),
    ("modelfleet.io/v1alpha1", "modelcacheshards"),
    ("protection.crossplane.io/v1beta1", "usages"),
)
WORKLOAD_KINDS = (
    ("v1", "persistentvolumeclaims"),
    ("batch/v1", "jobs"),
    ("apps/v1", "deployments"),
    ("leaderworkerset.x-k8s.io/v1", "leaderworkersets"),
    ("v1", "services"),
    ("rbac.authorization.k8s.io/v1", "roles"),
    ("rbac.authorization.k8s.io/v1", "rolebindings"),
)


USAGE_WEBHOOK = "nousages.protection.crossplane.io"


def refused_as_in_use(error: ApiError) -> bool:
    """The deletion was refused by Crossplane's Usage webhook: something still uses it."""
    return USAGE_WEBHOOK in error.body


def request_deletion(plane: RealControlPlane, xr: Json) -> bool:
    """DELETE `xr`; False if Crossplane refused it because a Usage still names it."""
    try:
        plane.client.delete(xr_path(xr))
    except ApiError as error:
        if refused_as_in_use(error):
            return False
        raise
    return True


def delete_fleet(
    plane: RealControlPlane, objects: list[Json], seconds: dict[str, float] | None = None
) -> None:
    """`kubectl delete` every XR of the fleet, kind by kind, waiting for each to be gone. A
    deletion refused because a Usage of what went before is still being deleted is asked
    again until it is accepted. `seconds` gets how long each kind took to go."""
    from .processes import wait_for

    def gone(xrs: list[Json]) -> bool:
        left = [x for x in xrs if plane.client.get(xr_path(x))]
        for xr in left:
            request_deletion(plane, xr)
        return not left

    for kind in DELETION_ORDER:
        xrs = [o for o in objects if o["kind"] == kind]
        started = time.monotonic()
        for xr in xrs:
            request_deletion(plane, xr)
        wait_for(
            functools.partial(gone, xrs),
            what=f"every {kind} of the fleet to be deleted",
            timeout=240,
            every=2,
        )
        if seconds is not None and xrs:
            seconds[f"deleted: every {kind}"] = time.monotonic() - started


def leftovers(plane: RealControlPlane) -> list[str]:
    """What is still there after a fleet was deleted: on the control plane, and on every
    workload cluster outside Kubernetes' own namespaces (ServiceAccounts Kubernetes makes per
    namespace and the root CA ConfigMap aside)."""
    left = []
    for api, plural in CONTROL_PLANE_LEFTOVERS:
        try:
            items = plane.client.list(resource_path(api, plural))
        except Exception:
            continue
        left += [
            f"control plane {plural} {i['metadata'].get('namespace')}/{i['metadata']['name']}"
            for i in items
        ]
    for name, cluster in plane.clusters.clusters.items():
        for api, plural in WORKLOAD_KINDS:
            for item in cluster.client.list(resource_path(api, plural)):
                namespace = item["metadata"].get("namespace", "")
                if namespace.startswith("kube-") or (
                    plural == "services" and namespace == "default"
                ):
                    continue
                left.append(f"{name} {plural} {namespace}/{item['metadata']['name']}")
    return left


def wait_for_nothing_left(
    plane: RealControlPlane, timeout: float = 180, seconds: dict[str, float] | None = None
) -> None:
    """Wait until `leftovers` is empty; fail naming what is still there. `seconds` gets, for
    each thing left, when it was last seen (seconds into the wait)."""
    from .processes import wait_for

    left: list[str] = []
    started = time.monotonic()

    def nothing_left() -> bool:
        left[:] = leftovers(plane)
        if seconds is not None:
            seconds.update({f"left until: {t}": time.monotonic() - started for t in left})
        return not left

    try:
        wait_for(nothing_left, what="nothing left behind", timeout=timeout, every=3)
    except TimeoutError as error:
        raise AssertionError(f"{error}; still there: {left}") from None
