"""Deleting from the simulated control plane, as Crossplane does: an XR takes its composed
resources with it, a managed resource its remote object, a resource in use by a Usage is
refused (and deleted later with `replayDeletion`), and a precious remote object a function
dropped while its cluster is still registered is counted lost (not a ModelReplica its
deployment moved to another cluster, make before break).

`Deletions` is that part of the control plane (control_plane.py): its methods read and
change the plane's objects, references and records, which the plane holds."""

from typing import Any

from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER, LWS_KIND
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.fields import as_int, list_at, mapping_at, mapping_path
from modelfleet_contracts.labels import REPLACES_ANNOTATION

from modelfleet_cli.simulate import usages as u
from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.simulate.hydration import argument
from modelfleet_cli.simulate.objects import Key, is_xr
from modelfleet_cli.simulate.provider import Providers, is_managed
from modelfleet_cli.simulate.records import Event, Loss, Refusal
from modelfleet_cli.simulate.store import Store
from modelfleet_cli.simulate.workload import WorkloadCluster

# Remote kinds whose loss costs weights or serving capacity.
PRECIOUS = frozenset({"PersistentVolumeClaim", "Job", "Deployment", LWS_KIND})


class Deletions:
    """Deleting, and counting what a deletion loses, among the control plane's objects."""

    store: Store
    refs: dict[Key, dict[str, Key]]
    roots: dict[Key, Key]
    clusters: dict[str, WorkloadCluster]
    pc_cluster: dict[str, str]
    providers: Providers
    losses: list[Loss]
    events: list[Event]
    refusals: list[Refusal]
    deletion_attempts: dict[Key, Key]
    pending_replays: list[tuple[Key, str]]
    deleting_depth: int
    round: int

    def cluster_registered(self, cluster: str) -> bool:
        return (API_VERSION, INFERENCE_CLUSTER, "", cluster) in self.store

    def check_loss(self, owner: Key, gone: Key) -> None:
        """A function dropped a composed resource: count it lost when it is precious and its
        cluster is still registered (the user did not ask for it to go)."""
        obj = self.store[gone]
        if is_xr(obj):
            cluster = str(mapping_at(obj, "spec").get("clusterName") or "")
            what = xr_id(obj)
            if self._moved(owner, obj, cluster):
                return
        else:
            manifest = mapping_path(obj, "spec", "forProvider", "manifest")
            if manifest.get("kind") not in PRECIOUS:
                return
            pc = str(mapping_path(obj, "spec", "providerConfigRef").get("name") or "")
            cluster = self.pc_cluster.get(pc, "")
            remote = self.clusters[cluster].get(manifest) if cluster in self.clusters else None
            if remote is None:
                return
            complete = condition_true(mapping_at(remote, "status"), "Complete")
            if manifest.get("kind") == "Job" and (
                complete or _superseded(self.store[owner], cluster, remote)
            ):
                return  # a finished hydration Job, or an older source's, is cleaned up by design
            what = f"{manifest.get('kind')} {mapping_at(manifest, 'metadata').get('name')}"
        if cluster and self.cluster_registered(cluster):
            self.losses.append(Loss(self.round, what, cluster, xr_id(self.store[owner])))

    def _moved(self, owner: Key, replica: dict[str, Any], cluster: str) -> bool:
        """A ModelReplica its deployment moved off `cluster`: another replica of the same owner
        says it replaces that cluster's (`modelfleet.io/replaces`), and it is Available whenever
        the one dropped was serving (make before break). Anything short of that is a loss."""
        serving = as_int(mapping_at(replica, "status").get("readyReplicas")) > 0
        for key in self.refs.get(owner, {}).values():
            other = self.store.get(key)
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

    def usages_of(self, key: Key) -> list[Key]:
        """The Usages in the store that protect `key`."""
        return sorted(
            k
            for kind in sorted(u.USAGE_KINDS)
            for k, obj in self.store.of_kind(kind).items()
            if u.is_usage(obj) and u.used_key(obj) == key
        )

    def delete(self, key: Key, reason: str) -> bool:
        """Delete an object from the control plane; an XR takes its composed resources with
        it, a managed resource its remote object (as its management policies allow). An
        object in use by a Usage is not deleted (False), as Crossplane's webhook refuses it."""
        obj = self.store.get(key)
        if obj is None:
            return True
        blocking = self.usages_of(key)
        if blocking:
            self._refuse(key, obj, blocking, reason)
            return False
        self.deleting_depth += 1
        try:
            for child in list(self.refs.get(key, {}).values()):
                self.delete(child, f"{xr_id(obj)} deleted")
            self.refs.pop(key, None)
            self.roots.pop(key, None)
            if is_managed(obj):
                outcome = self.providers.delete(obj, reason)
                self.events.append(Event(self.round, xr_id(obj), "Normal", f"{outcome} ({reason})"))
            del self.store[key]
            used = self.deletion_attempts.pop(key, None)
            if used is not None:
                self.pending_replays.append((used, f"replayed: its {xr_id(obj)} was deleted"))
        finally:
            self.deleting_depth -= 1
        if not self.deleting_depth:
            # A Usage with `by` goes only once its user is gone: replay after the whole
            # cascade, not in the middle of it.
            while self.pending_replays:
                used, why = self.pending_replays.pop(0)
                if used in self.store:
                    self.delete(used, why)
        return True

    def _refuse(self, key: Key, obj: dict[str, Any], blocking: list[Key], reason: str) -> None:
        """Crossplane's webhook refuses the deletion; a Usage with replayDeletion remembers it."""
        usages = [self.store[k] for k in blocking]
        message = f"deletion refused ({reason}): {u.in_use_message(usages)}"
        self.refusals.append(Refusal(self.round, xr_id(obj), message))
        self.events.append(Event(self.round, xr_id(obj), "Warning", message))
        for usage_key, usage in zip(blocking, usages, strict=True):
            if u.replays_deletion(usage):
                self.deletion_attempts[usage_key] = key


def _superseded(cache: dict[str, Any], cluster: str, job: dict[str, Any]) -> bool:
    """A hydration Job of a source the cache no longer has on `cluster`: its hydrator's
    `--fingerprint=` is not the one the cache's row for that cluster now reports."""
    rows = list_at(mapping_at(cache, "status"), "clusters")
    current = next((r.get("fingerprint") for r in rows if r.get("name") == cluster), None)
    staged = argument(job, "--fingerprint=")
    return bool(current and staged and staged != current)
