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

import sys
from dataclasses import dataclass
from pathlib import Path

from .crossplane import CROSSPLANE_NAMESPACE, Registry, init_core
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
    client.kubectl("create", "namespace", CROSSPLANE_NAMESPACE)
    # The ServiceAccount Crossplane's chart gives core: the runtime reads it (its image pull
    # secrets go to every package's pods) and refuses to build a Deployment without it.
    client.kubectl("create", "serviceaccount", "-n", CROSSPLANE_NAMESPACE, SERVICE_ACCOUNT)
    name = node.settings.name
    init = init_core(
        processes, bins, crds, work, client, WEBHOOK_PORT,
        enter=node.namespaces.enter, name=f"crossplane-init-{name}",  # type: ignore[union-attr]
    )  # fmt: skip
    root_ca, env = init.root_ca, init.env
    server_dir, client_dir = init.server_dir, init.client_dir
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
