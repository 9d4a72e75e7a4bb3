"""Crossplane core, provider-kubernetes and a local OCI registry, as local processes."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import pki, provider_config, webhooks
from .kube import KubeClient, resource_path
from .processes import Processes, free_port, port_in_use, wait_for

CROSSPLANE_NAMESPACE = "crossplane-system"
ROOT_CA_SECRET = "crossplane-root-ca"
CLIENT_SECRET = "crossplane-tls-client"
FIXED_PROVIDER_PORTS = (8080, 9443)


@dataclass(frozen=True)
class ProviderBuild:
    """A provider-kubernetes binary of shared/realcp, with the CRDs built beside it."""

    binary: str
    crds: str  # its folder under shared/realcp/crds
    # Whether its metrics and webhook ports can be moved by flags (v1.2.1 has no such flags).
    movable_ports: bool


# The newest release crossplane-contrib has published: ignores crossplane.io/poll-interval.
PROVIDER_V1_2_1 = ProviderBuild("provider-kubernetes", "provider-kubernetes", movable_ports=False)
# Its main branch on crossplane-runtime v2.3.3: a Ready Object's crossplane.io/poll-interval
# sets how often that Object alone is observed (docs/inferencecluster.md, checkInterval).
PROVIDER_POLL_INTERVAL = ProviderBuild(
    "provider-kubernetes-350ef9a", "provider-kubernetes-350ef9a", movable_ports=True
)
# What the suite runs; one scenario swaps in v1.2.1 (tests/e2e/test_real_node_real.py).
SUITE_PROVIDER = PROVIDER_POLL_INTERVAL


def secret_files(client: KubeClient, name: str, folder: Path) -> dict[str, Path]:
    secret = client.get(resource_path("v1", "secrets", CROSSPLANE_NAMESPACE, name)) or {}
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for key, value in (secret.get("data") or {}).items():
        files[key] = folder / key
        files[key].write_bytes(base64.b64decode(value))
    return files


@dataclass
class Registry:
    """`crane registry serve` on loopback: what the package manager pulls packages from."""

    host: str  # 127.0.0.1:PORT, spoken to over plain HTTP


def start_registry(processes: Processes, bins: Path, work: Path) -> Registry:
    port = free_port()
    disk = work / "registry"
    disk.mkdir(parents=True, exist_ok=True)
    processes.start(
        "registry",
        [bins / "crane", "registry", "serve", "--address", f"127.0.0.1:{port}", "--disk", disk],
    )
    host = f"127.0.0.1:{port}"
    wait_for(
        lambda: (
            subprocess.run(
                [bins / "crane", "catalog", host], capture_output=True, timeout=10
            ).returncode
            == 0
        ),
        what="the local OCI registry",
        timeout=30,
    )
    return Registry(host)


def start_crossplane(
    processes: Processes,
    bins: Path,
    crds: Path,
    work: Path,
    client: KubeClient,
    *,
    poll_interval: str = "1m",
) -> pki.KeyPair:
    """`core init` then `core start` with the External runtime and its webhooks on, served on
    a free loopback port (webhooks.py); returns Crossplane's root CA once they answer."""
    webhook_port = free_port()  # never provider-kubernetes' fixed 9443
    core = init_core(processes, bins, crds, work, client, webhook_port)
    processes.start(
        "crossplane",
        [
            bins / "crossplane-core", "core", "start", "--package-runtime=External",
            "--webhook-port", str(webhook_port), "--tls-server-certs-dir", core.server_dir,
            "--tls-client-certs-dir", core.client_dir,
            "--xpkg-cache-dir", work / "xpkg-cache",
            "--metrics-port", str(free_port()), "--health-probe-port", str(free_port()),
            "--poll-interval", poll_interval,
        ],
        env=core.env,
    )  # fmt: skip
    webhooks.wait_serving(webhook_port, core.root_ca.cert)
    return core.root_ca


@dataclass(frozen=True)
class InitializedCore:
    """What `core init` left for `core start`: its env, Crossplane's root CA, and the client
    and webhook server certificate folders."""

    env: dict[str, str]
    root_ca: pki.KeyPair
    client_dir: Path
    server_dir: Path


def init_core(
    processes: Processes,
    bins: Path,
    crds: Path,
    work: Path,
    client: KubeClient,
    webhook_port: int,
    *,
    enter: Callable[[list[str]], list[str]] = lambda argv: argv,
    name: str = "crossplane-init",
) -> InitializedCore:
    """`core init` (run through `enter`) with its webhooks pointed at `webhook_port` on
    loopback, and the certificates `core start` needs written out."""
    env = {
        "KUBECONFIG": str(client.config.path),
        "POD_NAMESPACE": CROSSPLANE_NAMESPACE,
        "TLS_CA_SECRET_NAME": ROOT_CA_SECRET,
        "TLS_CLIENT_SECRET_NAME": CLIENT_SECRET,
        **webhooks.init_env(work / "webhook-configs", CROSSPLANE_NAMESPACE, webhook_port),
    }
    if not client.get(resource_path("v1", "namespaces", name=CROSSPLANE_NAMESPACE)):
        client.kubectl("create", "namespace", CROSSPLANE_NAMESPACE)
    # core init wants a real folder of CRDs, not a link to one.
    crd_dir = work / "crossplane-crds"
    shutil.copytree(crds, crd_dir, dirs_exist_ok=True)
    env["CRDS_PATH"] = str(crd_dir)
    for attempt in (1, 2):  # its first run can race the CRDs it has just created
        argv = enter([str(bins / "crossplane-core"), "core", "init"])
        init = processes.start(f"{name}-{attempt}", argv, env=env)
        if init.popen.wait(timeout=180) == 0:
            break
        if attempt == 2:
            raise RuntimeError(f"crossplane core init failed:\n{init.tail()}")
    (work / "xpkg-cache").mkdir(parents=True, exist_ok=True)  # core caches packages here
    ca_files = secret_files(client, ROOT_CA_SECRET, work / "crossplane-ca")
    root_ca = pki.KeyPair(ca_files["tls.crt"], ca_files["tls.key"])
    client_dir = work / "crossplane-client"
    secret_files(client, CLIENT_SECRET, client_dir)
    server_dir = webhooks.serving_certificate(
        root_ca, work / "crossplane-server", client, CROSSPLANE_NAMESPACE
    )
    if not webhooks.point_at_loopback(client, webhook_port, root_ca.cert):
        raise RuntimeError("crossplane core init wrote no webhook configuration to point at")
    return InitializedCore(env, root_ca, client_dir, server_dir)


def start_provider_kubernetes(
    processes: Processes,
    bins: Path,
    work: Path,
    client: KubeClient,
    build: ProviderBuild = SUITE_PROVIDER,
) -> None:
    """provider-kubernetes (`build`) as a local process, named `provider-kubernetes`, with the
    args of the DeploymentRuntimeConfig the docs install (provider_config.py) and nothing
    faster; its webhook certs are throwaway."""
    if build.movable_ports:
        ports = [
            "--metrics-bind-address", f"127.0.0.1:{free_port()}",
            "--webhook-port", str(free_port()),
        ]  # fmt: skip
    else:
        ports = []
        busy = [port for port in FIXED_PROVIDER_PORTS if port_in_use(port)]
        if busy:
            raise RuntimeError(
                f"{build.binary} needs ports {FIXED_PROVIDER_PORTS}, and {busy} are in use "
                "(another control plane of this suite still running?)"
            )
    certs = work / "provider-kubernetes-tls"
    if not (certs / "tls.crt").exists():
        ca = pki.make_ca(certs, "provider-ca")
        # Signed as tls.crt/tls.key: the names the provider reads from the folder.
        pki.sign(ca, certs, "tls", common_name="provider-kubernetes", sans=("IP:127.0.0.1",))
    processes.start(
        "provider-kubernetes",
        [
            bins / build.binary, *provider_config.recommended_args(), *ports,
            "--health-probe-bind-addr", f"127.0.0.1:{free_port()}",
            *(["--debug"] if os.environ.get("MODELFLEET_E2E_PROVIDER_DEBUG") == "1" else []),
        ],
        env={"KUBECONFIG": str(client.config.path), "TLS_SERVER_CERTS_DIR": str(certs)},
    )  # fmt: skip
