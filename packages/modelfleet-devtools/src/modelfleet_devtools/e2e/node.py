"""A real single-node Kubernetes workload cluster, in namespaces the suite makes and removes.

Inside a network and mount namespace of its own (node_namespaces.py): etcd, kube-apiserver,
kube-controller-manager (every controller), kube-scheduler, containerd, the kubelet,
kube-proxy and CoreDNS, each a process of `Processes` with its log named after the cluster and
the part. The control plane on the host reaches the API server at the node's address on the
veth pair; the node reaches the suite's loopback registry and Hub through forwarders on the
host end. containerd pulls the sandbox and the release's images through registry mirrors of
the loopback registry (node_images.py); pods reach the Hub through the egress policy
(node_egress.py). The ReadWriteMany classes are served by the hostPath provisioner
(provisioner.py), the one stand-in.

`stop()` removes everything, however far `start_node` got: the processes, every process left
in the mount namespace (containerd's shims and the pods), its mounts, the namespaces, the
cgroups and containerd's state.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import node_cgroups, node_config, node_images, node_lws
from .forward import Forwarder, forward
from .kube import KubeClient, resource_path
from .kubernetes import Kubernetes, Placement, start_kubernetes
from .node_egress import egress_policy
from .node_namespaces import NodeNamespaces, make_namespaces
from .processes import Process, Processes, wait_for
from .provisioner import HostPathProvisioner

NODE_PARTS = ("containerd", "kube-scheduler", "kubelet", "kube-proxy", "coredns")
CONTROL_PARTS = ("etcd", "kube-apiserver", "kube-controller-manager")
READY_TIMEOUT = 120.0
API_PORT_NAME = "https"


class NodeFailed(RuntimeError):
    """A part of the node did not come up: says which, and the log to read."""


@dataclass
class NodeSettings:
    """What a node is given: its cluster name, the loopback registry, the loopback services
    its pods reach (port -> env variable naming their URL), labels and extended resources."""

    name: str
    registry: str  # 127.0.0.1:PORT
    egress: dict[str, int] = field(default_factory=dict)  # HF_ENDPOINT -> Hub's port
    labels: dict[str, str] = field(default_factory=dict)
    extended: dict[str, str] = field(default_factory=dict)  # nvidia.com/gpu -> "2"
    provisioner: str = ""  # the RWX classes' provisioner name it serves
    leader_worker_set: bool = False  # runs the LeaderWorkerSet controller (node_lws.py)


@dataclass
class RealNode:
    settings: NodeSettings
    work: Path
    processes: Processes
    namespaces: NodeNamespaces | None = None
    kubernetes: Kubernetes | None = None
    forwarders: list[Forwarder] = field(default_factory=list)
    provisioner: HostPathProvisioner | None = None
    cgroup_root: str = ""
    started: list[Process] = field(default_factory=list)

    @property
    def client(self) -> KubeClient:
        assert self.kubernetes is not None, "the node's API server is not started"
        return self.kubernetes.client

    @property
    def layout(self) -> node_config.NodeLayout:
        return node_config.NodeLayout(self.work)

    @property
    def node_ip(self) -> str:
        assert self.namespaces is not None
        return str(self.namespaces.node_ip)

    def log(self, part: str) -> Path:
        return self.processes.log_dir / f"{self.settings.name}-{part}.log"

    def check_alive(self) -> None:
        """Fail naming the part that died and its log."""
        dead = [p for p in self.started if not p.alive()]
        if dead:
            raise NodeFailed(
                "; ".join(f"{p.name} exited (log {p.log}):\n{p.tail(15)}" for p in dead)
            )

    def in_cluster(self, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run `argv` in the node's network (a client inside the cluster network: it reaches
        Service addresses through kube-proxy and resolves names through CoreDNS)."""
        assert self.namespaces is not None
        return subprocess.run(
            self.namespaces.enter(argv), capture_output=True, text=True, timeout=timeout
        )

    def restart(self, part: str) -> None:
        """Stop one of the node's parts (SIGTERM, as systemd stops a unit) and start it again
        with the same flags. containerd's shims and the pods are not in its process group and
        keep running, as under systemd's `KillMode=process`."""
        self.start_part(part)  # which stops it first

    def stop_part(self, part: str) -> None:
        """Stop one of the node's parts (SIGTERM) until `start_part`: the others, the pods
        among them, run on (the kube-apiserver stopped: a cluster the control plane lost)."""
        self._part(part).stop()

    def start_part(self, part: str) -> None:
        """Start a part again with the same flags (and ports), stopping it first if it runs."""
        old = self._part(part)
        self.started[self.started.index(old)] = self.processes.restart(old)

    def _part(self, part: str) -> Process:
        return next(p for p in self.started if p.name == f"{self.settings.name}-{part}")

    def running_tasks(self) -> set[str]:
        """The ids of the containers containerd runs now, as `ctr tasks ls` gives them (its
        own state, recovered from the shims after a restart)."""
        done = self.in_cluster([
            "ctr", "--address", str(self.layout.containerd_socket), "--namespace", "k8s.io",
            "tasks", "ls", "--quiet",
        ])  # fmt: skip
        if done.returncode != 0:
            raise NodeFailed(f"ctr tasks ls: {done.stderr.strip()}")
        return set(done.stdout.split())

    def kill_container(self, pod: dict[str, object], container: int = 0) -> set[int]:
        """SIGKILL every process of one running container of `pod` (as the kernel's OOM
        killer or a crash ends it); the pids killed."""
        meta, status = pod["metadata"], pod["status"]
        assert isinstance(meta, dict) and isinstance(status, dict)
        container_id = status["containerStatuses"][container]["containerID"].partition("://")[2]
        pids = node_cgroups.container_members(self.cgroup_root, meta["uid"], container_id)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return pids

    def stop(self) -> list[str]:
        """Remove everything the node made; what could not be removed (empty when clean)."""
        problems: list[str] = []
        if self.provisioner is not None:
            self.provisioner.stop()
        # The kubelet first, so that it does not restart what goes next; then the rest.
        mine = [p for p in self.processes.started if p in self.started]
        self.processes.retire(list(reversed(mine)))
        if self.namespaces is not None:
            problems += self.namespaces.remove()
        for forwarder in self.forwarders:
            forwarder.stop()
        if self.cgroup_root:
            stuck = node_cgroups.kill_members(self.cgroup_root)
            problems += [f"pod process {pid} would not stop" for pid in sorted(stuck)]
            left = node_cgroups.remove_root(self.cgroup_root)
            problems += [f"cgroup {c} not removed" for c in left]
        # containerd's state (root, state) and the volumes go with the work folder's node
        # part; the logs stay, under the Processes' log folder.
        shutil.rmtree(self.work, ignore_errors=True)
        return problems


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _wait(node: RealNode, part: str, probe: Callable[[], object], timeout: float) -> None:
    """Wait for `probe`; fail at once if a part of the node died, else after `timeout`."""
    died: list[NodeFailed] = []

    def dead_or(probe: Callable[[], object] = probe) -> object:
        try:
            node.check_alive()
        except NodeFailed as error:
            died.append(error)
            return True
        return probe()

    try:
        wait_for(dead_or, what=f"{node.settings.name} {part}", timeout=timeout, every=0.5)
    except TimeoutError as error:
        raise NodeFailed(f"{error}; its log: {node.log(part)}") from None
    if died:
        raise died[0]


def start_node(processes: Processes, bins: Path, work: Path, settings: NodeSettings) -> RealNode:
    """Bring the node up, Ready; removed again if any part fails (the error names its log)."""
    node = RealNode(settings, work, processes)
    try:
        _bring_up(node, bins)
        return node
    except BaseException:
        node.stop()
        raise


def _bring_up(node: RealNode, bins: Path) -> None:
    settings, layout = node.settings, node.layout
    # Unique per cluster name (eks-dev and eks-us-west share their first four letters).
    short = f"mf{os.getpid() % 100000}{hashlib.sha256(settings.name.encode()).hexdigest()[:4]}"
    namespaces = node.namespaces = make_namespaces(short, node.work / "ns")
    host, node_ip = str(namespaces.host_ip), str(namespaces.node_ip)
    registry_port = int(settings.registry.rpartition(":")[2])
    node.forwarders.append(forward(host, registry_port))
    egress = {}
    for variable, port in settings.egress.items():
        node.forwarders.append(forward(host, port))
        egress[variable] = f"http://{host}:{port}"
    mirror = f"{host}:{registry_port}"

    crane = bins / "crane"
    node_images.push_sandbox_image(crane, settings.registry, node.work)
    node_images.mirror_published(crane, settings.registry)
    for registry in node_config.MIRRORED_REGISTRIES:
        _write(layout.certs_d / registry / "hosts.toml", node_config.hosts_toml(registry, mirror))
    _write(layout.cni_conf_dir / "10-modelfleet.conflist", node_config.cni_conflist(layout))
    _write(node.work / "resolv.conf", f"# {settings.name}: no DNS beyond the cluster's\n")
    # What runs in the node's namespaces (a client in the cluster network: `in_cluster`)
    # resolves as a pod does, through CoreDNS; the host's own /etc/resolv.conf is untouched.
    cluster_resolv = _write(node.work / "cluster-resolv.conf", node_config.pod_resolv(node_ip))
    namespaces.run("mount", "--bind", str(cluster_resolv), "/etc/resolv.conf")
    containerd_toml = _write(node.work / "containerd.toml", node_config.containerd_config(layout))

    def start(part: str, argv: list[str | Path]) -> None:
        node.started.append(
            node.processes.start(
                f"{settings.name}-{part}", namespaces.enter([str(a) for a in argv])
            )
        )

    start("containerd", ["containerd", "--config", containerd_toml])
    _wait(node, "containerd", layout.containerd_socket.exists, 30)

    placement = Placement(enter=namespaces.enter, address=node_ip, controllers=("*",), node=True)
    before = len(node.processes.started)
    node.kubernetes = start_kubernetes(
        node.processes, bins, node.work / "control-plane", name=settings.name,
        placement=placement,
    )  # fmt: skip
    node.started += node.processes.started[before:]
    kubeconfig = node.kubernetes.kubeconfig.path
    start("kube-scheduler", [
        bins / "kube-scheduler", "--kubeconfig", kubeconfig,
        "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
        "--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "0",
    ])  # fmt: skip

    node.cgroup_root = f"{short}-pods"
    node_cgroups.make_root(node.cgroup_root)
    kubelet_config = _write(node.work / "kubelet.json", node_config.kubelet_config(
        layout, cgroup_root=f"/{node.cgroup_root}", cluster_dns=node_ip,
        ca=node.kubernetes.ca.cert,
    ))  # fmt: skip
    labels = ",".join(f"{k}={v}" for k, v in sorted(settings.labels.items()))
    start("kubelet", [
        bins / "kubelet", "--config", kubelet_config, "--kubeconfig", kubeconfig,
        "--hostname-override", settings.name, "--node-ip", node_ip,
        "--root-dir", layout.kubelet_root, *(["--node-labels", labels] if labels else []),
    ])  # fmt: skip
    proxy_config = _write(
        node.work / "kube-proxy.json", node_config.kube_proxy_config(kubeconfig, settings.name)
    )
    start("kube-proxy", [bins / "kube-proxy", "--config", proxy_config])
    corefile = _write(node.work / "Corefile", node_config.corefile(node_ip, kubeconfig))
    start("coredns", [bins / "coredns", "-conf", corefile])

    client = node.kubernetes.client
    _wait(node, "kubelet", lambda: _ready(client, settings.name), READY_TIMEOUT)
    # Pods are refused until their namespace's ServiceAccount exists, which the
    # controller manager makes a moment after it starts.
    default_account = resource_path("v1", "serviceaccounts", "default", "default")
    _wait(node, "kube-controller-manager", lambda: client.get(default_account), 60)
    if settings.extended:
        client.merge_patch(
            resource_path("v1", "nodes", name=settings.name),
            {"status": {"capacity": settings.extended}},
            status=True,
        )
    if egress:
        api = _admission_api(client)
        policy = yaml.safe_dump_all(egress_policy(egress, api))
        client.kubectl("apply", "--server-side", "-f", "-", stdin=policy)
    if settings.provisioner:
        node.provisioner = HostPathProvisioner(client, layout.volumes, settings.provisioner).start()
    if settings.leader_worker_set:
        start(node_lws.PART, [
            bins / node_lws.PART, *node_lws.prepare(client, node.work / "lws", kubeconfig)
        ])  # fmt: skip
        probes = node_lws.ready_probes()
        _wait(node, node_lws.PART, lambda: all(
            node.in_cluster(p, timeout=15).returncode == 0 for p in probes
        ), node_lws.READY_TIMEOUT)  # fmt: skip


def _ready(client: KubeClient, name: str) -> bool:
    node = client.get(resource_path("v1", "nodes", name=name)) or {}
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _admission_api(client: KubeClient) -> str:
    """The newest admissionregistration version serving MutatingAdmissionPolicy."""
    for version in ("v1", "v1beta1", "v1alpha1"):
        listed = client.get(f"/apis/admissionregistration.k8s.io/{version}") or {}
        if any(r.get("kind") == "MutatingAdmissionPolicy" for r in listed.get("resources") or []):
            return f"admissionregistration.k8s.io/{version}"
    raise NodeFailed("this kube-apiserver serves no MutatingAdmissionPolicy API")
