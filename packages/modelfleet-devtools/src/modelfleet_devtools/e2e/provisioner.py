"""A hostPath provisioner for a real node's ReadWriteMany StorageClasses: the one part of a
workload cluster no binary here provides (an NFS or Filestore CSI driver needs its backend).

It plays an external provisioner as the PV controller expects one: for each pending claim of
a class it serves, a PersistentVolume of the claim's size and access modes, pre-bound to the
claim, with the class's reclaim policy and a hostPath directory of its own; kube-controller-
manager's PV controller then binds them. A Released volume whose policy is Delete is deleted
with its directory; a Retain one is left as it is.

The directory is world-writable (0777): hostPath ignores `fsGroup`, and the hydrator runs as
a non-root user, as it would on an NFS share exported to every uid.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .kube import ApiError, KubeClient, resource_path

Json = dict[str, Any]
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
CLAIMS = resource_path("v1", "persistentvolumeclaims")
VOLUMES = resource_path("v1", "persistentvolumes")
CLASSES = resource_path("storage.k8s.io/v1", "storageclasses")


def volume_for(claim: Json, storage_class: Json, folder: Path, provisioner: str) -> Json:
    """The PersistentVolume that serves `claim`, its directory under `folder`."""
    meta, spec = claim["metadata"], claim.get("spec") or {}
    name = f"pvc-{meta['uid']}"
    requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {PROVISIONED_BY: provisioner}},
        "spec": {
            "capacity": {"storage": requested},
            "accessModes": spec.get("accessModes") or ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
            "storageClassName": storage_class["metadata"]["name"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": meta["namespace"],
                "name": meta["name"],
                "uid": meta["uid"],
            },
            "hostPath": {"path": str(folder / name), "type": "DirectoryOrCreate"},
        },
    }


@dataclass
class HostPathProvisioner:
    """Provisions and deletes volumes for the classes naming `provisioner`, every `every` s."""

    client: KubeClient
    folder: Path
    provisioner: str
    every: float = 1.0
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> HostPathProvisioner:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._loop, name="provisioner", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.pass_once()
            except Exception as error:  # the API server may be restarting; say, try again
                self.errors[:] = [*self.errors[-9:], repr(error)]

    def pass_once(self) -> None:
        classes = {
            c["metadata"]["name"]: c
            for c in self.client.list(CLASSES)
            if c.get("provisioner") == self.provisioner
        }
        volumes = self.client.list(VOLUMES)
        served = {((v["spec"].get("claimRef") or {}).get("uid")) for v in volumes}
        for claim in self.client.list(CLAIMS):
            spec = claim.get("spec") or {}
            pending = (claim.get("status") or {}).get("phase") == "Pending"
            storage_class = classes.get(spec.get("storageClassName") or "")
            unserved = claim["metadata"]["uid"] not in served and not spec.get("volumeName")
            if pending and storage_class and unserved:
                self._provision(claim, storage_class)
        for volume in volumes:
            self._maybe_delete(volume)

    def _provision(self, claim: Json, storage_class: Json) -> None:
        volume = volume_for(claim, storage_class, self.folder, self.provisioner)
        directory = Path(volume["spec"]["hostPath"]["path"])
        directory.mkdir(parents=True, exist_ok=True)
        directory.chmod(0o777)
        try:
            self.client.create(VOLUMES, volume)
        except ApiError as error:
            if error.status != 409:
                raise

    def _maybe_delete(self, volume: Json) -> None:
        annotations = volume["metadata"].get("annotations") or {}
        spec = volume.get("spec") or {}
        if (
            annotations.get(PROVISIONED_BY) == self.provisioner
            and (volume.get("status") or {}).get("phase") == "Released"
            and spec.get("persistentVolumeReclaimPolicy") == "Delete"
        ):
            directory = Path((spec.get("hostPath") or {}).get("path", ""))
            if directory.is_relative_to(self.folder):  # only what it made
                shutil.rmtree(directory, ignore_errors=True)
            self.client.delete(f"{VOLUMES}/{volume['metadata']['name']}")
