"""LeaderWorkerSet on a real node: the upstream controller (lws-controller v0.10.0, in
../shared/realcp) run as a part of the node, as a platform team that installed LWS has it.

It runs inside the node's namespaces with the node's admin kubeconfig, so the node's API
server reaches its webhooks on the node's own loopback. Out of cluster, as
../shared/realcp/README.md found it working: leader election off, its internal cert
rotation off (it cannot work out of cluster and would hold the controllers back), the webhook
server on 127.0.0.1 with a certificate of the suite's own CA (pki.py), and the upstream
webhook configurations pointed at that URL with that CA. The webhooks are kept: they default
a LeaderWorkerSet's spec and label its pods (worker index, leader address). The StatefulSets
LWS makes are run by kube-controller-manager, which the node runs with every controller.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import yaml

from ..realcp import SHARED_REALCP_DIR
from . import pki
from .kube import KubeClient

Json = dict[str, Any]
PART = "lws-controller"
LWS_FILES = SHARED_REALCP_DIR / "crds" / "lws"  # its CRDs and webhook manifests, v0.10.0
CRD_FILES = (
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    "disaggregatedset.x-k8s.io_disaggregatedsets.yaml",
    "disaggregatedset.x-k8s.io_disaggregatedsetrolescalers.yaml",
)
WEBHOOK_MANIFESTS = "webhook-manifests.yaml"
# Ports on the node's own loopback (its network namespace): nothing else there uses them.
WEBHOOK_PORT = 9443
HEALTH_PORT = 8081
READY_TIMEOUT = 120.0


def controller_config(cert_dir: Path) -> str:
    """lws-controller's Configuration (config.lws.x-k8s.io/v1alpha1) for a run out of
    cluster; metrics off ("0"), the health probe on HEALTH_PORT."""
    config = {
        "apiVersion": "config.lws.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{HEALTH_PORT}"},
        "webhook": {"host": "127.0.0.1", "port": WEBHOOK_PORT, "certDir": str(cert_dir)},
    }
    return yaml.safe_dump(config, sort_keys=False)


def webhook_configurations(manifests: str, ca_bundle: bytes) -> list[Json]:
    """The upstream webhook configurations, each webhook's Service reference replaced by
    the URL of the controller's loopback server (same path) and `ca_bundle` (PEM)."""
    configurations = [d for d in yaml.safe_load_all(manifests) if d]
    bundle = base64.b64encode(ca_bundle).decode()
    for configuration in configurations:
        for webhook in configuration["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {
                "url": f"https://127.0.0.1:{WEBHOOK_PORT}{path}",
                "caBundle": bundle,
            }
    return configurations


def prepare(client: KubeClient, work: Path, kubeconfig: Path, files: Path = LWS_FILES) -> list[str]:
    """Apply LWS's CRDs and its webhook configurations (from `files`) to the node's API
    server, write the controller's certificate and config under `work`; the controller's
    arguments."""
    crds = [files / name for name in CRD_FILES]
    for crd in crds:
        client.kubectl("apply", "--server-side", "-f", str(crd))
    ca = pki.make_ca(work / "pki", "lws-ca")
    cert_dir = work / "certs"
    served = pki.sign(
        ca, work / "pki", "lws-webhook", common_name="lws-webhook", sans=("IP:127.0.0.1",),
        usage="serverAuth",
    )  # fmt: skip
    cert_dir.mkdir(parents=True, exist_ok=True)
    (cert_dir / "tls.crt").write_bytes(served.cert.read_bytes())
    (cert_dir / "tls.key").write_bytes(served.key.read_bytes())
    config = work / "lws-config.yaml"
    config.write_text(controller_config(cert_dir))
    configurations = webhook_configurations(
        (files / WEBHOOK_MANIFESTS).read_text(), ca.cert.read_bytes()
    )
    client.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": configurations}
    ))  # fmt: skip
    names = [f"crd/{yaml.safe_load(crd.read_text())['metadata']['name']}" for crd in crds]
    client.kubectl("wait", "--for=condition=Established", "--timeout=120s", *names, timeout=150)
    return ["--kubeconfig", str(kubeconfig), "--config", str(config)]


def ready_probes() -> list[list[str]]:
    """Requests (run in the node's namespaces) that all succeed once the controller serves:
    its readiness endpoint, and a TLS connection to its webhook server (the API server's
    pod creations wait on it: the pod webhook fails closed)."""
    return [
        ["curl", "-sf", "--max-time", "5", f"http://127.0.0.1:{HEALTH_PORT}/readyz"],
        ["curl", "-sk", "--max-time", "5", "-o", "/dev/null", f"https://127.0.0.1:{WEBHOOK_PORT}/"],
    ]
