"""A pytest plugin: under CI (`CI=true`, as `.ci/run` and CI services set it) a skipped test
fails the run unless its reason matches a line of `.ci/allowed-skips.txt` (a regular
expression a line; `MODELFLEET_ALLOWED_SKIPS` names another file).

A skip that hides a check CI is meant to run (the upstream CRDs or the real Crossplane
binaries missing) would otherwise show as a green run. Generic on purpose: any test that
skips, today's or a future suite's, is held to the same list.
"""

import os
import re
from pathlib import Path

import pytest

from modelfleet_devtools.paths import REPO_ROOT

CI_ENV = "CI"
ALLOWED_ENV = "MODELFLEET_ALLOWED_SKIPS"
DEFAULT_ALLOWED = REPO_ROOT / ".ci" / "allowed-skips.txt"


def enforced() -> bool:
    return os.environ.get(CI_ENV, "").strip().lower() in ("true", "1", "yes")


def allowed_patterns(path: Path) -> list[re.Pattern[str]]:
    """The file's regular expressions (blank lines and `#` comments left out)."""
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text().splitlines())
    return [re.compile(line) for line in lines if line and not line.startswith("#")]


def skip_reason(report: pytest.TestReport) -> str:
    """The reason pytest recorded for a skip (`Skipped: ` removed)."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


class SkipGuard:
    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self.patterns = patterns
        self.unexpected: list[tuple[str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = skip_reason(report)
        if not any(p.search(reason) for p in self.patterns):
            self.unexpected.append((report.nodeid, reason))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.unexpected and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.unexpected:
            return
        terminalreporter.section("skipped under CI (not in the allowed list)", red=True)
        for nodeid, reason in self.unexpected:
            terminalreporter.line(f"{nodeid}: {reason}")
        terminalreporter.line(
            f"{len(self.unexpected)} test(s) skipped that CI must run: provide what they need, "
            f"or add their reason to {os.environ.get(ALLOWED_ENV) or DEFAULT_ALLOWED} with why "
            "CI cannot avoid it."
        )


def pytest_configure(config: pytest.Config) -> None:
    if enforced():
        path = Path(os.environ.get(ALLOWED_ENV) or DEFAULT_ALLOWED)
        config.pluginmanager.register(SkipGuard(allowed_patterns(path)), "modelfleet-skip-guard")
