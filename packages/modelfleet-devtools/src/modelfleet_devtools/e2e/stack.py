"""The whole private control plane, started in order and stopped by PID."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..realcp import realcp_binary
from ..release import images
from ..release.build import HYDRATOR, ReleaseBuild, Tools
from . import crossplane, functions, packages
from .containers import Podman
from .kube import KubeClient, resource_path
from .kubernetes import start_kubernetes
from .pods import PodRunner, mirrored
from .processes import Processes, wait_for
from .release import Release, current_release
from .sources import start_sources
from .workload import WorkloadClusters

BINARIES = (
    "etcd", "kube-apiserver", "kube-controller-manager", "kubectl",
    "crossplane-core", "crossplane", "crane",
    crossplane.PROVIDER_V1_2_1.binary, crossplane.PROVIDER_POLL_INTERVAL.binary,
    "kubelet", "kube-scheduler", "kube-proxy", "coredns",  # a real workload node's (node.py)
    "lws-controller",  # a real node's LeaderWorkerSet, when its cluster asks (node_lws.py)
)  # fmt: skip

# The upstream CRDs (pinned files in shared/schemas) every workload cluster is given:
# LeaderWorkerSet for multi-node groups, Gateway API and the Inference Extension for routes
# and pools.
WORKLOAD_CLUSTER_CRDS = (
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    "gateway.networking.k8s.io_gatewayclasses.yaml",
    "gateway.networking.k8s.io_gateways.yaml",
    "gateway.networking.k8s.io_httproutes.yaml",
    "gateway.networking.k8s.io_referencegrants.yaml",
    "inference.networking.k8s.io_inferencepools.yaml",
)

# The Debian base is made once per recipe and kept (docs/development.md): both releases of a
# session share it, and a run in a network namespace without Debian's mirror can use it.
RELEASE_BASE_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "modelfleet" / "release-base"
)


# Every file time in the images the suite builds: one for every commit, so the cached base
# serves them all (file times change no behaviour; reproducibility is tests/test_release_images).
E2E_EPOCH = 1_700_000_000


@dataclass
class RealControlPlane:
    """A running control plane: its API server client, its processes and their logs."""

    work: Path
    client: KubeClient
    processes: Processes
    clusters: WorkloadClusters
    bins: Path
    registry: crossplane.Registry
    runtime: functions.FunctionRuntime
    release: Release  # the one installed
    chores: list[tuple[str, threading.Thread, list[BaseException]]] = field(default_factory=list)

    def apply(self, manifest: str | dict[str, object] | list[dict[str, object]]) -> str:
        text = (
            manifest
            if isinstance(manifest, str)
            else yaml.safe_dump_all(manifest if isinstance(manifest, list) else [manifest])
        )
        return self.client.kubectl("apply", "--server-side", "-f", "-", stdin=text)

    @property
    def endpoints(self) -> dict[str, str]:
        """The installed release's functions: name -> endpoint."""
        return self.runtime.served.get(self.release.version, {})

    def stop(self) -> None:
        self.clusters.stop()
        self.processes.stop_all()
        self.runtime.podman.remove_all()

    def check_alive(self, *, allowed: tuple[str, ...] = ()) -> None:
        """Fail, with the log tails, if a process died (`allowed`: ones stopped on purpose);
        a function container that died is restarted instead, as its pod would be."""
        self.runtime.restart_crashed()
        dead = [
            p
            for p in self.processes.dead()
            if not p.name.startswith("crossplane-init") and p.name not in allowed
        ]
        if dead:
            raise RuntimeError(
                "stopped unexpectedly: "
                + "; ".join(f"{p.name} (log {p.log}):\n{p.tail(15)}" for p in dead)
            )

    def in_background(self, what: str, chore: Callable[[], None]) -> None:
        """Run `chore` on a thread of its own, alongside the next test (a fleet's deletion);
        `finish_chores` waits for it and says if it failed."""
        failed: list[BaseException] = []

        def run() -> None:
            try:
                chore()
            except BaseException as error:
                failed.append(error)

        thread = threading.Thread(target=run, name=what, daemon=True)
        thread.start()
        self.chores.append((what, thread, failed))

    def finish_chores(self, timeout: float = 300) -> None:
        """Wait for every background chore; raise naming those that failed."""
        failures = []
        for what, thread, failed in self.chores:
            thread.join(timeout)
            if thread.is_alive():
                failures.append(f"{what}: still running after {timeout:.0f}s")
            failures += [f"{what}: {error!r}" for error in failed]
        self.chores.clear()
        if failures:
            raise RuntimeError("; ".join(failures))

    def run_provider(self, build: crossplane.ProviderBuild) -> None:
        """Replace the running provider-kubernetes with `build`, as a platform team changes its
        package: the same CRDs and Objects, taken over by the other binary."""
        self.processes.retire([self.processes.named("provider-kubernetes")])
        crossplane.start_provider_kubernetes(
            self.processes, self.bins, self.work, self.client, build
        )

    def point_revisions(self) -> list[str]:
        """Play the package runtime once (FunctionRuntime.reconcile); the packages not served."""
        return self.runtime.reconcile(self.client)


def _installed(client: KubeClient, kind: str, name: str) -> bool:
    path = resource_path("pkg.crossplane.io/v1", kind, name=name)
    conditions = ((client.get(path) or {}).get("status") or {}).get("conditions") or []
    return {c["type"]: c["status"] for c in conditions}.get("Healthy") == "True"


def release_installed(client: KubeClient, release: Release) -> bool:
    """The modelfleet Configuration is Healthy and every XR kind `release` defines is served."""
    return _installed(client, "configurations", "modelfleet") and all(
        client.get(resource_path("apiextensions.k8s.io/v1", "customresourcedefinitions", name=n))
        for n in release.xrd_names()
    )


def link_binaries(folder: Path) -> Path:
    """One folder holding every real binary the control plane runs (links to where they are)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in BINARIES:
        link = folder / name
        if not link.exists():
            link.symlink_to(realcp_binary(name))
    return folder


def configuration(version: str) -> dict[str, object]:
    """The Configuration a platform team applies to install (or upgrade to) `version`."""
    return {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Configuration",
        "metadata": {"name": "modelfleet"},
        "spec": {"package": packages.package_name("modelfleet", version)},
    }


def publish(plane: RealControlPlane, release: Release) -> None:
    """Build `release` as `modelfleet-release` does and push it to the local registry; the
    package runtime then runs the function packages of its version.

    Its hydrator image is also tagged as the image its Jobs name by default, where that is
    another tag (v0.1.0 composed `model-hydrator:0.1.0` but was published as `v0.1.0`): the
    Jobs of a release installed before the upgrade run that release's own hydrator."""
    tools = Tools(crossplane=plane.bins / "crossplane", crane=plane.bins / "crane")
    build = ReleaseBuild(
        release.root, plane.registry.host, release.version,
        plane.work / "release-build" / release.name, tools, epoch=E2E_EPOCH,
        base_cache=RELEASE_BASE_CACHE,
    )  # fmt: skip
    built = build.run()
    hydrator = next(a for a in built if a.name == HYDRATOR)
    composed = mirrored(release.default_hydrator_image(), plane.registry.host)
    if composed and composed != hydrator.reference:
        images.tag(tools.crane, hydrator.pinned, composed.rpartition(":")[2])
    plane.runtime.publishes(release)


def start_control_plane(
    bins: Path,
    shared_realcp: Path,
    work: Path,
    *,
    crossplane_poll: str = "1m",
    release: Release | None = None,
    apiserver_flags: Sequence[str] = (),
) -> RealControlPlane:
    """Start everything and install Modelfleet `release` (this checkout unless told) from its
    Configuration package, as its users did.

    `crossplane_poll` is Crossplane's --poll-interval, which applies only to an XR whose
    functions returned no response TTL (ours return one: docs/concepts.md). provider-kubernetes
    runs with the recommended configuration the docs install (provider_config.py).
    `apiserver_flags` go to the control plane's API server (an audit log, say)."""
    release = release or current_release()
    processes = Processes(work / "logs")
    try:
        kube = start_kubernetes(
            processes, bins, work / "control-plane", apiserver_flags=apiserver_flags
        )
        client = kube.client
        registry = crossplane.start_registry(processes, bins, work)
        provider_crds = shared_realcp / "crds" / crossplane.SUITE_PROVIDER.crds
        packages.push(
            bins / "crane",
            registry,
            packages.build_provider(bins / "crossplane", provider_crds, work),
        )
        root_ca = crossplane.start_crossplane(
            processes, bins, shared_realcp / "crds" / "crossplane", work, client,
            poll_interval=crossplane_poll,
        )  # fmt: skip
        schemas = shared_realcp.parent / "schemas"
        workload_crds = [schemas / name for name in WORKLOAD_CLUSTER_CRDS]
        podman = Podman.under(work / "podman")
        sources = start_sources(registry.host)
        pods = PodRunner(podman, work, registry.host, sources.node_env())
        clusters = WorkloadClusters(processes, bins, work, client, workload_crds, pods, sources)
        certs = functions.serving_certificates(root_ca, work, client)
        runtime = functions.FunctionRuntime(processes, podman, certs, work, registry.host)
        plane = RealControlPlane(
            work, client, processes, clusters, bins, registry, runtime, release
        )
        publish(plane, release)
        plane.apply(packages.image_config(registry))
        plane.apply(configuration(release.version))

        def revisions_pointed() -> bool:
            plane.check_alive()
            return not plane.point_revisions()

        wait_for(revisions_pointed, what="the four FunctionRevisions", timeout=240, every=2)
        wait_for(
            lambda: client.get(
                resource_path("apiextensions.k8s.io/v1", "customresourcedefinitions",
                              name="objects.kubernetes.m.crossplane.io")
            ),
            what="provider-kubernetes' CRDs from its package",
            timeout=240,
            every=2,
        )  # fmt: skip
        crossplane.start_provider_kubernetes(processes, bins, work, client)

        def installed() -> bool:
            plane.check_alive()
            plane.point_revisions()
            return release_installed(client, release)

        wait_for(installed, what="the modelfleet Configuration to be Healthy", timeout=300, every=2)
        return plane
    except BaseException:
        processes.stop_all()
        if "sources" in locals():
            sources.stop()
        if "podman" in locals():
            podman.remove_all()
        raise
