"""A Job's pod as a podman+runc container, given what a kubelet gives it.

- **Image:** `ghcr.io/modelfleet/<name>:<tag>` is pulled as `<registry>/<name>:<tag>` from the
  loopback registry a release was published to, as a registry mirror configured on the node
  would serve it; a reference nothing published there cannot be run (`unpublished`).
- **Command line:** the container's `command` replaces the image's entrypoint and `args`
  follow, as in a pod.
- **Environment:** `value`s as given; `valueFrom` a Secret's or ConfigMap's key read from the
  workload cluster (a missing object or key: `NotReady`, as a kubelet waits); and the service
  address the kubelet adds, KUBERNETES_SERVICE_HOST/PORT, naming the workload API server.
- **Volumes:** a persistentVolumeClaim is a real directory per cluster, namespace and claim
  under the work folder (what the claim's volume holds outlives the pod); an emptyDir is one
  per pod. The service-account volume is a TokenRequest for the pod's ServiceAccount, with
  the cluster's CA and the namespace, at /var/run/secrets/kubernetes.io/serviceaccount.
- **Network:** the host's (everything here listens on loopback), and `extra_env` (the egress
  mirrors the cluster is configured with, e.g. HF_ENDPOINT), which the container's own env
  overrides.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .containers import Mount, Podman
from .kube import KubeClient, resource_path

Json = dict[str, Any]
PUBLISHER = "ghcr.io/modelfleet/"  # where a release's images are published
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_SECONDS = 3600


class NotReady(RuntimeError):
    """The pod cannot start yet (a Secret or ConfigMap it reads is missing)."""


class Unsupported(RuntimeError):
    """The pod asks for something this stand-in does not give (says what)."""


def mirrored(image: str, registry: str) -> str:
    """The reference the node's mirror serves `image` under ("" when it mirrors none)."""
    return registry + "/" + image[len(PUBLISHER) :] if image.startswith(PUBLISHER) else ""


def published(reference: str) -> bool:
    """Whether a plain-HTTP registry holds `reference` (host/repository:tag)."""
    host, _, rest = reference.partition("/")
    repository, _, tag = rest.rpartition(":")
    request = urllib.request.Request(
        f"http://{host}/v2/{repository}/manifests/{tag}",
        method="HEAD",
        headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class RunningPod:
    """One attempt's container: `podman run` in the foreground, its log kept."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    volumes: dict[str, Path]  # claim name -> its directory

    def exit_code(self) -> int | None:
        return self.popen.poll()


@dataclass
class PodRunner:
    """Runs pods of the workload clusters as containers of `podman`'s storage."""

    podman: Podman
    work: Path
    registry: str  # the loopback registry the releases are published to (host:port)
    extra_env: dict[str, str] = field(default_factory=dict)
    pulled: set[str] = field(default_factory=set)
    running: dict[str, RunningPod] = field(default_factory=dict)  # container name -> pod

    def unpublished(self, image: str) -> str:
        """Why `image` cannot run here ("" when it can)."""
        reference = mirrored(image, self.registry)
        if not reference:
            return f"{image} is not an image a release here publishes"
        if reference not in self.pulled and not published(reference):
            return f"{image} was never published ({reference} is not in the registry)"
        return ""

    def claim_dir(self, cluster: str, namespace: str, claim: str) -> Path:
        return self.work / "volumes" / cluster / namespace / claim

    def start(self, cluster: str, client: KubeClient, pod: Json, namespace: str, name: str) -> None:
        """Start the pod's one container as `name`; NotReady or Unsupported when it cannot."""
        spec = pod["spec"]
        (container,) = spec["containers"]
        unsupported = sorted(
            {"envFrom", "workingDir"} & set(container) | {"initContainers"} & set(spec)
        )
        if unsupported:
            raise Unsupported(f"pod fields not played here: {', '.join(unsupported)}")
        env = self._env(client, namespace, container.get("env") or [])
        folder = self.work / "pods" / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        volumes, claims = self._volumes(cluster, namespace, spec.get("volumes") or [], folder)
        mounts = [
            Mount(volumes[m["name"]], m["mountPath"], read_only=bool(m.get("readOnly")))
            for m in container.get("volumeMounts") or []
        ]
        if spec.get("automountServiceAccountToken", True):
            account = spec.get("serviceAccountName") or "default"
            mounts.append(
                Mount(
                    self._service_account(client, namespace, account, folder), SERVICE_ACCOUNT_DIR
                )
            )
        reference = mirrored(container["image"], self.registry)
        if reference not in self.pulled:
            self.podman.pull(reference)
            self.pulled.add(reference)
        server = urlparse(client.config.server)
        env = {
            **self.extra_env,
            **env,
            "KUBERNETES_SERVICE_HOST": server.hostname or "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": str(server.port or 443),
        }
        command = container.get("command")
        argv = self.podman.run_argv(
            name, reference, env=env, mounts=mounts, entrypoint=command,
            args=container.get("args") or [],
        )  # fmt: skip
        log = self.work / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            popen = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **self.podman.env}, start_new_session=True,
            )  # fmt: skip
        self.running[name] = RunningPod(name, popen, log, claims)

    def finished(self, name: str) -> int | None:
        """The exit code of a pod's container once it ended (it is forgotten then)."""
        pod = self.running.get(name)
        code = pod.exit_code() if pod else None
        if code is not None:
            del self.running[name]
        return code

    def kill(self, name: str) -> None:
        """SIGKILL the container (an OOM kill, a node lost): the attempt fails."""
        self.podman.call("kill", "--signal", "KILL", name, timeout=60)

    def discard(self, cluster: str, containers: list[str]) -> None:
        """A cluster goes: kill its `containers` and delete its volumes."""
        for name in containers:
            pod = self.running.pop(name, None)
            if pod is not None and pod.exit_code() is None:
                self.kill(name)
        shutil.rmtree(self.work / "volumes" / cluster, ignore_errors=True)

    def stop_all(self) -> None:
        for name, pod in list(self.running.items()):
            if pod.exit_code() is None:
                try:
                    self.kill(name)
                except (RuntimeError, subprocess.TimeoutExpired):
                    pod.popen.kill()
            try:
                pod.popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pod.popen.kill()
        self.running.clear()

    def _env(self, client: KubeClient, namespace: str, entries: list[Json]) -> dict[str, str]:
        env = {}
        for entry in entries:
            source = entry.get("valueFrom")
            if source is None:
                env[entry["name"]] = str(entry.get("value", ""))
                continue
            for kind, plural in (("secretKeyRef", "secrets"), ("configMapKeyRef", "configmaps")):
                ref = source.get(kind)
                if ref is None:
                    continue
                obj = client.get(resource_path("v1", plural, namespace, ref["name"])) or {}
                data = obj.get("data") or {}
                if ref["key"] in data:
                    value = data[ref["key"]]
                    env[entry["name"]] = (
                        base64.b64decode(value).decode() if plural == "secrets" else str(value)
                    )
                elif not ref.get("optional"):
                    raise NotReady(f"{plural} {namespace}/{ref['name']} has no key {ref['key']}")
                break
            else:
                raise Unsupported(f"env {entry['name']}: valueFrom {sorted(source)}")
        return env

    def _volumes(
        self, cluster: str, namespace: str, volumes: list[Json], folder: Path
    ) -> tuple[dict[str, Path], dict[str, Path]]:
        found, claims = {}, {}
        for volume in volumes:
            if "persistentVolumeClaim" in volume:
                claim = volume["persistentVolumeClaim"]["claimName"]
                path = self.claim_dir(cluster, namespace, claim)
                claims[claim] = path
            elif "emptyDir" in volume:
                path = folder / "volumes" / volume["name"]
            else:
                raise Unsupported(f"volume {volume['name']}: {sorted(volume)}")
            path.mkdir(parents=True, exist_ok=True)
            found[volume["name"]] = path
        return found, claims

    def _service_account(
        self, client: KubeClient, namespace: str, account: str, folder: Path
    ) -> Path:
        """A projected service-account volume: a fresh token, the CA and the namespace."""
        answer = client.create(
            resource_path("v1", "serviceaccounts", namespace, account) + "/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": TOKEN_SECONDS},
            },
        )
        target = folder / "serviceaccount"
        target.mkdir()
        (target / "token").write_text(answer["status"]["token"])
        shutil.copy(client.config.ca, target / "ca.crt")
        (target / "namespace").write_text(namespace)
        return target
