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

Then faults on this path, each losing nothing, on one fleet (e2e/packaged_fleet.py):
InferenceClusters whose workload cluster is the control-plane cluster itself, reached by the
provider's pod through a kubeconfig Secret. That is the smallest fleet whose reconciles are real
work on both kinds of pod: each calls the compose-inference-cluster pod, and the provider's pod
makes the workload namespace and the hydrator's ServiceAccount, Role and RoleBinding on a real
API server. No ModelCache: its hydration Job on a real node is test_real_node_real's; here it
would add the Hub's egress and the storage provisioner to this plane and exercise no other pod
of the package runtime. Each fault is watched at about 1 s polls, every XR poked each poll (an
annotation) so that it is reconciled all through the fault; nothing composed (an Object, or
what an Object made, by uid) may go:

- the Function's pod SIGKILLed and deleted (grace 0) just after a new XR is applied: its
  Deployment's next pod serves, every XR ends Ready and Synced, the new one too;
- a new release of the Function (its package rebuilt under v0.1.1, another digest) taken by
  changing the Function's `spec.package`: the package manager starts the new revision's
  Deployment and deletes the old one, whose pod exits 0 on SIGTERM; no XR is ever un-Ready;
- the provider's pod SIGKILLed and deleted: its Deployment's next pod serves, no XR is ever
  un-Ready, and a new XR applied meanwhile is made by the new pod.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
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
from modelfleet_devtools.e2e.packaged_fleet import (
    INFERENCE_CLUSTERS,
    PodWatch,
    Watch,
    apply,
    composed,
    conditions,
    connect_to_itself,
    force_delete,
    inference_cluster,
    package_pods,
    push_rebuilt,
    serving_pod,
    stopped,
    warnings_since,
    workload_namespace,
    xr_conditions,
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


def function(plane: PackagedPlane, name: str) -> Json | None:
    return plane.client.get(resource_path("pkg.crossplane.io/v1", "functions", name=name))


def healthy(obj: Json | None) -> bool:
    return conditions(obj).get("Installed") == "True" and conditions(obj).get("Healthy") == "True"


def waited(plane: PackagedPlane, what: str, probe: Any, timeout: float, every: float = 2) -> Any:
    def alive_and() -> Any:
        plane.node.check_alive()
        return probe()

    started = time.monotonic()
    result = wait_for(alive_and, what=what, timeout=timeout, every=every)
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


# The faults, on one fleet (packaged_fleet.py): InferenceClusters whose workload cluster is the
# control-plane cluster itself. Each fault is watched at 1 s polls that also poke every XR, so
# that its Function and the provider are called all through it.
FAULTED = "compose-inference-cluster"  # the Function every XR of the fleet calls
PROVIDER_LABEL = "pkg.crossplane.io/provider"
NEXT_VERSION = "v0.1.1"  # the rebuilt release of FAULTED


@pytest.fixture(scope="module")
def fleet(installed: PackagedPlane) -> PackagedPlane:
    """The first XR, Ready, once every package is healthy."""
    plane = installed
    provider = resource_path("pkg.crossplane.io/v1", "providers", name="provider-kubernetes")
    waited(plane, "every package HEALTHY", lambda: healthy(plane.client.get(provider))
           and all(healthy(function(plane, f)) for f in packages.FUNCTIONS), 900)  # fmt: skip
    connect_to_itself(plane)
    apply(plane, [inference_cluster("fleet-a")])
    waited(plane, "the first XR Ready", lambda: all_ready(plane, ["fleet-a"]), 300, every=1)
    return plane


def all_ready(plane: PackagedPlane, names: list[str]) -> bool:
    return all(xr_conditions(plane, n).get("Ready") == "True" for n in names)


def xr_names(plane: PackagedPlane) -> list[str]:
    return sorted(x["metadata"]["name"] for x in plane.client.list(INFERENCE_CLUSTERS))


def replaced(plane: PackagedPlane, label: str, value: str, old: Json) -> Json | None:
    pod = serving_pod(plane, label, value)
    return pod if pod is not None and pod["metadata"]["uid"] != old["metadata"]["uid"] else None


def kill_and_watch(plane: PackagedPlane, label: str, value: str, new_xr: str, what: str) -> Watch:
    """SIGKILL the package's serving pod and delete it (grace 0) right after a new XR is
    applied; poll until its Deployment's next pod serves and every XR, the new one too, is
    Ready and Synced."""
    old = waited(plane, f"{value} serving", lambda: serving_pod(plane, label, value), 300)
    watch = Watch(plane, composed(plane), steady=xr_names(plane))
    began = datetime.now(UTC).replace(microsecond=0)
    apply(plane, [inference_cluster(new_xr)])
    killed = plane.node.kill_container(old)
    force_delete(plane, old)
    assert killed, "no process of the pod's container was found to kill"

    def replaced_and_ready() -> bool:
        return watch.poll() or bool(
            replaced(plane, label, value, old) and all_ready(plane, xr_names(plane))
            and all(xr_conditions(plane, n).get("Synced") == "True" for n in xr_names(plane))
        )  # fmt: skip

    waited(plane, what, replaced_and_ready, 300, every=1)
    assert not watch.problems(), watch.problems()
    assert replaced(plane, label, value, old), f"{value}'s pod was not replaced"
    assert f"Namespace/{workload_namespace(new_xr)}" in composed(plane), "the new XR made nothing"
    print(f"\n{what}: {watch.polls} polls, reconciles failed meanwhile: {sorted(watch.unsynced)}")
    print("\n".join(["warnings meanwhile:", *warnings_since(plane, began)]))
    return watch


def test_a_function_pod_killed_mid_reconcile_is_replaced_and_the_xrs_go_on(
    fleet: PackagedPlane,
) -> None:
    kill_and_watch(fleet, FUNCTION_LABEL, FAULTED, "fleet-b",
                   "a killed Function pod replaced, every XR Ready")  # fmt: skip


def test_a_new_function_release_moves_it_to_a_new_deployment_with_no_xr_going_unready(
    fleet: PackagedPlane,
) -> None:
    plane = fleet
    installed_package = f"{plane.registry.host}/modelfleet/{FAULTED}:{version_installed()}"
    rebuilt = push_rebuilt(plane.work / "bin" / "crane", installed_package, NEXT_VERSION)
    old = waited(
        plane, f"{FAULTED} serving", lambda: serving_pod(plane, FUNCTION_LABEL, FAULTED), 300
    )
    grace = old["spec"].get("terminationGracePeriodSeconds", 30)
    pods = PodWatch(plane, f"{FUNCTION_LABEL}={FAULTED}", plane.work / "rollout-pods.json")
    watch = Watch(plane, composed(plane), steady=xr_names(plane))
    package = str(function(plane, FAULTED)["spec"]["package"]).partition("@")[0]  # type: ignore[index]
    name, _, tag = package.rpartition(":")
    assert tag == version_installed(), package
    # What a platform team does to take a new release of one Function.
    plane.client.merge_patch(resource_path("pkg.crossplane.io/v1", "functions", name=FAULTED),
                             {"spec": {"package": f"{name}:{NEXT_VERSION}"}})  # fmt: skip
    old_uid = old["metadata"]["uid"]

    def rolled() -> bool:
        if watch.poll():
            return True
        pods_now = package_pods(plane, FUNCTION_LABEL, FAULTED)
        pod = replaced(plane, FUNCTION_LABEL, FAULTED, old)
        return bool(
            all(p["metadata"]["uid"] != old_uid for p in pods_now)
            and pod and pod["spec"]["containers"][0]["image"] == rebuilt
            and healthy(function(plane, FAULTED))
            and all(xr_conditions(plane, n).get("Synced") == "True" for n in xr_names(plane))
        )  # fmt: skip

    try:
        waited(plane, "the Function moved to the new release's Deployment", rolled, 400, every=1)
    finally:
        states = pods.stop()
    assert not watch.problems(), watch.problems()
    deployments = [
        d for d in plane.client.list(resource_path("apps/v1", "deployments", CROSSPLANE_NAMESPACE))
        if d["spec"]["selector"].get("matchLabels", {}).get(FUNCTION_LABEL) == FAULTED
    ]  # fmt: skip
    assert [d["spec"]["template"]["spec"]["containers"][0]["image"] for d in deployments] == [
        rebuilt
    ]
    # The old pod stopped on SIGTERM and exited 0, well inside its grace period (a function
    # that ignored SIGTERM would be SIGKILLed at the end of it: exit 137, reason Error).
    ended, took = stopped(states, old_uid)
    timings["old Function pod: deletion asked to its exit"] = took
    assert (ended.get("exitCode"), ended.get("reason")) == (0, "Completed"), ended
    assert 0 <= took < grace - 5, (took, grace)
    print(f"\nrollout: {watch.polls} polls, reconciles failed meanwhile: {sorted(watch.unsynced)}")


def test_the_providers_pod_killed_is_replaced_and_the_xrs_stay_ready(
    fleet: PackagedPlane,
) -> None:
    kill_and_watch(fleet, PROVIDER_LABEL, "provider-kubernetes", "fleet-c",
                   "a killed provider pod replaced, every XR Ready")  # fmt: skip
