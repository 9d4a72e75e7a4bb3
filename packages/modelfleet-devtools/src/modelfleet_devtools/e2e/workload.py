"""Workload clusters: each its own API server, reached through a ClusterProviderConfig.

A workload cluster here is either a private Kubernetes API (etcd, kube-apiserver, the
controllers that delete namespaces and collect garbage) with a kubelet stand-in, or a real
single-node Kubernetes whose pods run (node.py). The control plane reaches either as it would
a real one: a kubeconfig in a Secret, and a provider-kubernetes ClusterProviderConfig or an
InferenceCluster's `kubeconfigSecretRef` naming it.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from modelfleet_contracts.storage import CSI_DRIVERS

from .crossplane import CROSSPLANE_NAMESPACE
from .kube import ApiError, KubeClient, resource_path, write_kubeconfig
from .kubelet import KubeletStandIn, StandIns
from .kubernetes import Kubernetes, start_kubernetes
from .node import NodeSettings, RealNode, start_node
from .pods import PodRunner
from .processes import Processes, wait_for
from .sources import LoopbackSources

Json = dict[str, Any]
PROVIDER_CONFIGS = resource_path("kubernetes.m.crossplane.io/v1alpha1", "clusterproviderconfigs")
# What a platform team vouches for on a cluster's RWX class; nothing provisions it here.
RWX_PROVISIONER = "rwx.modelfleet.test/stand-in"


def create(client: KubeClient, obj: Json, plural: str) -> None:
    """Create `obj`, or leave the one that exists."""
    meta = obj["metadata"]
    try:
        client.create(resource_path(obj["apiVersion"], plural, meta.get("namespace")), obj)
    except ApiError as error:
        if error.status != 409:
            raise


def ensure_namespace(client: KubeClient, name: str) -> None:
    create(
        client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, "namespaces"
    )


def provider_config_object(name: str, secret: str) -> Json:
    """A ClusterProviderConfig reading its kubeconfig from `secret` in crossplane-system."""
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": name},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "namespace": CROSSPLANE_NAMESPACE,
                    "name": secret,
                    "key": "kubeconfig",
                },
            }
        },
    }


def node_settings(
    inference_cluster: Json, registry: str, sources: LoopbackSources | None
) -> NodeSettings:
    """What a real node needs to hold an InferenceCluster's pools: every pool's node
    selector as its labels, their GPUs (count x nodes, summed) as its `nvidia.com/gpu`, the
    loopback sources as its egress (HF_ENDPOINT, AWS_ENDPOINT_URL), its RWX classes'
    provisioner (a managed class's CSI driver, else RWX_PROVISIONER), and the LeaderWorkerSet
    controller when the cluster asks for LWS to be installed (`spec.leaderWorkerSet`)."""
    spec = inference_cluster.get("spec") or {}
    labels: dict[str, str] = {}
    gpus = 0
    for pool in spec.get("nodePools") or []:
        labels.update(pool.get("nodeSelector") or {})
        gpus += int((pool.get("gpu") or {}).get("count") or 0) * int(pool.get("nodeCount") or 1)
    managed = (spec.get("storage") or {}).get("managed") or {}
    egress = {}
    if sources is not None:
        egress["HF_ENDPOINT"] = _port(sources.hub.endpoint)
        if sources.s3 is not None:
            egress["AWS_ENDPOINT_URL"] = _port(sources.s3.endpoint)
    return NodeSettings(
        inference_cluster["metadata"]["name"], registry, egress=egress, labels=labels,
        extended={"nvidia.com/gpu": str(gpus)} if gpus else {},
        provisioner=CSI_DRIVERS.get(str(managed.get("provisioner")), RWX_PROVISIONER),
        leader_worker_set=bool((spec.get("leaderWorkerSet") or {}).get("install")),
    )  # fmt: skip


def _port(endpoint: str) -> int:
    return int(endpoint.rstrip("/").rpartition(":")[2])


@dataclass
class WorkloadCluster:
    """A workload cluster: played by a kubelet stand-in, or a real node (`node`)."""

    name: str
    kubernetes: Kubernetes
    played_by: KubeletStandIn | None = None
    node: RealNode | None = None

    @property
    def stand_in(self) -> KubeletStandIn:
        if self.played_by is None:
            raise LookupError(f"{self.name} is a real node: no stand-in plays its workloads")
        return self.played_by

    @property
    def client(self) -> KubeClient:
        return self.kubernetes.client

    def kubeconfig_text(self, work: Path) -> str:
        """A kubeconfig with its credentials inlined, as a Secret carries one."""
        config = self.kubernetes.kubeconfig
        embedded = write_kubeconfig(
            work / f"{self.name}.embedded.kubeconfig",
            server=config.server, ca=config.ca, cert=config.cert, key=config.key, embed=True,
        )  # fmt: skip
        return embedded.path.read_text()


class WorkloadClusters:
    """Starts workload clusters on demand and connects them to the control plane."""

    def __init__(
        self,
        processes: Processes,
        bins: Path,
        work: Path,
        control_plane: KubeClient,
        crds: list[Path],
        pods: PodRunner | None = None,
        sources: LoopbackSources | None = None,
    ) -> None:
        """`crds`: the upstream CRDs every workload cluster is given when it starts.
        `pods` and `sources`: hydration pods run as containers staging from `sources`
        (without them every hydration Job is simulated)."""
        self.processes, self.bins, self.work = processes, bins, work
        self.control_plane = control_plane
        self.crds = list(crds)
        self.pods, self.sources = pods, sources
        self.clusters: dict[str, WorkloadCluster] = {}
        self.stand_ins = StandIns()

    def start(
        self, name: str, *, hydrator_containers: bool = True, node: NodeSettings | None = None
    ) -> WorkloadCluster:
        """The workload cluster `name`, started if it is not running: a real node when
        `node` says how, else an API server with a stand-in. Without `hydrator_containers`
        its stand-in simulates every hydration Job (kubelet.py)."""
        if name in self.clusters:
            return self.clusters[name]
        real = None
        if node is not None:
            real = start_node(self.processes, self.bins, self.work / "nodes" / name, node)
            assert real.kubernetes is not None
            kubernetes = real.kubernetes
        else:
            kubernetes = start_kubernetes(
                self.processes, self.bins, self.work / "clusters" / name, name=name
            )
        # The upstream CRDs a cluster's platform team installs (provider-helm, which would
        # install LeaderWorkerSet's, is not among the real binaries): applied from the pinned
        # files, so every composed workload, route and pool meets the real API server.
        for crd in self.crds:
            kubernetes.client.kubectl("apply", "--server-side", "-f", str(crd))
        # An object of such a kind is refused ("no matches for kind") until its CRD is
        # Established, which a busy machine can take seconds to reach (seen in CI).
        if self.crds:
            names = [
                f"crd/{yaml.safe_load(crd.read_text())['metadata']['name']}" for crd in self.crds
            ]
            kubernetes.client.kubectl(
                "wait", "--for=condition=Established", "--timeout=120s", *names, timeout=150
            )
        if real is not None:
            cluster = self.clusters[name] = WorkloadCluster(name, kubernetes, node=real)
            return cluster
        pods = self.pods if hydrator_containers else None
        stand_in = KubeletStandIn(name, kubernetes.client, pods=pods, sources=self.sources)
        cluster = WorkloadCluster(name, kubernetes, stand_in)
        self.clusters[name] = cluster
        self.stand_ins.add(cluster.stand_in)
        return cluster

    def kubeconfig_secret(
        self, cluster: WorkloadCluster, namespace: str, name: str, key: str
    ) -> None:
        folder = self.work / "clusters" / cluster.name
        folder.mkdir(parents=True, exist_ok=True)  # a real node keeps its files elsewhere
        text = cluster.kubeconfig_text(folder)
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace},
            "data": {key: base64.b64encode(text.encode()).decode()},
        }
        ensure_namespace(self.control_plane, namespace)
        # Replaced, not kept: a cluster of the same name from an earlier fleet is gone.
        self.control_plane.kubectl(
            "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=yaml.safe_dump(secret)
        )

    def provider_config(self, cluster: WorkloadCluster, name: str) -> None:
        """A ClusterProviderConfig `name` reaching `cluster` (the platform team's part)."""
        secret = f"{name}-kubeconfig"
        self.kubeconfig_secret(cluster, CROSSPLANE_NAMESPACE, secret, "kubeconfig")
        create(self.control_plane, provider_config_object(name, secret), "clusterproviderconfigs")

    def prepare(self, inference_cluster: Json, *, real_node: bool = False) -> WorkloadCluster:
        """Everything an InferenceCluster expects to exist before it is applied; with
        `real_node`, a real node holding its pools (node_settings)."""
        spec = inference_cluster.get("spec") or {}
        node = None
        if real_node:
            if self.sources is None:
                raise ValueError("a real node needs the loopback sources (its registry)")
            node = node_settings(inference_cluster, self.sources.registry, self.sources)
        cluster = self.start(inference_cluster["metadata"]["name"], node=node)
        connection = spec.get("connection") or {}
        if connection.get("providerConfigName"):
            self.provider_config(cluster, connection["providerConfigName"])
        ref = connection.get("kubeconfigSecretRef")
        if ref:
            self.kubeconfig_secret(
                cluster, ref["namespace"], ref["name"], ref.get("key", "kubeconfig")
            )
        class_name = (spec.get("storage") or {}).get("storageClassName")
        if class_name:
            storage_class = {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": class_name},
                "provisioner": RWX_PROVISIONER,
            }
            create(cluster.client, storage_class, "storageclasses")
        return cluster

    def seed(self, cluster: str, objects: list[Json]) -> None:
        """Objects a cluster holds before the fleet is applied (an example's simulation.yaml)."""
        client = self.clusters[cluster].client
        for obj in objects:
            namespace = obj["metadata"].get("namespace")
            if namespace:
                ensure_namespace(client, namespace)
            client.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(obj))

    def disconnect(self, name: str) -> None:
        """The cluster's API server goes away (its data stays in its etcd). On a real node
        everything else runs on: the kubelet keeps the pods running, kube-proxy and CoreDNS
        keep serving what they last saw."""
        cluster = self.clusters[name]
        if cluster.node is not None:
            cluster.node.stop_part("kube-apiserver")
            return
        self.stand_ins.remove(name)
        self.processes.named(f"{name}-kube-apiserver").stop()

    def reconnect(self, name: str) -> None:
        """The same API server comes back on the same address, holding what it held."""
        cluster = self.clusters[name]
        if cluster.node is not None:
            cluster.node.start_part("kube-apiserver")
        else:
            self.processes.restart(self.processes.named(f"{name}-kube-apiserver"))
        wait_for(
            lambda: cluster.client.request("GET", "/readyz").get("text") == "ok",
            what=f"{name} kube-apiserver back",
            timeout=90,
        )
        if cluster.node is None:
            self.stand_ins.add(cluster.stand_in)

    def discard(self, name: str) -> None:
        """Stop a workload cluster and forget it (the next fleet starts a fresh one)."""
        cluster = self.clusters.pop(name, None)
        if cluster is None:
            return
        if cluster.node is not None:
            problems = cluster.node.stop()
            if problems:
                raise RuntimeError(f"{name}: the node left {problems}")
            return
        self.stand_ins.remove(name)
        if self.pods is not None:  # its pods and its volumes go with it
            self.pods.discard(name, list(cluster.stand_in.containers))
        names = {f"{name}-{part}" for part in ("etcd", "kube-apiserver", "kube-controller-manager")}
        self.processes.kill_together([p for p in self.processes.started if p.name in names])

    def stop(self) -> None:
        for cluster in self.clusters.values():
            if cluster.node is not None:
                cluster.node.stop()
        self.stand_ins.stop()
        if self.pods is not None:
            self.pods.stop_all()
        if self.sources is not None:
            self.sources.stop()
