"""Local processes on free loopback ports, started and stopped by `modelfleet_cli.launch`,
with their logs kept."""

from __future__ import annotations

import atexit
import os
import signal
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from modelfleet_cli.launch import Launched

T = TypeVar("T")


_handed_out: set[int] = set()


def free_port() -> int:
    """A TCP port nothing listens on right now (the OS picks it), never one handed out before:
    the OS may pick a port again until the process it went to binds it, and gRPC servers bind
    with SO_REUSEPORT, so two functions given one port would both serve it, each answering
    calls meant for the other."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def wait_for(probe: Callable[[], T | None], *, what: str, timeout: float, every: float = 0.5) -> T:
    """Poll `probe` until it returns something truthy; fail naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            result = probe()
            if result:
                return result
        except Exception as error:  # a probe may fail until the thing is up
            last_error = error
        if time.monotonic() > deadline:
            detail = f" (last error: {last_error})" if last_error else ""
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
        time.sleep(every)


@dataclass
class Process(Launched):
    """One started binary (modelfleet_cli.launch), and the container it runs, if any."""

    container: str | None = None  # the container a `podman run` process runs in the foreground
    container_pid: int | None = None  # its first process, on this host, once it runs


@dataclass
class Processes:
    """Every process a control plane started, in start order, with one log folder."""

    log_dir: Path
    started: list[Process] = field(default_factory=list)

    def __post_init__(self) -> None:
        # However the session ends (an interrupted fixture, an error in start-up), nothing
        # started here outlives the Python process that started it.
        atexit.register(self.stop_all)

    def start(
        self,
        name: str,
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        container: str | None = None,
    ) -> Process:
        process = Process.start(
            name, argv, self.log_dir / f"{name}.log", env=env, cwd=cwd, container=container
        )
        self.started.append(process)
        return process

    def restart(self, process: Process) -> Process:
        """Start a stopped process again, as it was started (same flags, same ports)."""
        process.stop()
        self.started.remove(process)
        return self.start(process.name, process.argv, env=process.env, container=process.container)

    def kill_together(self, processes: Sequence[Process]) -> None:
        """Kill processes whose state is thrown away (a workload cluster no test reads again):
        no graceful shutdown to wait for (an API server whose etcd is going waits out its
        grace period). Forgotten first, so that `dead` never lists them meanwhile."""
        for process in processes:
            self.started.remove(process)
        for process in processes:
            process.terminate(signal.SIGKILL)
        for process in processes:
            process.wait_stopped()

    def retire(self, processes: Sequence[Process]) -> None:
        """Stop processes for good (SIGTERM, as Kubernetes stops a pod), forgotten first."""
        for process in processes:
            self.started.remove(process)
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait_stopped()

    def named(self, name: str) -> Process:
        return next(p for p in self.started if p.name == name)

    def stop_all(self) -> None:
        """Stop in reverse start order: clients before the API server, etcd last. A second
        Ctrl-C or SIGTERM meanwhile does not cut it short (that would orphan the rest)."""
        previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            for process in reversed(self.started):
                process.stop()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def dead(self) -> list[Process]:
        return [p for p in self.started if not p.alive()]
