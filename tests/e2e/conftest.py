"""The real control plane for the end-to-end suite: started once per session, stopped by PID.

Skipped, with how to get them, where the real binaries are not to be had (../shared/realcp
beside the repository, or MODELFLEET_REALCP_BIN). The processes' logs are kept under the
session's work folder, which the summary names when an e2e test failed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from modelfleet_devtools.e2e.containers import ContainersUnavailable
from modelfleet_devtools.e2e.fleet import apply_fleet
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.quickstart import CLUSTER, QuickstartFleet
from modelfleet_devtools.e2e.release import ReleaseUnavailable, current_release, previous_release
from modelfleet_devtools.e2e.stack import RealControlPlane, link_binaries, start_control_plane
from modelfleet_devtools.e2e.upgrade import upgrade
from modelfleet_devtools.paths import EXAMPLES_DIR
from modelfleet_devtools.realcp import SHARED_REALCP_DIR, RealcpUnavailable
from modelfleet_devtools.release.rootfs import RootfsUnavailable

# Crossplane's poll for an XR whose function returned no TTL (ours always return one:
# docs/concepts.md, "How soon a change is seen"; docs/development.md). provider-kubernetes runs
# with the configuration the docs install (docs/install/provider-kubernetes.yaml), no faster.
CROSSPLANE_POLL = os.environ.get("MODELFLEET_E2E_CROSSPLANE_POLL", "10s")

_failed: list[str] = []
_work: list[Path] = []


# A test asking for this fixture gets the control plane with the previous release installed
# (modelfleet_devtools.e2e.release); it runs before every other e2e test, which get the current
# release (`real_control_plane`) once it has upgraded the plane.
PREVIOUS_RELEASE_FIXTURE = "previous_release_plane"
_unavailable: list[str] = []


def _upgrades(item: pytest.Item) -> bool:
    return PREVIOUS_RELEASE_FIXTURE in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the tests of the previous release before the first e2e test of the session."""
    first = next((i for i, item in enumerate(items) if "/e2e/" in _nodepath(item)), None)
    if first is None:
        return
    upgrading = [item for item in items if _upgrades(item)]
    rest = [item for item in items[first:] if not _upgrades(item)]
    items[first:] = [*upgrading, *rest]


def _nodepath(item: pytest.Item) -> str:
    return item.nodeid.replace("\\", "/")


@pytest.fixture(scope="session")
def control_plane_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealControlPlane]:
    """The session's control plane, started with the previous release installed when a test
    of this session upgrades it, else with the current one."""
    work = Path(os.environ.get("MODELFLEET_E2E_WORKDIR") or tmp_path_factory.mktemp("realcp"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        bins = link_binaries(work / "bin")
    except RealcpUnavailable as error:
        pytest.skip(f"real control plane binaries not found: {error}")
    _work.append(work)
    release = current_release()
    if any(_upgrades(item) for item in request.session.items):
        try:
            release = previous_release(work)
        except ReleaseUnavailable as error:  # the upgrade test fails saying so; others run
            _unavailable.append(str(error))
    try:
        plane = start_control_plane(
            bins, SHARED_REALCP_DIR, work, crossplane_poll=CROSSPLANE_POLL, release=release,
        )  # fmt: skip
    except (ContainersUnavailable, RootfsUnavailable) as error:
        pytest.skip(f"container tools not installed: {error}")
    try:
        yield plane
        plane.finish_chores()
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def previous_release_plane(control_plane_stack: RealControlPlane) -> RealControlPlane:
    if _unavailable:
        pytest.fail(_unavailable[0], pytrace=False)
    assert control_plane_stack.release.name == "previous", (
        "the previous release is installed only before any test has upgraded the plane"
    )
    return control_plane_stack


@pytest.fixture(scope="session")
def real_control_plane(control_plane_stack: RealControlPlane) -> RealControlPlane:
    """The control plane with the current release installed (upgraded to it if need be)."""
    if control_plane_stack.release.name != "current":
        upgrade(control_plane_stack, current_release())
    return control_plane_stack


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed and "/e2e/" in report.nodeid.replace("\\", "/"):
        _failed.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _failed and _work:
        terminalreporter.write_line(
            f"e2e: {len(_failed)} failed; every process's log is in {_work[0] / 'logs'}"
        )


def retain(obj: dict[str, Any]) -> None:
    """A ModelCache whose claims outlive it (`reclaimPolicy: Retain`)."""
    if obj["kind"] == "ModelCache":
        obj["spec"].setdefault("storage", {})["reclaimPolicy"] = "Retain"


@pytest.fixture(scope="module")
def quickstart_fleet(real_control_plane: RealControlPlane) -> Iterator[QuickstartFleet]:
    """The quickstart, its cache's claims retained, Ready; clusters a test added go after."""
    plane = real_control_plane
    objects = apply_fleet(plane, EXAMPLES_DIR / "quickstart", edit=retain)
    quickstart = QuickstartFleet(plane, objects)
    try:
        wait_for(quickstart.everything_ready, what="the quickstart Ready", timeout=300, every=3)
        yield quickstart
    finally:
        for name in list(plane.clusters.clusters):
            if name != CLUSTER:
                plane.clusters.discard(name)
