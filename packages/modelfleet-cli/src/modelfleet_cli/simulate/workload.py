"""A simulated workload cluster: the objects on it and the controllers that move them along.

Each `tick` is one round of the cluster's own controllers: Namespaces go Active, claims bind
when their StorageClass exists, hydration Jobs run for a few rounds and complete (or fail,
when a fault says so) and are deleted `ttlSecondsAfterFinished` after they finished (a tick
is a minute, as a round is on simulate's clock), Deployments and LeaderWorkerSets become
Available when their node pool has room for every pod (the round after their pods were first
placed: pods take a while to start, so provider-kubernetes, which reads a workload back right
after creating it, first sees it not Available), and a seeded Gateway is Programmed and
accepts the routes attached to it (gateways.py). Nothing here knows about Crossplane; the
simulated providers drive it.
"""

import copy
from typing import Any

from modelfleet_contracts.api import GATEWAY_API_GROUP, LWS_API_VERSION, LWS_KIND
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.fields import int_at, list_at, mapping_at, mapping_path

from modelfleet_cli.simulate.gateways import run_gateway_controller
from modelfleet_cli.simulate.hydration import (
    HydrationFault,
    complete,
    fail_attempt,
    matching_fault,
    report_progress,
)
from modelfleet_cli.simulate.immutability import refused_update
from modelfleet_cli.simulate.scheduling import (
    Pool,
    place_group,
    pod_templates,
    workload_status,
)

__all__ = ["ApplyError", "HydrationFault", "Pool", "WorkloadCluster"]

CLUSTER_SCOPED = frozenset({"Namespace", "StorageClass", "CustomResourceDefinition"})
LWS_GROUP = LWS_API_VERSION.split("/")[0]
# API groups a cluster serves only once their CRDs are installed (install_crd).
CRD_GROUPS = frozenset({LWS_GROUP, GATEWAY_API_GROUP})


KINDS_IN_CONTROLLER_ORDER = ("Namespace", "PersistentVolumeClaim", "Job")
SECONDS_PER_TICK = 60  # a round of simulate (control_plane.ControlPlane.now)


def _controller_rank(kind: str) -> int:
    return KINDS_IN_CONTROLLER_ORDER.index(kind) if kind in KINDS_IN_CONTROLLER_ORDER else 99


class ApplyError(RuntimeError):
    """The API server refused the object; the message is what kubectl would print."""


Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


def key_of(manifest: dict[str, Any]) -> Key:
    kind = str(manifest.get("kind") or "")
    metadata = mapping_at(manifest, "metadata")
    namespace = "" if kind in CLUSTER_SCOPED else str(metadata.get("namespace") or "default")
    return kind, namespace, str(metadata.get("name") or "")


def describe(key: Key) -> str:
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _has_condition(obj: dict[str, Any], typ: str) -> bool:
    return condition_true(mapping_at(obj, "status"), typ)


def _claims(template: dict[str, Any]) -> list[str]:
    return [
        str(mapping_at(v, "persistentVolumeClaim").get("claimName"))
        for v in list_at(mapping_at(template, "spec"), "volumes")
        if mapping_at(v, "persistentVolumeClaim").get("claimName")
    ]


class WorkloadCluster:
    """One Kubernetes cluster: objects by (kind, namespace, name) and their controllers."""

    def __init__(
        self,
        name: str,
        pools: list[Pool],
        storage_classes: set[str] | None = None,
        *,
        hydration_rounds: int = 2,
    ) -> None:
        self.name = name
        self.pools = pools
        self.hydration_rounds = hydration_rounds
        self.crds: set[str] = set()
        self.objects: dict[Key, dict[str, Any]] = {}
        self.hydration_faults: list[HydrationFault] = []
        self.events: list[str] = []
        self.deleted: list[tuple[Key, dict[str, Any]]] = []  # (key, last state) in order
        self._job_progress: dict[Key, int] = {}
        self._ticks = 0
        self._finished_at: dict[Key, int] = {}  # Job -> the tick it was seen finished
        # Workloads (by uid) whose pods were placed in an earlier tick: started by now.
        self._started: set[str] = set()
        self._serial = 0
        for class_name in sorted(storage_classes or ()):
            self.add_existing(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": {"name": class_name},
                    "provisioner": "simulated.modelfleet.io/rwx",
                }
            )

    # --- the API server -------------------------------------------------------------------

    def get(self, manifest: dict[str, Any]) -> dict[str, Any] | None:
        found = self.objects.get(key_of(manifest))
        return copy.deepcopy(found) if found is not None else None

    def add_existing(self, manifest: dict[str, Any]) -> None:
        """An object that was on the cluster before the simulation (a BYO claim, a class)."""
        obj = copy.deepcopy(manifest)
        key = key_of(obj)
        if key[1] and ("Namespace", "", key[1]) not in self.objects:
            self.add_existing(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": key[1]}}
            )
        self._stamp(obj)
        self.objects[key] = obj

    def _stamp(self, obj: dict[str, Any]) -> None:
        self._serial += 1
        obj.setdefault("metadata", {})["uid"] = f"{self.name}-{self._serial:05d}"

    def apply(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Create or update `manifest` (server-side apply: its fields win, status is kept);
        an update of a field fixed at creation is refused (immutability.py)."""
        kind = str(manifest.get("kind") or "")
        api_version = str(manifest.get("apiVersion") or "")
        key = key_of(manifest)
        if not key[2]:
            raise ApplyError(f"{kind}: metadata.name is required")
        group = api_version.split("/")[0] if "/" in api_version else ""
        if group in CRD_GROUPS and group not in self.crds:
            raise ApplyError(
                f'no matches for kind "{kind}" in version "{api_version}": '
                "ensure CRDs are installed first"
            )
        if key[1]:
            ns = self.objects.get(("Namespace", "", key[1]))
            if ns is None:
                raise ApplyError(f'namespaces "{key[1]}" not found')
            if mapping_at(ns, "metadata").get("deletionTimestamp"):
                raise ApplyError(f'namespace "{key[1]}" is being terminated')
        current = self.objects.get(key)
        if current is not None and (refused := refused_update(current, manifest)):
            raise ApplyError(refused)
        obj = copy.deepcopy(manifest)
        obj.pop("status", None)
        if current is None:
            self._stamp(obj)
        else:
            kept_meta = {
                k: v
                for k, v in mapping_at(current, "metadata").items()
                if k in ("uid", "deletionTimestamp", "finalizers")
            }
            obj.setdefault("metadata", {}).update(kept_meta)
            theirs = mapping_at(mapping_at(current, "metadata"), "annotations")
            if theirs:
                # Annotations another writer set (a hydration Job's progress) stay, as
                # server-side apply keeps fields another manager owns; the applier's win.
                ours = mapping_at(obj["metadata"], "annotations")
                obj["metadata"]["annotations"] = {**theirs, **ours}
            if "status" in current:
                obj["status"] = current["status"]
        self.objects[key] = obj
        return copy.deepcopy(obj)

    def delete(self, manifest: dict[str, Any], *, reason: str = "") -> None:
        key = key_of(manifest)
        obj = self.objects.get(key)
        if obj is None:
            return
        if key[0] == "PersistentVolumeClaim" and self._claim_in_use(key):
            # kubernetes.io/pvc-protection: a claim mounted by a running pod stays
            # Terminating until no pod uses it.
            obj.setdefault("metadata", {})["deletionTimestamp"] = "simulated"
            self.events.append(f"{describe(key)} is Terminating: still mounted by running pods")
            return
        if key[0] == "Namespace":
            for other in [k for k in self.objects if k[1] == key[2]]:
                self._remove(other, f"namespace {key[2]} deleted")
        self._remove(key, reason)

    def _remove(self, key: Key, reason: str) -> None:
        obj = self.objects.pop(key)
        self._job_progress.pop(key, None)
        self._finished_at.pop(key, None)
        self.deleted.append((key, obj))
        self.events.append(f"deleted {describe(key)}" + (f" ({reason})" if reason else ""))

    def storage_classes(self) -> set[str]:
        return {k[2] for k in self.objects if k[0] == "StorageClass"}

    def install_crd(self, group: str) -> None:
        self.crds.add(group)

    # --- the controllers ------------------------------------------------------------------

    def tick(self) -> None:
        """One round of the cluster's controllers, each over its own kind: Namespaces, then
        claims, then Jobs (a claim that binds this round lets its Job's pod start this round,
        whichever of the two was created first), then workloads."""
        self._ticks += 1
        for key, obj in sorted(self.objects.items(), key=lambda kv: _controller_rank(kv[0][0])):
            kind = key[0]
            if kind == "Namespace":
                obj.setdefault("status", {})["phase"] = "Active"
            elif kind == "PersistentVolumeClaim":
                self._bind_claim(key, obj)
            elif kind == "Job":
                self._run_job(key, obj)
        self._collect_finished_jobs()
        self._schedule_workloads()
        self._finalize_claims()
        run_gateway_controller(self.objects)

    def _collect_finished_jobs(self) -> None:
        """Kubernetes' TTL-after-finished controller: a finished Job with
        `ttlSecondsAfterFinished` is deleted (with its pods) that long after it finished."""
        for key, obj in list(self.objects.items()):
            if key[0] != "Job" or not (
                _has_condition(obj, "Complete") or _has_condition(obj, "Failed")
            ):
                continue
            finished = self._finished_at.setdefault(key, self._ticks)
            ttl = mapping_at(obj, "spec").get("ttlSecondsAfterFinished")
            if isinstance(ttl, bool) or not isinstance(ttl, int | float):
                continue  # none: it stays (a number may come through protobuf as a float)
            if (self._ticks - finished) * SECONDS_PER_TICK >= ttl:
                self._remove(key, f"ttlSecondsAfterFinished {int(ttl)} passed")

    def _bind_claim(self, key: Key, obj: dict[str, Any]) -> None:
        status = obj.setdefault("status", {})
        if status.get("phase") == "Bound":
            return
        spec = mapping_at(obj, "spec")
        class_name = spec.get("storageClassName")
        if class_name and class_name in self.storage_classes():
            status.update(
                {
                    "phase": "Bound",
                    "accessModes": list(spec.get("accessModes") or ["ReadWriteMany"]),
                    "capacity": {
                        "storage": mapping_path(spec, "resources", "requests").get("storage", "")
                    },
                }
            )
            return
        status["phase"] = "Pending"
        why = (
            f'storageclass.storage.k8s.io "{class_name}" not found'
            if class_name
            else "no storageClassName and no default StorageClass"
        )
        message = f"{describe(key)}: {why}"
        if not self.events or self.events[-1] != message:
            self.events.append(message)

    def _claims_bound(self, namespace: str, template: dict[str, Any]) -> list[str]:
        """Claims of a pod template that are not Bound (pods stay Pending on them)."""
        unbound = []
        for claim in _claims(template):
            pvc = self.objects.get(("PersistentVolumeClaim", namespace, claim))
            if pvc is None or mapping_at(pvc, "status").get("phase") != "Bound":
                unbound.append(claim)
        return unbound

    def _run_job(self, key: Key, obj: dict[str, Any]) -> None:
        status = obj.setdefault("status", {})
        if _has_condition(obj, "Complete") or _has_condition(obj, "Failed"):
            return
        template = mapping_path(obj, "spec", "template")
        account = mapping_at(template, "spec").get("serviceAccountName")
        if account and ("ServiceAccount", key[1], str(account)) not in self.objects:
            # The ServiceAccount admission plugin refuses the pod; the Job controller retries.
            status["active"] = 0
            message = f'{describe(key)}: pods forbidden: serviceaccount "{account}" not found'
            if not self.events or self.events[-1] != message:
                self.events.append(message)
            return
        if self._claims_bound(key[1], template):
            status["active"] = 0
            return
        status["active"] = 1
        progress = self._job_progress.get(key, 0) + 1
        self._job_progress[key] = progress
        claims = _claims(template)
        claim = self.objects.get(("PersistentVolumeClaim", key[1], claims[0])) if claims else None
        fault = matching_fault(self.hydration_faults, obj)
        if fault is not None:
            # The attempt running while a fault is armed fails this round, fetching nothing
            # more; what it fetched stays, and the next attempt resumes from it.
            report_progress(obj, claim, 0.0)
            self._job_progress[key] = 0
            attempts = fail_attempt(obj, fault)
            self.events.append(f"{describe(key)}: pod attempt {attempts} failed (simulated)")
            return
        report_progress(obj, claim, progress / self.hydration_rounds)  # a share a round
        if progress < self.hydration_rounds:
            return
        self._job_progress[key] = 0
        complete(status)

    def _schedule_workloads(self) -> None:
        """Place every workload's pods on node pools, first created first served, and write
        each workload's status from what fitted."""
        free = {p.name: [p.gpus_per_node] * p.node_count for p in self.pools}
        workloads = [(k, o) for k, o in self.objects.items() if k[0] in ("Deployment", LWS_KIND)]
        for key, obj in sorted(workloads, key=lambda kv: kv[1]["metadata"].get("uid", "")):
            spec = mapping_at(obj, "spec")
            groups = int_at(spec, "replicas", 1)
            templates = pod_templates(key[0], spec)
            ready, why = 0, ""
            unbound = self._claims_bound(key[1], templates[0])
            if unbound:
                why = f"pods Pending: PersistentVolumeClaim {', '.join(unbound)} not bound"
            else:
                for _ in range(groups):
                    placed, why = place_group(self.pools, templates, free)
                    if not placed:
                        break
                    ready += 1
            uid = str(obj["metadata"].get("uid", ""))
            if ready and uid not in self._started:
                # Placed this tick: the pods are still starting (image, weights into GPU
                # memory); ready from the next tick on.
                self._started.add(uid)
                ready = 0
            before = mapping_at(obj, "status").get("readyReplicas")
            obj["status"] = workload_status(key[0], groups, ready, why)
            if before != ready and why and ready < groups:
                self.events.append(f"{describe(key)}: {why}")

    def _claim_in_use(self, key: Key) -> bool:
        for other_key, obj in self.objects.items():
            if other_key[1] != key[1]:
                continue
            running_job = other_key[0] == "Job" and not (
                _has_condition(obj, "Complete") or _has_condition(obj, "Failed")
            )
            if running_job or other_key[0] == "Deployment":
                templates = [mapping_path(obj, "spec", "template")]
            elif other_key[0] == LWS_KIND:
                lwt = mapping_path(obj, "spec", "leaderWorkerTemplate")
                templates = [mapping_at(lwt, "leaderTemplate"), mapping_at(lwt, "workerTemplate")]
            else:
                continue
            if any(key[2] in _claims(t) for t in templates):
                return True
        return False

    def _finalize_claims(self) -> None:
        for key, obj in list(self.objects.items()):
            terminating = mapping_at(obj, "metadata").get("deletionTimestamp")
            if key[0] == "PersistentVolumeClaim" and terminating and not self._claim_in_use(key):
                self._remove(key, "no longer mounted")
