"""Crossplane core's admission webhooks, served on a loopback port and reached by
kube-apiserver out of cluster.

In a cluster, `core init` writes each webhook configuration it manages with a Service
reference and the CA bundle of its server Secret, and `core start` serves the webhooks from
that Secret's files. Out of cluster no Service can route to a local process (an Endpoints
address may not be loopback), so, after `core init`, the server Secret holds a certificate for
`IP:127.0.0.1` signed by Crossplane's root CA, and every configuration `core init` wrote is
pointed at `https://127.0.0.1:PORT` with that CA. Nothing rewrites them afterwards: only
`core init` applies them.
"""

from __future__ import annotations

import base64
import shutil
import socket
import ssl
from pathlib import Path
from typing import Any

import yaml

from . import pki
from .kube import KubeClient, resource_path
from .processes import wait_for

Json = dict[str, Any]
SERVER_SECRET = "crossplane-tls-server"
# The Service `core init` names in the configurations; nothing serves it, the URL replaces it.
SERVICE_NAME = "crossplane-webhooks"
ADMISSION_API = "admissionregistration.k8s.io/v1"
CONFIGURATION_KINDS = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
USAGE_WEBHOOK = "nousages.protection.crossplane.io"


def usage_configuration() -> Json:
    """The configuration Crossplane v2.3.4 ships for its Usage webhook
    (cluster/webhookconfigurations/usage.yaml there, which ../shared/realcp does not carry):
    a DELETE of any object labelled `crossplane.io/in-use: "true"` is asked of
    `/validate-no-usages`, and refused if the webhook cannot answer."""
    return {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "crossplane-no-usages"},
        "webhooks": [
            {
                "name": USAGE_WEBHOOK,
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "name": "webhook-service",
                        "namespace": "system",
                        "path": "/validate-no-usages",
                    }
                },
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "objectSelector": {"matchLabels": {"crossplane.io/in-use": "true"}},
                "rules": [
                    {
                        "apiGroups": ["*"],
                        "apiVersions": ["*"],
                        "operations": ["DELETE"],
                        "resources": ["*"],
                    }
                ],
            }
        ],
    }


def write_configurations(folder: Path) -> Path:
    """The folder `core init` reads its webhook configurations from (WEBHOOK_CONFIGS_PATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "usage.yaml").write_text(yaml.safe_dump(usage_configuration()))
    return folder


def init_env(folder: Path, namespace: str, port: int) -> dict[str, str]:
    """What `core init` needs to write the server Secret and the webhook configurations."""
    return {
        "ENABLE_WEBHOOKS": "true",
        "WEBHOOK_CONFIGS_PATH": str(write_configurations(folder)),
        "TLS_SERVER_SECRET_NAME": SERVER_SECRET,
        "WEBHOOK_SERVICE_NAME": SERVICE_NAME,
        "WEBHOOK_SERVICE_NAMESPACE": namespace,
        "WEBHOOK_SERVICE_PORT": str(port),
    }


def serving_certificate(
    root_ca: pki.KeyPair, folder: Path, client: KubeClient, namespace: str
) -> Path:
    """Replace the server Secret `core init` made (named for the Service) with one for
    `IP:127.0.0.1`; return the folder of its files (TLS_SERVER_CERTS_DIR for `core start`)."""
    signed = pki.sign(
        root_ca, folder / "signed", "server", common_name=SERVICE_NAME, sans=("IP:127.0.0.1",)
    )
    shutil.copy(signed.cert, folder / "tls.crt")
    shutil.copy(signed.key, folder / "tls.key")
    shutil.copy(root_ca.cert, folder / "ca.crt")
    data = {
        key: base64.b64encode((folder / key).read_bytes()).decode()
        for key in ("tls.crt", "tls.key", "ca.crt")
    }
    client.merge_patch(resource_path("v1", "secrets", namespace, SERVER_SECRET), {"data": data})
    return folder


def point_at_loopback(client: KubeClient, port: int, ca: Path) -> list[str]:
    """Point every webhook of the configurations `core init` wrote (those naming
    SERVICE_NAME) at `https://127.0.0.1:port` with `ca`; return the webhooks' names."""
    bundle = base64.b64encode(ca.read_bytes()).decode()
    pointed = []
    for plural in CONFIGURATION_KINDS:
        for config in client.list(resource_path(ADMISSION_API, plural)):
            hooks = config.get("webhooks") or []
            services = [(h.get("clientConfig") or {}).get("service") or {} for h in hooks]
            if not any(s.get("name") == SERVICE_NAME for s in services):
                continue
            for hook, service in zip(hooks, services, strict=True):
                url = f"https://127.0.0.1:{port}{service.get('path', '')}"
                hook["clientConfig"] = {"url": url, "caBundle": bundle}
                pointed.append(hook["name"])
            path = resource_path(ADMISSION_API, plural, name=config["metadata"]["name"])
            client.merge_patch(path, {"webhooks": hooks})
    return pointed


def serving(port: int, ca: Path) -> bool:
    """The webhook server on `port` completes a TLS handshake with a certificate `ca` vouches
    for, as 127.0.0.1."""
    context = ssl.create_default_context(cafile=str(ca))
    context.verify_flags &= ~ssl.VERIFY_X509_STRICT  # as Go verifies: no key identifiers needed
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1"),
        ):
            return True
    except OSError:
        return False


def wait_serving(port: int, ca: Path, timeout: float = 120) -> None:
    wait_for(
        lambda: serving(port, ca), what="Crossplane's webhook server", timeout=timeout, every=1
    )
