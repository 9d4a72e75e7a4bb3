"""The real control plane for the end-to-end suite: started once per session, stopped by PID.

Skipped, with how to get them, where the real binaries are not to be had (../shared/realcp
beside the repository, or MODELFLEET_REALCP_BIN). The processes' logs are kept under the
session's work folder, which the summary names when an e2e test failed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelfleet_devtools.e2e.stack import RealControlPlane, link_binaries, start_control_plane
from modelfleet_devtools.realcp import SHARED_REALCP_DIR, RealcpUnavailable

# How often provider-kubernetes re-observes Objects (its default, 10m, only stretches the same
# sequence out), and Crossplane's poll for an XR whose function returned no TTL (ours always
# return one: docs/concepts.md, "How soon a change is seen"; docs/development.md).
CROSSPLANE_POLL = os.environ.get("MODELFLEET_E2E_CROSSPLANE_POLL", "10s")
PROVIDER_POLL = os.environ.get("MODELFLEET_E2E_PROVIDER_POLL", "2s")

_failed: list[str] = []
_work: list[Path] = []


@pytest.fixture(scope="session")
def real_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealControlPlane]:
    work = Path(os.environ.get("MODELFLEET_E2E_WORKDIR") or tmp_path_factory.mktemp("realcp"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        bins = link_binaries(work / "bin")
    except RealcpUnavailable as error:
        pytest.skip(f"real control plane binaries not found: {error}")
    _work.append(work)
    plane = start_control_plane(
        bins, SHARED_REALCP_DIR, work, crossplane_poll=CROSSPLANE_POLL, provider_poll=PROVIDER_POLL
    )
    try:
        yield plane
    finally:
        plane.stop()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed and "/e2e/" in report.nodeid.replace("\\", "/"):
        _failed.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _failed and _work:
        terminalreporter.write_line(
            f"e2e: {len(_failed)} failed; every process's log is in {_work[0] / 'logs'}"
        )
