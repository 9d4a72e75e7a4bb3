"""etcd, kube-apiserver and kube-controller-manager on loopback, with an admin identity."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import pki
from .kube import KubeClient, Kubeconfig, write_kubeconfig
from .node_config import KUBERNETES_SERVICE_IP, SERVICE_RANGE
from .processes import Processes, free_port, wait_for

# The controllers a control plane needs without a kubelet: garbage collection (ownerReferences,
# foreground deletion), namespace deletion, service-account tokens, the claim/volume
# protection finalizers, and the TTL-after-finished controller (it deletes a finished Job
# `ttlSecondsAfterFinished` after the finish its conditions record, as the hydration Jobs ask).
# No Job, Deployment or volume-binding controller runs: the kubelet stand-in plays their part,
# and a real one would fight it over status.
CONTROLLERS = (
    "garbage-collector-controller",
    "ttl-after-finished-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "persistentvolumeclaim-protection-controller",
    "persistentvolume-protection-controller",
    "root-ca-certificate-publisher-controller",
)


@dataclass
class Kubernetes:
    """The API server's address, the admin identity and the CA that signed it."""

    kubeconfig: Kubeconfig
    ca: pki.KeyPair
    client: KubeClient
    service_account_key: Path


def on_host(argv: list[str]) -> list[str]:
    return argv


@dataclass(frozen=True)
class Placement:
    """Where an API runs: on the host's loopback (the default), or inside a node's
    namespaces (`enter` wraps each command line) listening on the node's `address`, with
    every controller and the `kubernetes` Service's endpoints kept by the API server."""

    enter: Callable[[list[str]], list[str]] = on_host
    address: str = "127.0.0.1"
    controllers: Sequence[str] = CONTROLLERS
    node: bool = False


def start_kubernetes(
    processes: Processes,
    bins: Path,
    work: Path,
    *,
    name: str = "control-plane",
    apiserver_flags: Sequence[str] = (),
    placement: Placement = Placement(),
) -> Kubernetes:
    """One Kubernetes API: its own etcd, API server (with `apiserver_flags` besides its own)
    and controllers, logs named after it, placed as `placement` says."""
    certs = work / "pki"
    ca = pki.make_ca(certs, "kube-ca")
    address = placement.address
    sans = {"IP:127.0.0.1", f"IP:{address}", "DNS:localhost", "DNS:kubernetes.default.svc"}
    if placement.node:
        sans.add(f"IP:{KUBERNETES_SERVICE_IP}")
    serving = pki.sign(
        ca, certs, "apiserver", common_name="kube-apiserver", sans=tuple(sorted(sans))
    )
    admin = pki.sign(ca, certs, "admin", common_name="admin", organisation="system:masters")
    sa_key, sa_pub = pki.make_rsa_pair(certs, "service-accounts")

    etcd_port, etcd_peer, api_port = free_port(), free_port(), free_port()
    etcd_url = f"http://127.0.0.1:{etcd_port}"
    enter = placement.enter

    def start(part: str, argv: list[str | Path]) -> None:
        processes.start(f"{name}-{part}", enter([str(a) for a in argv]))

    start(
        "etcd",
        [
            bins / "etcd", "--data-dir", work / "etcd", "--name", "realcp",
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", f"http://127.0.0.1:{etcd_peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{etcd_peer}",
            "--initial-cluster", f"realcp=http://127.0.0.1:{etcd_peer}",
            "--unsafe-no-fsync",  # a throwaway store: durability buys nothing here
        ],
    )  # fmt: skip
    if placement.node:  # bound on the node's address; its endpoints kept for the pods
        # The admin certificate also signs its calls to the kubelet (logs, exec,
        # port-forward), which trusts this CA (node_config.kubelet_config).
        where = ["--bind-address", "0.0.0.0", "--advertise-address", address,
                 "--kubelet-preferred-address-types=InternalIP",
                 "--kubelet-client-certificate", str(admin.cert),
                 "--kubelet-client-key", str(admin.key)]  # fmt: skip
    else:  # no kubelet serves the kubernetes Service
        where = ["--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
                 "--endpoint-reconciler-type", "none"]  # fmt: skip
    start(
        "kube-apiserver",
        [
            bins / "kube-apiserver", "--etcd-servers", etcd_url,
            *where, "--secure-port", str(api_port), "--cert-dir", certs,
            "--tls-cert-file", serving.cert, "--tls-private-key-file", serving.key,
            "--client-ca-file", ca.cert, "--authorization-mode", "RBAC",
            "--service-account-issuer", "https://kubernetes.default.svc",
            "--service-account-key-file", sa_pub,
            "--service-account-signing-key-file", sa_key,
            "--service-cluster-ip-range", SERVICE_RANGE,
            "--profiling=false", *apiserver_flags,
        ],
    )  # fmt: skip
    server = f"https://{address}:{api_port}"
    kubeconfig = write_kubeconfig(
        work / "admin.kubeconfig", server=server, ca=ca.cert, cert=admin.cert, key=admin.key
    )
    client = KubeClient(kubeconfig, bins / "kubectl")
    wait_for(
        lambda: client.request("GET", "/readyz").get("text") == "ok",
        what=f"{name} kube-apiserver /readyz",
        timeout=90,
    )
    start(
        "kube-controller-manager",
        [
            bins / "kube-controller-manager", "--kubeconfig", kubeconfig.path,
            "--authentication-kubeconfig", kubeconfig.path,
            "--authorization-kubeconfig", kubeconfig.path,
            "--bind-address", "127.0.0.1", "--secure-port", str(free_port()),
            "--controllers", ",".join(placement.controllers), "--leader-elect=false",
            "--use-service-account-credentials=true",
            "--service-account-private-key-file", sa_key, "--root-ca-file", ca.cert,
        ],
    )  # fmt: skip
    return Kubernetes(kubeconfig, ca, client, sa_key)
