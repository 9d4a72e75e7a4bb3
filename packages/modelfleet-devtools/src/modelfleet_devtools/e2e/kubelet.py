"""The kubelet stand-in: what the nodes and the workload controllers of a cluster would do.

No kubelet, scheduler, Job, Deployment or LeaderWorkerSet controller runs here, so each pass
plays them on one workload API server, with the simulator's own model of them (the status a Job
controller writes when an attempt ends, the figures the hydrator reports, the status a
Deployment controller writes), so `modelfleet simulate` and the real run share one story:

- a claim binds once its StorageClass exists (as a provisioner would), at its requested size;
- a hydration Job reports progress on its annotations over a few passes, then completes, or
  fails attempts while a fault matches its cache (no pod runs while its ServiceAccount does
  not exist; kube-controller-manager's TTL controller deletes it once finished);
- a Deployment or LeaderWorkerSet becomes Available with all its replicas, unless the cluster
  is told it has no room.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from modelfleet_cli.simulate import hydration
from modelfleet_cli.simulate.scheduling import workload_status
from modelfleet_contracts.hydration import BYTES_DONE

from .kube import ApiError, KubeClient, resource_path

Json = dict[str, Any]
PASSES_TO_HYDRATE = 3


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _conditions(obj: Json) -> dict[str, str]:
    return {
        c.get("type", ""): c.get("status", "")
        for c in (obj.get("status") or {}).get("conditions") or []
    }


def _bytes_done(job: Json) -> int:
    done = str((job["metadata"].get("annotations") or {}).get(BYTES_DONE, "0"))
    return int(done) if done.isdigit() else 0


def _path(obj: Json, api_version: str, plural: str) -> str:
    meta = obj["metadata"]  # items of a list carry no apiVersion of their own
    return resource_path(api_version, plural, meta.get("namespace"), meta["name"])


@dataclass
class KubeletStandIn:
    """Plays one workload cluster's nodes and controllers, a pass at a time."""

    name: str
    client: KubeClient
    room: bool = True  # False: no node has room, so no workload becomes Available
    faults: list[hydration.HydrationFault] = field(default_factory=list)
    passes: dict[str, int] = field(default_factory=dict)  # Job uid -> passes it has run
    # What was downloaded: every hydration Job run (uid -> namespace/name), and the bytes its
    # hydrator reported fetching, summed over every Job.
    hydrations: dict[str, str] = field(default_factory=dict)
    bytes_fetched: int = 0
    errors: list[str] = field(default_factory=list)

    def step(self) -> None:
        for act in (self._bind_claims, self._run_jobs, self._roll_out):
            try:
                act()
            except ApiError as error:
                if error.status not in (404, 409):  # gone or changed meanwhile: next pass
                    self.errors.append(f"{act.__name__}: {error}")
            except Exception as error:  # a stand-in bug: keep it for the test to report
                self.errors.append(f"{act.__name__}: {error!r}")

    def _bind_claims(self) -> None:
        classes = {
            c["metadata"]["name"]
            for c in self.client.list(resource_path("storage.k8s.io/v1", "storageclasses"))
        }
        for claim in self.client.list(resource_path("v1", "persistentvolumeclaims")):
            spec, status = claim.get("spec") or {}, claim.get("status") or {}
            if status.get("phase") == "Bound":
                continue
            if spec.get("storageClassName") and spec["storageClassName"] not in classes:
                continue  # no provisioner answers for a class that does not exist
            request = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
            self.client.merge_patch(
                _path(claim, "v1", "persistentvolumeclaims"),
                {
                    "status": {
                        "phase": "Bound",
                        "accessModes": spec.get("accessModes") or ["ReadWriteMany"],
                        "capacity": {"storage": request},
                    }
                },
                status=True,
            )

    def _run_jobs(self) -> None:
        claims = {
            (c["metadata"]["namespace"], c["metadata"]["name"]): c
            for c in self.client.list(resource_path("v1", "persistentvolumeclaims"))
        }
        accounts = {
            (a["metadata"]["namespace"], a["metadata"]["name"])
            for a in self.client.list(resource_path("v1", "serviceaccounts"))
        }
        for job in self.client.list(resource_path("batch/v1", "jobs")):
            if {"Complete", "Failed"} & {k for k, v in _conditions(job).items() if v == "True"}:
                continue
            account = job["spec"]["template"]["spec"].get("serviceAccountName")
            if account and (job["metadata"]["namespace"], account) not in accounts:
                continue  # the ServiceAccount admission plugin refuses its pod: none runs
            path = _path(job, "batch/v1", "jobs")
            meta = job["metadata"]
            self.hydrations.setdefault(meta["uid"], f"{meta['namespace']}/{meta['name']}")
            status = dict(job.get("status") or {})
            status.setdefault("startTime", _now())
            fault = hydration.matching_fault(self.faults, job)
            if fault is not None:
                hydration.fail_attempt(job, fault)
                failed = job["status"]
                status.update(failed)
                if "Failed" in _conditions(job):
                    status["conditions"] = [
                        {**c, "lastTransitionTime": _now()} for c in failed["conditions"]
                    ]
                    status.pop("active", None)
                self.client.merge_patch(path, {"status": status}, status=True)
                continue
            uid = job["metadata"]["uid"]
            self.passes[uid] = self.passes.get(uid, 0) + 1
            claim = next(
                (
                    claims.get(
                        (job["metadata"]["namespace"], v["persistentVolumeClaim"]["claimName"])
                    )
                    for v in (job["spec"]["template"]["spec"].get("volumes") or [])
                    if "persistentVolumeClaim" in v
                ),
                None,
            )
            before = _bytes_done(job)
            hydration.report_progress(job, claim, self.passes[uid] / PASSES_TO_HYDRATE)
            self.bytes_fetched += _bytes_done(job) - before
            self.client.merge_patch(
                path, {"metadata": {"annotations": job["metadata"]["annotations"]}}
            )
            if self.passes[uid] < PASSES_TO_HYDRATE:
                self.client.merge_patch(path, {"status": {**status, "active": 1}}, status=True)
                continue
            done: Json = {}
            hydration.complete(done)
            now = _now()
            done["conditions"] = [{**c, "lastTransitionTime": now} for c in done["conditions"]]
            done["active"] = 0
            self.client.merge_patch(
                path, {"status": {**status, **done, "completionTime": now}}, status=True
            )

    def _roll_out(self) -> None:
        for plural, api in (
            ("deployments", "apps/v1"),
            ("leaderworkersets", "leaderworkerset.x-k8s.io/v1"),
        ):
            try:
                workloads = self.client.list(resource_path(api, plural))
            except ApiError as error:
                if error.status == 404:  # no LeaderWorkerSet CRD on this cluster
                    continue
                raise
            kind = "LeaderWorkerSet" if plural == "leaderworkersets" else "Deployment"
            for workload in workloads:
                groups = int((workload.get("spec") or {}).get("replicas", 1))
                ready = groups if self.room else 0
                why = "" if self.room else "no node in the pool has room"
                wanted = workload_status(kind, groups, ready, why)
                status = workload.get("status") or {}
                generation = workload["metadata"].get("generation", 1)
                if (
                    status.get("replicas") == groups
                    and status.get("readyReplicas", 0) == ready
                    and status.get("observedGeneration", generation) == generation
                ):
                    continue
                now = _now()
                for condition in wanted["conditions"]:
                    condition["lastTransitionTime"] = now
                    condition["lastUpdateTime"] = now
                if plural == "leaderworkersets":
                    # metav1.Condition: no lastUpdateTime, and a message even when empty.
                    for condition in wanted["conditions"]:
                        condition.pop("lastUpdateTime")
                        condition.setdefault("message", "")
                    wanted.pop("availableReplicas", None)
                self.client.merge_patch(
                    _path(workload, api, plural),
                    {"status": {**wanted, "observedGeneration": generation}},
                    status=True,
                )


class StandIns:
    """Runs every workload cluster's stand-in on one background thread, a pass a second."""

    def __init__(self) -> None:
        self.clusters: dict[str, KubeletStandIn] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kubelet-stand-in", daemon=True)
        self._lock = threading.Lock()

    def add(self, stand_in: KubeletStandIn) -> None:
        with self._lock:
            self.clusters[stand_in.name] = stand_in
        if not self._thread.is_alive():
            self._thread.start()

    def remove(self, name: str) -> None:
        with self._lock:
            self.clusters.pop(name, None)

    def errors(self) -> list[str]:
        with self._lock:
            return [f"{c.name}: {e}" for c in self.clusters.values() for e in c.errors]

    def _loop(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                clusters = list(self.clusters.values())
            for cluster in clusters:
                cluster.step()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
