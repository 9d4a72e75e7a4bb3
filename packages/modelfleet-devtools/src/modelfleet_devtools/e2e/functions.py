"""The four functions as local processes, dialled by Crossplane over mTLS.

Under the External package runtime Crossplane installs each FunctionRevision but runs nothing:
it dials `status.endpoint` with its client certificate, and trusts a server certificate signed
by its own root CA. We serve each function with such a certificate and point its revision at it.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from . import pki
from .crossplane import CROSSPLANE_NAMESPACE
from .kube import ApiError, KubeClient, resource_path
from .packages import release_functions
from .processes import Processes, free_port
from .release import Release

SERVER_SECRET = "modelfleet-functions-tls"
# On each function process's PYTHONPATH: its sitecustomize traces the calls it answers.
CALL_TRACE_SITE = Path(__file__).parent / "calltrace"
FUNCTION_REVISIONS = resource_path("pkg.crossplane.io/v1", "functionrevisions")


def serving_certificates(crossplane_ca: pki.KeyPair, work: Path, client: KubeClient) -> Path:
    """A serving certificate Crossplane trusts, as files and as the revisions' TLS Secret."""
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
    return certs


def process_name(release: Release, function: str) -> str:
    """The current release's processes are named after their function; others are prefixed."""
    return function if release.name == "current" else f"{release.name}-{function}"


def serve_functions(
    processes: Processes, certs: Path, work: Path, release: Release
) -> dict[str, str]:
    """Start every function of `release` on its own port, each with a call trace
    (`calls_answered`); returns function name -> endpoint."""
    endpoints = {}
    (work / "calls").mkdir(parents=True, exist_ok=True)
    for function in release_functions(release.root):
        endpoint = f"127.0.0.1:{free_port()}"
        name = process_name(release, function)
        processes.start(
            name,
            [release.scripts / function, "--tls-server-certs-dir", certs, "--address", endpoint],
            env={
                "PYTHONPATH": str(CALL_TRACE_SITE),
                "MODELFLEET_E2E_CALL_TRACE": str(trace_file(work, name)),
            },
        )
        endpoints[function] = endpoint
    return endpoints


def trace_file(work: Path, process: str) -> Path:
    return work / "calls" / f"{process}.jsonl"


def calls_answered(work: Path, process: str) -> Counter[tuple[str, str, str]]:
    """How many calls the function process answered, per XR (kind, namespace, name)."""
    path = trace_file(work, process)
    lines = path.read_text().splitlines() if path.exists() else []
    calls: Counter[tuple[str, str, str]] = Counter()
    for line in lines:
        try:
            xr = json.loads(line)
        except ValueError:  # a line being written
            continue
        calls[(xr["kind"], xr["namespace"], xr["name"])] += 1
    return calls


PROVIDER_REVISIONS = resource_path("pkg.crossplane.io/v1", "providerrevisions")
# The name Crossplane gives provider-kubernetes when it installs it as a dependency.
PROVIDER_PACKAGE = "crossplane-contrib-provider-kubernetes"


Served = dict[str, dict[str, str]]  # package version -> function name -> endpoint


def _runtime_ready(
    client: KubeClient, revisions_path: str, package: str, endpoints: dict[str, str] | None
) -> bool:
    """Play the package runtime for one package's revisions (each served at the endpoint of
    its version, e.g. v0.2.0, when `endpoints` are given); False while it has none served."""
    revisions = client.list(revisions_path, labelSelector=f"pkg.crossplane.io/package={package}")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    served = False
    for revision in revisions:
        endpoint = None
        if endpoints is not None:
            version = str((revision.get("spec") or {}).get("image", "")).rpartition(":")[2]
            endpoint = endpoints.get(version)
            if endpoint is None:  # a version no process serves (any more)
                continue
        served = True
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
    return served


def point_revisions(client: KubeClient, served: Served) -> list[str]:
    """Give each function revision the endpoint of its version's process, and it and the
    provider's revisions health; returns the packages with no such revision yet."""
    functions = sorted({f for endpoints in served.values() for f in endpoints})
    missing = [
        function
        for function in functions
        if not _runtime_ready(
            client,
            FUNCTION_REVISIONS,
            function,
            {v: e[function] for v, e in served.items() if function in e},
        )
    ]
    if not _runtime_ready(client, PROVIDER_REVISIONS, PROVIDER_PACKAGE, None):
        missing.append(PROVIDER_PACKAGE)
    return missing
