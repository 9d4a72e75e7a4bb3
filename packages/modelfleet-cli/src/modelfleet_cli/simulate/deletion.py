"""Deleting from the simulated control plane, as Crossplane does: an XR takes its composed
resources with it, a managed resource its remote object, a resource in use by a Usage is
refused (and deleted later with `replayDeletion`), and a precious remote object a function
dropped while its cluster is still registered is counted lost (not a ModelReplica its
deployment moved to another cluster, make before break)."""

from typing import TYPE_CHECKING, Any

from modelfleet_contracts.api import LWS_KIND
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.fields import as_int, list_at, mapping_at, mapping_path
from modelfleet_contracts.labels import REPLACES_ANNOTATION

from modelfleet_cli.simulate import usages as u
from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.simulate.hydration import argument
from modelfleet_cli.simulate.objects import Key, is_xr
from modelfleet_cli.simulate.provider import is_managed
from modelfleet_cli.simulate.records import Event, Loss, Refusal

if TYPE_CHECKING:
    from modelfleet_cli.simulate.control_plane import ControlPlane

# Remote kinds whose loss costs weights or serving capacity.
PRECIOUS = frozenset({"PersistentVolumeClaim", "Job", "Deployment", LWS_KIND})


def check_loss(plane: "ControlPlane", owner: Key, gone: Key) -> None:
    """A function dropped a composed resource: count it lost when it is precious and its
    cluster is still registered (the user did not ask for it to go)."""
    obj = plane.store[gone]
    if is_xr(obj):
        cluster = str(mapping_at(obj, "spec").get("clusterName") or "")
        what = xr_id(obj)
        if _moved(plane, owner, obj, cluster):
            return
    else:
        manifest = mapping_path(obj, "spec", "forProvider", "manifest")
        if manifest.get("kind") not in PRECIOUS:
            return
        pc = str(mapping_path(obj, "spec", "providerConfigRef").get("name") or "")
        cluster = plane.pc_cluster.get(pc, "")
        remote = plane.clusters[cluster].get(manifest) if cluster in plane.clusters else None
        if remote is None:
            return
        complete = condition_true(mapping_at(remote, "status"), "Complete")
        if manifest.get("kind") == "Job" and (
            complete or _superseded(plane.store[owner], cluster, remote)
        ):
            return  # a finished hydration Job, or an older source's, is cleaned up by design
        what = f"{manifest.get('kind')} {mapping_at(manifest, 'metadata').get('name')}"
    if cluster and plane.cluster_registered(cluster):
        plane.losses.append(Loss(plane.round, what, cluster, xr_id(plane.store[owner])))


def _moved(plane: "ControlPlane", owner: Key, replica: dict[str, Any], cluster: str) -> bool:
    """A ModelReplica its deployment moved off `cluster`: another replica of the same owner
    says it replaces that cluster's (`modelfleet.io/replaces`), and it is Available whenever
    the one dropped was serving (make before break). Anything short of that is a loss."""
    serving = as_int(mapping_at(replica, "status").get("readyReplicas")) > 0
    for key in plane.refs.get(owner, {}).values():
        other = plane.store.get(key)
        if other is None or other is replica or not is_xr(other):
            continue
        annotations = mapping_at(mapping_at(other, "metadata"), "annotations")
        replaced = str(annotations.get(REPLACES_ANNOTATION) or "").split(",")
        if cluster not in replaced:
            continue
        spec, status = mapping_at(other, "spec"), mapping_at(other, "status")
        available = as_int(status.get("readyReplicas")) >= max(1, as_int(spec.get("replicas")))
        if available or not serving:
            return True
    return False


def _superseded(cache: dict[str, Any], cluster: str, job: dict[str, Any]) -> bool:
    """A hydration Job of a source the cache no longer has on `cluster`: its hydrator's
    `--fingerprint=` is not the one the cache's row for that cluster now reports."""
    rows = list_at(mapping_at(cache, "status"), "clusters")
    current = next((r.get("fingerprint") for r in rows if r.get("name") == cluster), None)
    staged = argument(job, "--fingerprint=")
    return bool(current and staged and staged != current)


def usages_of(plane: "ControlPlane", key: Key) -> list[Key]:
    """The Usages in the store that protect `key`."""
    return sorted(
        k
        for kind in sorted(u.USAGE_KINDS)
        for k, obj in plane.store.of_kind(kind).items()
        if u.is_usage(obj) and u.used_key(obj) == key
    )


def delete(plane: "ControlPlane", key: Key, reason: str) -> bool:
    """Delete an object from the control plane; an XR takes its composed resources with
    it, a managed resource its remote object (as its management policies allow). An
    object in use by a Usage is not deleted (False), as Crossplane's webhook refuses it."""
    obj = plane.store.get(key)
    if obj is None:
        return True
    blocking = usages_of(plane, key)
    if blocking:
        refuse(plane, key, obj, blocking, reason)
        return False
    plane.deleting_depth += 1
    try:
        for child in list(plane.refs.get(key, {}).values()):
            delete(plane, child, f"{xr_id(obj)} deleted")
        plane.refs.pop(key, None)
        plane.roots.pop(key, None)
        if is_managed(obj):
            outcome = plane.providers.delete(obj, reason)
            plane.events.append(Event(plane.round, xr_id(obj), "Normal", f"{outcome} ({reason})"))
        del plane.store[key]
        used = plane.deletion_attempts.pop(key, None)
        if used is not None:
            plane.pending_replays.append((used, f"replayed: its {xr_id(obj)} was deleted"))
    finally:
        plane.deleting_depth -= 1
    if not plane.deleting_depth:
        # A Usage with `by` goes only once its user is gone: replay after the whole
        # cascade, not in the middle of it.
        while plane.pending_replays:
            used, why = plane.pending_replays.pop(0)
            if used in plane.store:
                delete(plane, used, why)
    return True


def refuse(
    plane: "ControlPlane", key: Key, obj: dict[str, Any], blocking: list[Key], reason: str
) -> None:
    """Crossplane's webhook refuses the deletion; a Usage with replayDeletion remembers it."""
    usages = [plane.store[k] for k in blocking]
    message = f"deletion refused ({reason}): {u.in_use_message(usages)}"
    plane.refusals.append(Refusal(plane.round, xr_id(obj), message))
    plane.events.append(Event(plane.round, xr_id(obj), "Warning", message))
    for usage_key, usage in zip(blocking, usages, strict=True):
        if u.replays_deletion(usage):
            plane.deletion_attempts[usage_key] = key
