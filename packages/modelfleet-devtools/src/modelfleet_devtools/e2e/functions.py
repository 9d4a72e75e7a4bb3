"""The four functions as containers of their installed packages, dialled by Crossplane over
mTLS.

Under the External package runtime Crossplane installs each FunctionRevision but runs nothing:
it dials `status.endpoint` with its client certificate, and trusts a server certificate signed
by its own root CA. `FunctionRuntime` runs each revision's package image with such a
certificate and points the revision at it.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..release.build import release_functions
from . import pki
from .containers import Mount, Podman
from .crossplane import CROSSPLANE_NAMESPACE
from .kube import ApiError, KubeClient, resource_path
from .processes import Processes, free_port, port_in_use
from .release import Release

SERVER_SECRET = "modelfleet-functions-tls"
# Where Crossplane's Default runtime mounts a function's TLS server Secret, and names it in
# TLS_SERVER_CERTS_DIR.
TLS_IN_CONTAINER = "/tls/server"
# On each function container's PYTHONPATH: its sitecustomize traces the calls it answers.
CALL_TRACE_SITE = Path(__file__).parent / "calltrace"
CALL_TRACE_IN_CONTAINER = "/opt/modelfleet-e2e-calltrace"
FUNCTION_REVISIONS = resource_path("pkg.crossplane.io/v1", "functionrevisions")
Served = dict[str, dict[str, str]]  # package version -> function name -> endpoint
# How often a dead function container is started again before the run fails, its log shown.
MAX_RESTARTS = 3


def serving_certificates(crossplane_ca: pki.KeyPair, work: Path, client: KubeClient) -> Path:
    """A serving certificate Crossplane trusts, as files and as the revisions' TLS Secret."""
    certs = work / "functions-tls"
    serving = pki.sign(
        crossplane_ca, certs, "server", common_name="modelfleet-functions", sans=("IP:127.0.0.1",)
    )
    shutil.copy(serving.cert, certs / "tls.crt")
    shutil.copy(serving.key, certs / "tls.key")
    shutil.copy(crossplane_ca.cert, certs / "ca.crt")
    for name in ("tls.crt", "tls.key", "ca.crt"):  # as a Secret volume shows them (0644)
        (certs / name).chmod(0o644)
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
    """The current release's containers are named after their function; others are prefixed."""
    return function if release.name == "current" else f"{release.name}-{function}"


class FunctionRuntime:
    """Plays Crossplane's package runtime for the installed Functions: each FunctionRevision's
    package image (its runtime is embedded), pulled from the registry the package manager
    installed it from, runs as a container. Each is given what the Default runtime gives a
    function pod: the revision's TLS server Secret mounted at /tls/server, named by
    TLS_SERVER_CERTS_DIR, and a port. All containers share the host's network here, where
    9443 is provider-kubernetes' own, so the port is a free one, given as ADDRESS."""

    def __init__(
        self, processes: Processes, podman: Podman, certs: Path, work: Path, registry: str
    ) -> None:
        self.processes, self.podman, self.certs, self.work = processes, podman, certs, work
        self.registry = registry
        self.releases: dict[str, Release] = {}  # package version -> the release published so
        self.served: Served = {}  # package version -> function -> endpoint
        self.restarts: Counter[str] = Counter()  # container -> times restarted after it died
        (work / "calls").mkdir(parents=True, exist_ok=True)
        (work / "calls").chmod(0o777)  # written by the functions' non-root user

    def publishes(self, release: Release) -> None:
        self.releases[release.version] = release

    def serve(self, function: str, version: str) -> str:
        """Start the container of `function`'s package at `version`; its endpoint."""
        release = self.releases[version]
        name = process_name(release, function)
        image = f"{self.registry}/{function}:{version}"
        self.podman.pull(image)
        endpoint = f"127.0.0.1:{free_port()}"
        argv = self.podman.run_argv(
            name,
            image,
            env={
                "TLS_SERVER_CERTS_DIR": TLS_IN_CONTAINER,
                "ADDRESS": endpoint,
                "PYTHONPATH": CALL_TRACE_IN_CONTAINER,
                "MODELFLEET_E2E_CALL_TRACE": f"/calls/{name}.jsonl",
            },
            mounts=[
                Mount(self.certs, TLS_IN_CONTAINER),
                Mount(CALL_TRACE_SITE, CALL_TRACE_IN_CONTAINER),
                Mount(self.work / "calls", "/calls", read_only=False),
            ],
        )
        self.processes.start(name, argv, env=self.podman.env, container=name)
        self.served.setdefault(version, {})[function] = endpoint
        return endpoint

    def restart_crashed(self) -> list[str]:
        """Start again, as it was (same port), every function container that died, as a
        Deployment's pod is restarted; the ones restarted."""
        restarted = []
        for version, endpoints in self.served.items():
            for function in endpoints:
                process = self.processes.named(process_name(self.releases[version], function))
                if not process.alive():
                    if self.restarts[process.name] >= MAX_RESTARTS:  # crash-looping
                        raise RuntimeError(
                            f"{process.name} died {MAX_RESTARTS + 1} times (log {process.log}):"
                            f"\n{process.tail(15)}"
                        )
                    self.restarts[process.name] += 1
                    self.processes.restart(process)
                    restarted.append(process.name)
        return restarted

    def _note_pid(self, name: str) -> None:
        """Where the container's process is on this host (its CPU is counted from /proc)."""
        process = self.processes.named(name)
        if process.container_pid is None:
            process.container_pid = self.podman.pid(name)

    def retire(self, version: str) -> None:
        """Stop the containers of a version no revision uses any more."""
        release = self.releases.pop(version)
        stopped = [
            self.processes.named(process_name(release, f)) for f in self.served.pop(version, {})
        ]
        self.processes.retire(stopped)

    def reconcile(self, client: KubeClient) -> list[str]:
        """One pass of the runtime: a container for every function revision of a published
        version, its endpoint and health on the revision, and health on the provider's (a local
        process); returns the packages with no revision served yet."""
        missing = []
        for function in sorted(
            {f for r in self.releases.values() for f in release_functions(r.root)}
        ):
            revisions = client.list(
                FUNCTION_REVISIONS, labelSelector=f"pkg.crossplane.io/package={function}"
            )
            endpoints = {}
            for revision in revisions:
                version = _package_version(revision)
                if version not in self.releases:
                    continue
                endpoint = self.served.get(version, {}).get(function)
                if endpoint is None:
                    endpoint = self.serve(function, version)
                if port_in_use(int(endpoint.rpartition(":")[2])):
                    endpoints[version] = endpoint
                    self._note_pid(process_name(self.releases[version], function))
            if not _runtime_ready(client, FUNCTION_REVISIONS, function, endpoints):
                missing.append(function)
        if not _runtime_ready(client, PROVIDER_REVISIONS, PROVIDER_PACKAGE, None):
            missing.append(PROVIDER_PACKAGE)
        return missing


def _package_version(revision: dict[str, Any]) -> str:
    return str((revision.get("spec") or {}).get("image", "")).rpartition(":")[2]


def trace_file(work: Path, process: str) -> Path:
    return work / "calls" / f"{process}.jsonl"


def calls_answered(work: Path, process: str) -> Counter[tuple[str, str, str]]:
    """How many reconciles the function process answered (their settled calls), per XR
    (kind, namespace, name)."""
    path = trace_file(work, process)
    lines = path.read_text().splitlines() if path.exists() else []
    calls: Counter[tuple[str, str, str]] = Counter()
    for line in lines:
        try:
            xr = json.loads(line)
        except ValueError:  # a line being written
            continue
        if not xr.get("settled", True):
            continue
        calls[(xr["kind"], xr["namespace"], xr["name"])] += 1
    return calls


PROVIDER_REVISIONS = resource_path("pkg.crossplane.io/v1", "providerrevisions")
# The name Crossplane gives provider-kubernetes when it installs it as a dependency.
PROVIDER_PACKAGE = "crossplane-contrib-provider-kubernetes"


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
            endpoint = endpoints.get(_package_version(revision))
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
