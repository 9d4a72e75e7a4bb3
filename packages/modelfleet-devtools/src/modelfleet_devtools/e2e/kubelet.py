"""The kubelet stand-in: what the nodes and the workload controllers of a cluster would do.

No kubelet, scheduler, Job, Deployment or LeaderWorkerSet controller runs here, so each pass
plays them on one workload API server, with the simulator's own model of them (the status a Job
controller writes when an attempt ends, the figures the hydrator reports, the status a
Deployment controller writes), so `modelfleet simulate` and the real run share one story:

- a claim binds once its StorageClass exists (as a provisioner would), at its requested size;
- a hydration Job's pod runs as a real container of the hydrator image (pods.py) when its
  image was published here and its source is a loopback one (sources.py): the hydrator stages
  into the claim's directory and reports its progress on the Job itself, and the Job's status
  follows the container's exit code, a failed attempt's pod replaced on the next pass until
  the backoff limit. Any other hydration Job (a source no loopback serves, an image nothing
  published here) reports the simulator's progress over a few passes, then completes; the
  examples and scenarios allow none (`simulated` says why, per Job). No pod runs while its
  ServiceAccount does not exist; kube-controller-manager's TTL controller deletes a Job once
  finished;
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
from .pods import NotReady, PodRunner
from .sources import LoopbackSources

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


def _failed(job: Json, status: Json) -> Json:
    """`status` updated with the failed attempt `job`'s status records (Failed past the
    backoff limit, its conditions stamped now)."""
    failed = job["status"]
    status = {**status, **failed}
    if "Failed" in _conditions(job):
        status["conditions"] = [{**c, "lastTransitionTime": _now()} for c in failed["conditions"]]
        status.pop("active", None)
    return status


def _path(obj: Json, api_version: str, plural: str) -> str:
    meta = obj["metadata"]  # items of a list carry no apiVersion of their own
    return resource_path(api_version, plural, meta.get("namespace"), meta["name"])


@dataclass
class KubeletStandIn:
    """Plays one workload cluster's nodes and controllers, a pass at a time."""

    name: str
    client: KubeClient
    room: bool = True  # False: no node has room, so no workload becomes Available
    passes: dict[str, int] = field(default_factory=dict)  # Job uid -> passes it has run
    # What was downloaded: every hydration Job run (uid -> namespace/name), and the bytes its
    # hydrator reported fetching, summed over every Job.
    hydrations: dict[str, str] = field(default_factory=dict)
    bytes_fetched: int = 0
    errors: list[str] = field(default_factory=list)
    # Real pods (None: every hydration Job is simulated) and the sources they stage from.
    pods: PodRunner | None = None
    sources: LoopbackSources | None = None
    containers: dict[str, str] = field(default_factory=dict)  # container -> its Job's uid
    simulated: dict[str, str] = field(default_factory=dict)  # Job uid -> why no pod ran
    _bytes_at_start: dict[str, int] = field(default_factory=dict)  # container -> BYTES_DONE

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
        jobs = self.client.list(resource_path("batch/v1", "jobs"))
        self._kill_orphans({j["metadata"]["uid"] for j in jobs})
        for job in jobs:
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
            if self._runs_pod(job):
                self._run_pod(job, path, status)
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

    def _runs_pod(self, job: Json) -> bool:
        """Whether `job`'s pod runs as a container (else the Job is simulated; why is kept)."""
        if self.pods is None or self.sources is None:
            return False
        (container,) = job["spec"]["template"]["spec"]["containers"]
        argv = [str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]]
        why = self.pods.unpublished(container["image"]) or self.sources.served_by(argv)
        if why:
            self.simulated[job["metadata"]["uid"]] = why
        return not why

    def container_of(self, job_uid: str) -> str | None:
        """The running container of a Job's current attempt, if any."""
        return next((c for c, uid in self.containers.items() if uid == job_uid), None)

    def _run_pod(self, job: Json, path: str, status: Json) -> None:
        """Start the pod of the Job's next attempt, or record how its running one ended."""
        assert self.pods is not None
        meta = job["metadata"]
        attempt = int(status.get("failed", 0)) + 1
        name = f"hydrate-{self.name}-{meta['uid'][:8]}-{attempt}"
        if name not in self.pods.running:
            try:
                self.pods.start(
                    self.name, self.client, job["spec"]["template"], meta["namespace"], name
                )
            except NotReady:
                return  # as a kubelet waits for a Secret the pod reads
            self.containers[name] = meta["uid"]
            self._bytes_at_start[name] = _bytes_done(job)
            self.client.merge_patch(path, {"status": {**status, "active": 1}}, status=True)
            return
        code = self.pods.running[name].exit_code()
        if code is None:
            return
        reported = self.client.get(path) or job  # the hydrator's own annotations
        self.bytes_fetched += max(0, _bytes_done(reported) - self._bytes_at_start.pop(name, 0))
        if code == 0:
            done: Json = {}
            hydration.complete(done)
            now = _now()
            done["conditions"] = [{**c, "lastTransitionTime": now} for c in done["conditions"]]
            update = {**status, **done, "completionTime": now}
        else:
            hydration.attempt_failed(job)
            update = {**_failed(job, status), "active": 0}
        self.client.merge_patch(path, {"status": update}, status=True)
        self.pods.running.pop(name, None)
        self.containers.pop(name, None)

    def _kill_orphans(self, uids: set[str]) -> None:
        """Kill the containers of Jobs that are gone (their pods go with them)."""
        if self.pods is None:
            return
        for name, uid in list(self.containers.items()):
            if uid not in uids:
                pod = self.pods.running.pop(name, None)
                if pod is not None and pod.exit_code() is None:
                    self.pods.kill(name)
                self.containers.pop(name, None)

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
