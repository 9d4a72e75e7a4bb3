"""Starting a local process with its output kept in a log file, and stopping it with what it
started: the one launcher behind the functions `render` and `simulate` start, the e2e
control plane's processes and the tests' servers.

A process is started in its own session (its own process group), so stopping it reaches
its children too (`uv run` starts the script as a child); its stdout and stderr go to a
file, never to a pipe nobody reads (a chatty process would block once the pipe is full).
Stopping is SIGTERM to the group, then SIGKILL to what is left after a grace period.
"""

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

STOP_GRACE_SECONDS = 10.0


@dataclass
class Launched:
    """One started process: its name, its log file and how it was started."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # what was added to this environment

    @classmethod
    def start(
        cls,
        name: str,
        argv: Sequence[str | os.PathLike[str]],
        log: Path,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        **more: Any,
    ) -> Self:
        """Start `argv` with this environment and `env` added, its output appended to
        `log`; `more`: the fields a subclass adds."""
        log.parent.mkdir(parents=True, exist_ok=True)
        command = [str(a) for a in argv]
        with log.open("ab") as out:
            popen = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                cwd=cwd,
                start_new_session=True,  # its own group: stop() reaches its children too
            )
        return cls(name, popen, log, command, dict(env or {}), **more)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """SIGTERM the process group, then SIGKILL what is left after `grace` seconds."""
        self.terminate()
        self.wait_stopped(grace)

    def terminate(self, sig: signal.Signals = signal.SIGTERM) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):  # gone meanwhile
                os.killpg(self.popen.pid, sig)

    def wait_stopped(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Wait for a terminated process; SIGKILL its group after `grace` seconds."""
        if not self.alive():
            return
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=grace)

    def tail(self, lines: int = 40) -> str:
        """The last `lines` lines of its log ("" when there is none)."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
