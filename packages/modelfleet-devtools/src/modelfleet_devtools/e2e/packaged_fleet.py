"""A fleet on the packaged control plane (packaged.py) that gives its faults something to lose:
InferenceClusters whose workload cluster is the control-plane cluster itself.

The ClusterProviderConfig `control-plane` reads a kubeconfig Secret for the node's own API
server at the node's address, which the provider's pod reaches from the pod network. Each
InferenceCluster's reconcile is a call to the compose-inference-cluster pod and, for each
composed Object, work of the provider's pod on a real API server: the workload namespace, the
hydrator's ServiceAccount, Role and RoleBinding made there, the RWX StorageClass observed.

What a fault must not lose is `composed()`: each Object on the control plane and each thing
they made in the workload namespaces, by uid (a deleted and remade one counts as lost).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from .crossplane import CROSSPLANE_NAMESPACE
from .fleet import GROUP_VERSION
from .kube import resource_path
from .packaged import PackagedPlane
from .workload import RWX_PROVISIONER, WorkloadCluster, provider_config_object

Json = dict[str, Any]
SELF = "control-plane"  # the ClusterProviderConfig and its Secret
RWX_CLASS = "modelfleet-rwx"
INFERENCE_CLUSTERS = resource_path(GROUP_VERSION, "inferenceclusters")
OBJECTS = resource_path("kubernetes.m.crossplane.io/v1alpha1", "objects")
# What an InferenceCluster's Objects make in its workload namespace.
WORKLOAD_KINDS = (
    ("v1", "serviceaccounts"),
    ("rbac.authorization.k8s.io/v1", "roles"),
    ("rbac.authorization.k8s.io/v1", "rolebindings"),
)
POKED = "modelfleet.test/poked"  # an annotation whose change makes Crossplane reconcile an XR


def workload_namespace(xr: str) -> str:
    return f"{xr}-workloads"


def inference_cluster(name: str) -> Json:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": {
            "connection": {"providerConfigName": SELF},
            "workloadNamespace": workload_namespace(name),
            "storage": {"storageClassName": RWX_CLASS},
        },
    }


def connect_to_itself(plane: PackagedPlane) -> None:
    """The Secret, ClusterProviderConfig and RWX StorageClass the fleet's XRs need."""
    assert plane.node.kubernetes is not None
    itself = WorkloadCluster(SELF, plane.node.kubernetes)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SELF, "namespace": CROSSPLANE_NAMESPACE},
        "stringData": {"kubeconfig": itself.kubeconfig_text(plane.work)},
    }
    storage_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": RWX_CLASS},
        "provisioner": RWX_PROVISIONER,  # no claim is made: nothing needs to provision it
    }
    apply(plane, [secret, storage_class, provider_config_object(SELF, SELF)])


def apply(plane: PackagedPlane, documents: list[Json]) -> None:
    plane.client.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(documents))


def conditions(obj: Json | None) -> dict[str, str]:
    return {
        c["type"]: c["status"] for c in ((obj or {}).get("status") or {}).get("conditions") or []
    }


def xr_conditions(plane: PackagedPlane, name: str) -> dict[str, str]:
    return conditions(
        plane.client.get(resource_path(GROUP_VERSION, "inferenceclusters", name=name))
    )


def composed(plane: PackagedPlane) -> dict[str, str]:
    """Every composed Object and what the Objects made on the cluster: `kind/name` -> uid."""
    found = {f"Object/{o['metadata']['name']}": o["metadata"]["uid"]
             for o in plane.client.list(OBJECTS)}  # fmt: skip
    for xr in plane.client.list(INFERENCE_CLUSTERS):
        namespace = workload_namespace(xr["metadata"]["name"])
        made = plane.client.get(resource_path("v1", "namespaces", name=namespace))
        if made:
            found[f"Namespace/{namespace}"] = made["metadata"]["uid"]
        for api, plural in WORKLOAD_KINDS:
            for item in plane.client.list(resource_path(api, plural, namespace)):
                found[f"{plural}/{namespace}/{item['metadata']['name']}"] = item["metadata"]["uid"]
    return found


def lost(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """What of `before` is gone from `now`, or was remade (another uid)."""
    return [key for key, uid in sorted(before.items()) if now.get(key) != uid]


def package_pods(plane: PackagedPlane, label: str, value: str) -> list[Json]:
    """The pods of one package's Deployment (label pkg.crossplane.io/function=NAME, say)."""
    pods = plane.client.list(resource_path("v1", "pods", CROSSPLANE_NAMESPACE))
    return [p for p in pods if p["metadata"].get("labels", {}).get(label) == value]


def serving_pod(plane: PackagedPlane, label: str, value: str) -> Json | None:
    """The one pod of the package that runs with every container ready, not terminating."""
    serving = [
        p for p in package_pods(plane, label, value)
        if not p["metadata"].get("deletionTimestamp") and p["status"].get("phase") == "Running"
        and all(s.get("ready") for s in p["status"].get("containerStatuses") or [{}])
    ]  # fmt: skip
    return serving[0] if len(serving) == 1 else None


def force_delete(plane: PackagedPlane, pod: Json) -> None:
    plane.client.kubectl(
        "delete", "pod", "-n", CROSSPLANE_NAMESPACE, pod["metadata"]["name"],
        "--grace-period=0", "--force", "--wait=false",
    )  # fmt: skip


@dataclass
class Watch:
    """Polled while a fault plays: nothing of `before` lost, the `steady` XRs never un-Ready.
    Each poll changes an annotation on every XR, so that each is reconciled (its Function and
    the provider called) all through the fault, not only at its poll interval."""

    plane: PackagedPlane
    before: dict[str, str]
    steady: list[str]
    losses: list[str] = field(default_factory=list)
    unready: list[str] = field(default_factory=list)
    unsynced: set[str] = field(default_factory=set)  # reconciles that failed (recorded)
    polls: int = 0

    def poll(self) -> bool:
        """One look; True once something was lost or went un-Ready (the wait can end)."""
        self.plane.node.check_alive()
        self.polls += 1
        self.losses = lost(self.before, composed(self.plane))
        for xr in self.plane.client.list(INFERENCE_CLUSTERS):
            name = xr["metadata"]["name"]
            now = conditions(xr)
            if name in self.steady and now.get("Ready") != "True":
                self.unready.append(f"{name} at poll {self.polls}: {xr.get('status')}")
            if now.get("Synced") != "True":
                self.unsynced.add(name)
            with contextlib.suppress(Exception):  # an XR deleted meanwhile: nothing to poke
                self.plane.client.merge_patch(
                    resource_path(GROUP_VERSION, "inferenceclusters", name=name),
                    {"metadata": {"annotations": {POKED: str(self.polls)}}},
                )
        return bool(self.losses or self.unready)

    def problems(self) -> list[str]:
        return [f"lost: {k}" for k in self.losses] + [f"un-Ready: {u}" for u in self.unready]


def push_rebuilt(crane: Path, reference: str, version: str) -> str:
    """The package at `reference` pushed again as `version`: the same layers under another
    image config (its version label), so another digest, as a rebuilt release has."""
    target = f"{reference.rpartition(':')[0]}:{version}"
    done = subprocess.run(
        [str(crane), "mutate", "--insecure", "--label",
         f"org.opencontainers.image.version={version}", "-t", target, reference],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"crane mutate {reference}: {done.stderr.strip()}")
    return target


class PodWatch:
    """`kubectl get pods -w` on one package's pods, as an operator watches a rollout: every
    state each pod went through, its last one included (a pod deleted after it exited is gone
    from a later GET)."""

    def __init__(self, plane: PackagedPlane, selector: str, out: Path) -> None:
        self.out = out
        client = plane.client
        self._stream = out.open("w")
        self._watching = subprocess.Popen(
            [str(client.kubectl_binary), "--kubeconfig", str(client.config.path), "get", "pods",
             "-n", CROSSPLANE_NAMESPACE, "-l", selector, "-w", "-o", "json"],
            stdout=self._stream, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def stop(self) -> list[Json]:
        """Stop watching; every pod state seen, in order."""
        self._watching.terminate()
        self._watching.wait(timeout=30)
        self._stream.close()
        text, seen, decoder, at = self.out.read_text(), [], json.JSONDecoder(), 0
        while at < len(text):
            if text[at].isspace():
                at += 1
                continue
            try:
                obj, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                break  # kubectl's words, or a document cut short when it was stopped
            seen.append(obj)
        return seen


def stopped(states: list[Json], uid: str) -> tuple[Json, float]:
    """How pod `uid`'s package-runtime container ended (its last `terminated` state seen, {}
    if none was) and the seconds from its deletion being asked for (its deletionTimestamp less
    the grace period it was given) to the container's finishing (-1 if either is unseen)."""
    ended: Json = {}
    asked: datetime | None = None
    for pod in states:
        meta = pod.get("metadata") or {}
        if meta.get("uid") != uid:
            continue
        if asked is None and meta.get("deletionTimestamp"):
            deadline = datetime.fromisoformat(meta["deletionTimestamp"])
            asked = deadline - timedelta(seconds=int(meta.get("deletionGracePeriodSeconds") or 0))
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            terminated = (status.get("state") or {}).get("terminated")
            if status.get("name") == "package-runtime" and terminated:
                ended = terminated
    if asked is None or not ended.get("finishedAt"):
        return ended, -1.0
    return ended, (datetime.fromisoformat(ended["finishedAt"]) - asked).total_seconds()


def warnings_since(plane: PackagedPlane, since: datetime) -> list[str]:
    """The Warning events on XRs and Objects since `since`, as `kind/name reason: message`:
    what a failed Function call or provider outage left for an operator to read."""
    found = []
    for event in plane.client.list("/api/v1/events"):
        involved = event.get("involvedObject") or {}
        stamp = event.get("lastTimestamp") or event.get("eventTime") or ""
        if (
            event.get("type") == "Warning"
            and involved.get("kind") in ("InferenceCluster", "Object")
            and stamp
            and datetime.fromisoformat(stamp) >= since
        ):
            message = str(event.get("message") or "")[:160]
            found.append(
                f"{involved['kind']}/{involved.get('name')} {event.get('reason')}: {message}"
            )
    return sorted(set(found))
