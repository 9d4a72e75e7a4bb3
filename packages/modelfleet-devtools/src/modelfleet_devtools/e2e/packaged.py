"""A control plane installed as a platform team installs it: Crossplane core with its default
package runtime on a cluster with a real node, running the packages' runtime images as pods.

The control-plane cluster is a real node (node.py) named `control-plane`. Crossplane core runs
out of cluster but inside the node's network and mount namespaces (docs/development.md, "The
package runtime"): it reaches the API server, each Function's Service at its cluster DNS name
through CoreDNS (the node's /etc/resolv.conf) and its ClusterIP through kube-proxy, as a pod
would. Its webhooks are served on the node's loopback, which the API server (in the same
namespace) calls.

The loopback registry `modelfleet-release` pushed to is offered on the node's own loopback
(127.0.0.1:PORT, the same port) by a forwarder process inside the namespace, so that the
package manager speaks plain HTTP to it as it does to any loopback registry, and containerd
pulls the packages' runtime images from that same name (a hosts.toml for it).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from . import webhooks
from .crossplane import (
    CLIENT_SECRET,
    CROSSPLANE_NAMESPACE,
    ROOT_CA_SECRET,
    Registry,
    _secret_files,
)
from .kube import KubeClient
from .node import NodeSettings, RealNode, start_node
from .pki import KeyPair
from .processes import Processes, free_port, wait_for

CONTROL_PLANE_CLUSTER = "control-plane"
SERVICE_ACCOUNT = "crossplane"  # core's --service-account default
WEBHOOK_PORT = 9553  # on the node's own loopback: nothing else listens there


@dataclass
class PackagedPlane:
    """The control-plane cluster and Crossplane core, with the registry it installs from."""

    node: RealNode
    registry: Registry
    work: Path

    @property
    def client(self) -> KubeClient:
        return self.node.client

    def stop(self) -> list[str]:
        """Stop core, then the node and everything it ran; what could not be removed."""
        core = [p for p in self.node.processes.started if p.name.startswith("crossplane")]
        self.node.processes.retire(core)
        return self.node.stop()


def node_hosts_toml(registry: str) -> str:
    """containerd's hosts.toml for the registry's own loopback name: plain HTTP."""
    return (
        f'server = "http://{registry}"\n\n'
        f'[host."http://{registry}"]\n  capabilities = ["pull", "resolve"]\n'
    )


def _in_node(node: RealNode, argv: list[str | Path]) -> list[str]:
    assert node.namespaces is not None
    return node.namespaces.enter([str(a) for a in argv])


def _offer_registry(node: RealNode, registry: Registry) -> None:
    """The host's loopback registry, at the same address on the node's loopback."""
    port = int(registry.host.rpartition(":")[2])
    node.started.append(
        node.processes.start(
            f"{node.settings.name}-registry-loopback",
            _in_node(node, [sys.executable, "-m", "modelfleet_devtools.e2e.forward",
                            registry.host, f"{node.namespaces.host_ip}:{port}"]),  # type: ignore[union-attr]
        )
    )  # fmt: skip
    folder = node.layout.certs_d / registry.host
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hosts.toml").write_text(node_hosts_toml(registry.host))

    def answers() -> bool:
        node.check_alive()
        done = node.in_cluster(["curl", "-sf", f"http://{registry.host}/v2/"], timeout=20)
        return done.returncode == 0

    wait_for(answers, what="the registry on the node's loopback", timeout=30, every=0.5)


def _webhooks_serving(node: RealNode, port: int, ca: Path) -> bool:
    node.check_alive()
    done = node.in_cluster(
        ["curl", "-s", "-o", "/dev/null", "--cacert", str(ca), f"https://127.0.0.1:{port}/"],
        timeout=20,
    )
    return done.returncode == 0


def start_core(node: RealNode, bins: Path, crds: Path, work: Path) -> KeyPair:
    """`core init` then `core start` with the default package runtime, in the node's
    namespaces; returns Crossplane's root CA once its webhooks answer."""
    client, processes = node.client, node.processes
    env = {
        "KUBECONFIG": str(client.config.path),
        "POD_NAMESPACE": CROSSPLANE_NAMESPACE,
        "TLS_CA_SECRET_NAME": ROOT_CA_SECRET,
        "TLS_CLIENT_SECRET_NAME": CLIENT_SECRET,
        **webhooks.init_env(work / "webhook-configs", CROSSPLANE_NAMESPACE, WEBHOOK_PORT),
    }
    client.kubectl("create", "namespace", CROSSPLANE_NAMESPACE)
    # The ServiceAccount Crossplane's chart gives core: the runtime reads it (its image pull
    # secrets go to every package's pods) and refuses to build a Deployment without it.
    client.kubectl("create", "serviceaccount", "-n", CROSSPLANE_NAMESPACE, SERVICE_ACCOUNT)
    crd_dir = work / "crossplane-crds"  # core init wants a real folder, not a link to one
    shutil.copytree(crds, crd_dir, dirs_exist_ok=True)
    env["CRDS_PATH"] = str(crd_dir)
    name = node.settings.name
    for attempt in (1, 2):  # its first run can race the CRDs it has just created
        init = processes.start(
            f"crossplane-init-{name}-{attempt}",
            _in_node(node, [bins / "crossplane-core", "core", "init"]),
            env=env,
        )
        if init.popen.wait(timeout=180) == 0:
            break
        if attempt == 2:
            raise RuntimeError(f"crossplane core init failed:\n{init.tail()}")
    (work / "xpkg-cache").mkdir(parents=True, exist_ok=True)
    ca_files = _secret_files(client, ROOT_CA_SECRET, work / "crossplane-ca")
    root_ca = KeyPair(ca_files["tls.crt"], ca_files["tls.key"])
    client_dir = work / "crossplane-client"
    _secret_files(client, CLIENT_SECRET, client_dir)
    server_dir = webhooks.serving_certificate(
        root_ca, work / "crossplane-server", client, CROSSPLANE_NAMESPACE
    )
    if not webhooks.point_at_loopback(client, WEBHOOK_PORT, root_ca.cert):
        raise RuntimeError("crossplane core init wrote no webhook configuration to point at")
    core = processes.start(
        f"crossplane-{name}",
        _in_node(node, [
            bins / "crossplane-core", "core", "start",  # the default runtime: Deployments
            "--webhook-port", str(WEBHOOK_PORT), "--tls-server-certs-dir", server_dir,
            "--tls-client-certs-dir", client_dir, "--xpkg-cache-dir", work / "xpkg-cache",
            "--metrics-port", str(free_port()), "--health-probe-port", str(free_port()),
        ]),
        env=env,
    )  # fmt: skip
    node.started.append(core)
    # The RBAC manager, as the chart runs it beside core: it gives each Provider's service
    # account the ClusterRoles its package's CRDs call for.
    node.started.append(processes.start(
        f"crossplane-rbac-{name}", _in_node(node, [bins / "crossplane-core", "rbac", "start"]),
        env={"KUBECONFIG": str(client.config.path)},
    ))  # fmt: skip
    wait_for(
        lambda: _webhooks_serving(node, WEBHOOK_PORT, root_ca.cert),
        what="Crossplane's webhooks on the control-plane node",
        timeout=120,
        every=1,
    )
    return root_ca


def start_packaged_plane(
    processes: Processes, bins: Path, crossplane_crds: Path, work: Path, registry: Registry
) -> PackagedPlane:
    """The control-plane node, the registry offered on it, and Crossplane core; the node is
    removed again if any of it fails."""
    settings = NodeSettings(name=CONTROL_PLANE_CLUSTER, registry=registry.host)
    node = start_node(processes, bins, work / "node", settings)
    try:
        _offer_registry(node, registry)
        start_core(node, bins, crossplane_crds, work)
        return PackagedPlane(node, registry, work)
    except BaseException:
        node.stop()
        raise


def kubectl_get_pkg(client: KubeClient) -> str:
    """`kubectl get pkg`, as a platform team reads it."""
    return client.kubectl("get", "pkg", "-o", "wide", check=False)
