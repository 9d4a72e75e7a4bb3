"""The four functions as local processes, dialled by Crossplane over mTLS.

Under the External package runtime Crossplane installs each FunctionRevision but runs nothing:
it dials `status.endpoint` with its client certificate, and trusts a server certificate signed
by its own root CA. We serve each function with such a certificate and point its revision at it.
"""

from __future__ import annotations

import base64
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from . import pki
from .crossplane import CROSSPLANE_NAMESPACE
from .kube import ApiError, KubeClient, resource_path
from .packages import FUNCTIONS
from .processes import Processes, free_port

SERVER_SECRET = "modelfleet-functions-tls"
FUNCTION_REVISIONS = resource_path("pkg.crossplane.io/v1", "functionrevisions")


def serve_functions(
    processes: Processes, crossplane_ca: pki.KeyPair, work: Path, client: KubeClient
) -> dict[str, str]:
    """Start every function on its own port; returns function name -> endpoint."""
    certs = work / "functions-tls"
    serving = pki.sign(
        crossplane_ca, certs, "server", common_name="modelfleet-functions", sans=("IP:127.0.0.1",)
    )
    shutil.copy(serving.cert, certs / "tls.crt")
    shutil.copy(serving.key, certs / "tls.key")
    shutil.copy(crossplane_ca.cert, certs / "ca.crt")
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SERVER_SECRET, "namespace": CROSSPLANE_NAMESPACE},
        "type": "kubernetes.io/tls",
        "data": {
            key: base64.b64encode((certs / key).read_bytes()).decode()
            for key in ("tls.crt", "tls.key", "ca.crt")
        },
    }
    try:
        client.create(resource_path("v1", "secrets", CROSSPLANE_NAMESPACE), secret)
    except ApiError as error:
        if error.status != 409:
            raise
    scripts = Path(sys.executable).parent
    endpoints = {}
    for function in FUNCTIONS:
        endpoint = f"127.0.0.1:{free_port()}"
        processes.start(
            function,
            [scripts / function, "--tls-server-certs-dir", certs, "--address", endpoint],
        )
        endpoints[function] = endpoint
    return endpoints


PROVIDER_REVISIONS = resource_path("pkg.crossplane.io/v1", "providerrevisions")
# The name Crossplane gives provider-kubernetes when it installs it as a dependency.
PROVIDER_PACKAGE = "crossplane-contrib-provider-kubernetes"


def _runtime_ready(
    client: KubeClient, revisions_path: str, package: str, endpoint: str | None
) -> bool:
    """Play the package runtime for one package's revisions; False while it has none."""
    revisions = client.list(revisions_path, labelSelector=f"pkg.crossplane.io/package={package}")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for revision in revisions:
        status = revision.get("status") or {}
        conditions = status.get("conditions") or []
        healthy = any(
            c.get("type") == "RuntimeHealthy" and c.get("status") == "True" for c in conditions
        )
        wanted = {"tlsServerSecretName": SERVER_SECRET}
        if endpoint:
            wanted["endpoint"] = endpoint
        if healthy and all(status.get(k) == v for k, v in wanted.items()):
            continue
        kept = [c for c in conditions if c.get("type") != "RuntimeHealthy"]
        runtime = {
            "type": "RuntimeHealthy",
            "status": "True",
            "reason": "HealthyPackageRevision",
            "lastTransitionTime": now,
        }
        client.merge_patch(
            f"{revisions_path}/{revision['metadata']['name']}",
            {"status": {**wanted, "conditions": [*kept, runtime]}},
            status=True,
        )
    return bool(revisions)


def point_revisions(client: KubeClient, endpoints: dict[str, str]) -> list[str]:
    """Give each package's revisions its endpoint and health; returns the packages not seen."""
    missing = [
        function
        for function, endpoint in endpoints.items()
        if not _runtime_ready(client, FUNCTION_REVISIONS, function, endpoint)
    ]
    if not _runtime_ready(client, PROVIDER_REVISIONS, PROVIDER_PACKAGE, None):
        missing.append(PROVIDER_PACKAGE)
    return missing
