"""Modelfleet installed as a platform team installs it: Crossplane's package manager runs our
Functions as pods.

The control-plane cluster is a real node (modelfleet_devtools.e2e.packaged) and Crossplane
core runs with its default package runtime. `modelfleet-release` publishes the packages to the
loopback registry under `<registry>/modelfleet`; docs/install/image-config.yaml, its prefix
replaced by that one as the docs say, and docs/install/modelfleet.yaml, as written, install
them. Nothing else is started or patched by the suite: the package manager pulls the
Configuration and its five Functions, makes each Function's Deployment and Service from the
runtime image embedded in its package, and dials it at its Service's DNS name.

provider-kubernetes (the Configuration's sixth dependency) is a Provider package too: its
runtime image built from ../shared/realcp's binary (e2e/provider_package.py), pulled through a
second ImageConfig (`xpkg.crossplane.io`, as getting-started's own-registry path has one) and
installed first with docs/install/provider-kubernetes.yaml as written, so its
DeploymentRuntimeConfig's flags reach the provider's container.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from modelfleet_devtools.e2e import packages
from modelfleet_devtools.e2e.crossplane import (
    CROSSPLANE_NAMESPACE,
    PROVIDER_POLL_INTERVAL,
    start_registry,
)
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.packaged import (
    CONTROL_PLANE_CLUSTER,
    PackagedPlane,
    kubectl_get_pkg,
    start_packaged_plane,
)
from modelfleet_devtools.e2e.processes import Processes, wait_for
from modelfleet_devtools.e2e.provider_package import publish_provider
from modelfleet_devtools.e2e.stack import E2E_EPOCH, RELEASE_BASE_CACHE, link_binaries
from modelfleet_devtools.paths import REPO_ROOT
from modelfleet_devtools.realcp import SHARED_REALCP_DIR, RealcpUnavailable
from modelfleet_devtools.release.build import ReleaseBuild, Tools

Json = dict[str, Any]
INSTALL = REPO_ROOT / "docs" / "install"
DOCS_PREFIX = "registry.example.com:5000/modelfleet"  # what image-config.yaml says to replace
FUNCTION_LABEL = "pkg.crossplane.io/function"  # on each Function's Deployment and pods
timings: dict[str, float] = {}


def documented(name: str) -> list[Json]:
    return [d for d in yaml.safe_load_all((INSTALL / name).read_text()) if d]


def version_installed() -> str:
    """The version docs/install/modelfleet.yaml installs (its package's tag)."""
    (configuration,) = documented("modelfleet.yaml")
    return str(configuration["spec"]["package"].rpartition(":")[2])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackagedPlane]:
    work = tmp_path_factory.mktemp("packaged")
    try:
        bins = link_binaries(work / "bin")
    except RealcpUnavailable as error:
        pytest.skip(f"real control plane binaries not found: {error}")
    processes = Processes(work / "logs")
    plane: PackagedPlane | None = None
    try:
        registry = start_registry(processes, bins, work)
        started = time.monotonic()
        build = ReleaseBuild(
            REPO_ROOT, f"{registry.host}/modelfleet", version_installed(),
            work / "release-build", Tools(crossplane=bins / "crossplane", crane=bins / "crane"),
            epoch=E2E_EPOCH, base_cache=RELEASE_BASE_CACHE,
        )  # fmt: skip
        build.run()
        publish_provider(
            bins / "crossplane", bins / "crane", registry, bins / PROVIDER_POLL_INTERVAL.binary,
            SHARED_REALCP_DIR / "crds" / PROVIDER_POLL_INTERVAL.crds, work,
        )  # fmt: skip
        timings["release built and pushed"] = time.monotonic() - started
        started = time.monotonic()
        plane = start_packaged_plane(
            processes, bins, SHARED_REALCP_DIR / "crds" / "crossplane", work, registry
        )
        timings["control-plane node and core up"] = time.monotonic() - started
        (mirror,) = documented("image-config.yaml")
        rewrite = mirror["spec"]["rewriteImage"]
        assert rewrite["prefix"] == DOCS_PREFIX
        rewrite["prefix"] = f"{registry.host}/modelfleet"
        upstream = packages.image_config(registry)
        upstream["metadata"] = {"name": "upstream-mirror"}
        upstream["spec"]["matchImages"] = [  # type: ignore[index]
            {"type": "Prefix", "prefix": packages.UPSTREAM_REGISTRY}
        ]
        apply(plane, [mirror, upstream])
        apply(plane, documented("provider-kubernetes.yaml"))
        apply(plane, documented("modelfleet.yaml"))
        yield plane
    finally:
        if plane is not None:
            print(f"\n{kubectl_get_pkg(plane.client)}")
            problems = plane.stop()
            assert not problems, problems
        processes.stop_all()
        print(f"\npackage runtime timings (s): {json.dumps(timings)}")


def apply(plane: PackagedPlane, documents: list[Json]) -> None:
    plane.client.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(documents))


def conditions(obj: Json | None) -> dict[str, str]:
    return {
        c["type"]: c["status"] for c in ((obj or {}).get("status") or {}).get("conditions") or []
    }


def function(plane: PackagedPlane, name: str) -> Json | None:
    return plane.client.get(resource_path("pkg.crossplane.io/v1", "functions", name=name))


def healthy(obj: Json | None) -> bool:
    return conditions(obj).get("Installed") == "True" and conditions(obj).get("Healthy") == "True"


def waited(plane: PackagedPlane, what: str, probe: Any, timeout: float) -> Any:
    def alive_and() -> Any:
        plane.node.check_alive()
        return probe()

    started = time.monotonic()
    result = wait_for(alive_and, what=what, timeout=timeout, every=3)
    timings[what] = time.monotonic() - started
    return result


def test_every_function_package_is_installed_and_healthy(installed: PackagedPlane) -> None:
    plane = installed
    waited(plane, "the five Functions INSTALLED and HEALTHY",
           lambda: all(healthy(function(plane, f)) for f in packages.FUNCTIONS), 900)  # fmt: skip
    listed = kubectl_get_pkg(plane.client)
    rows = {r[0]: r[1:3] for r in (line.split() for line in listed.splitlines()) if r}
    for name in packages.FUNCTIONS:
        assert rows.get(f"function.pkg.crossplane.io/{name}") == ["True", "True"], listed


def test_each_function_runs_as_a_pod_of_its_embedded_runtime_image(
    installed: PackagedPlane,
) -> None:
    plane = installed
    waited(plane, "the Functions healthy (again)",
           lambda: all(healthy(function(plane, f)) for f in packages.FUNCTIONS), 900)  # fmt: skip
    pods = plane.client.list(resource_path("v1", "pods", CROSSPLANE_NAMESPACE))
    deployments = plane.client.list(resource_path("apps/v1", "deployments", CROSSPLANE_NAMESPACE))
    for name in packages.FUNCTIONS:
        (deployment,) = [
            d for d in deployments
            if d["spec"]["selector"].get("matchLabels", {}).get(FUNCTION_LABEL) == name
        ]  # fmt: skip
        template = deployment["spec"]["template"]["spec"]
        (container,) = template["containers"]
        assert container["name"] == "package-runtime"
        package = f"{plane.registry.host}/modelfleet/{name}:{version_installed()}"
        assert container["image"] == package, container  # the resolved package reference
        assert (deployment.get("status") or {}).get("readyReplicas") == 1, deployment["status"]
        # The contract our image ran under: a non-root user, the server certificates read-only.
        secure = {**(template.get("securityContext") or {}),
                  **(container.get("securityContext") or {})}  # fmt: skip
        assert secure.get("runAsNonRoot") is True, secure
        mounts = [m for m in container.get("volumeMounts") or [] if m.get("readOnly")]
        assert mounts, container.get("volumeMounts")
        (pod,) = [
            p for p in pods
            if p["metadata"].get("labels", {}).get(FUNCTION_LABEL) == name
            and p["status"].get("phase") == "Running"
        ]  # fmt: skip
        assert pod["spec"]["nodeName"] == CONTROL_PLANE_CLUSTER
        assert all(s.get("ready") for s in pod["status"]["containerStatuses"])


def test_the_configuration_is_installed_and_serves_every_xr_kind(installed: PackagedPlane) -> None:
    plane = installed
    path = resource_path("pkg.crossplane.io/v1", "configurations", name="modelfleet")
    waited(plane, "the Configuration INSTALLED",
           lambda: conditions(plane.client.get(path)).get("Installed") == "True", 600)  # fmt: skip
    definitions = sorted(
        yaml.safe_load(d.read_text())["metadata"]["name"]
        for d in (REPO_ROOT / "apis").glob("*/definition.yaml")
    )
    crd = "apiextensions.k8s.io/v1"
    waited(plane, "every XR kind served", lambda: all(
        plane.client.get(resource_path(crd, "customresourcedefinitions", name=n))
        for n in definitions), 300)  # fmt: skip


def test_provider_kubernetes_runs_as_a_pod_with_the_runtime_configs_flags(
    installed: PackagedPlane,
) -> None:
    plane = installed
    path = resource_path("pkg.crossplane.io/v1", "providers", name="provider-kubernetes")
    waited(plane, "provider-kubernetes INSTALLED and HEALTHY",
           lambda: healthy(plane.client.get(path)), 600)  # fmt: skip
    (runtime_config,) = [
        d for d in documented("provider-kubernetes.yaml") if d["kind"] == "DeploymentRuntimeConfig"
    ]
    (flags,) = runtime_config["spec"]["deploymentTemplate"]["spec"]["template"]["spec"][
        "containers"
    ]
    deployments = plane.client.list(resource_path("apps/v1", "deployments", CROSSPLANE_NAMESPACE))
    (deployment,) = [
        d for d in deployments
        if d["spec"]["selector"].get("matchLabels", {}).get("pkg.crossplane.io/provider")
        == "provider-kubernetes"
    ]  # fmt: skip
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["name"] == flags["name"] == "package-runtime"
    assert set(flags["args"]) <= set(container.get("args") or []), container.get("args")
    assert (deployment.get("status") or {}).get("readyReplicas") == 1, deployment["status"]
