"""modelfleet-scale-bench's sizes side by side (`--side-by-side`): one run at every size within
a working session, when each size watches its idle fleet for a whole round.

Each size runs as its own benchmark process, with its own control plane, in its own network
namespace (provider-kubernetes binds fixed ports, so two planes cannot share one). They all
register their fleets and watch them idle at once; what is measured there is each plane's own
processes' CPU, which other planes beside it barely change. The stagings, which are timed, run
one at a time, smallest first, each once every idle window is over: the parent tells a size
its turn by creating its turn file, and takes the next turn when that process has ended.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .scale_changes import say
from .scale_rows import ScaleRow

# How often a waiting process looks for its turn, and the parent for idle windows ended.
POLL_SECONDS = 5
NAMESPACE_PREFIX = "modelfleet-bench-"
SIZE_MODULE = "modelfleet_devtools.e2e.scale"  # the benchmark, run once per size
# A network namespace here has only its loopback: each size builds the release from the wheels
# in uv's cache, as an earlier build outside one left them (the e2e suite, modelfleet-release).
SIZE_ENV = {**os.environ, "UV_OFFLINE": "1"}


def namespace_for(n: int) -> str:
    return f"{NAMESPACE_PREFIX}{n}"


def ensure_network_namespace(name: str) -> bool:
    """A network namespace with its loopback up; needs root and iproute2. Whether this call made
    it (an existing one is used as it is)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        raise RuntimeError(
            f"`ip netns list` failed ({listed.stderr.strip()}): --side-by-side runs each size "
            "in its own network namespace, which needs root and iproute2"
        )
    made = name not in {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}
    if made:
        subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True)
    return made


@contextmanager
def network_namespaces(names: list[str]) -> Iterator[None]:
    """The named network namespaces for as long as the block runs; the ones it made are deleted
    after it, however it ends (ones that were there before are left as they were)."""
    made: list[str] = []
    try:
        for name in names:
            if ensure_network_namespace(name):
                made.append(name)
        yield
    finally:
        for name in made:
            subprocess.run(["ip", "netns", "delete", name], check=False)


def one_size(args: argparse.Namespace, n: int, turn: Path) -> list[str]:
    """The command of size `n`'s process under --side-by-side: in its network namespace, this
    benchmark at that size alone, with the same settings, staging on its turn."""
    # nsenter, not `ip netns exec`: that also remounts /sys, without the cgroup mounts runc
    # needs to start the functions' containers.
    argv = [
        "nsenter", f"--net=/run/netns/{namespace_for(n)}", sys.executable, "-m", SIZE_MODULE,
        "--clusters", str(n), "--work", str(args.work), "--changes-at", args.changes_at,
        "--limit-minutes", str(args.limit_minutes), "--idle-minutes", str(args.idle_minutes),
        "--connection-limit-seconds", str(args.connection_limit_seconds),
        "--steady-minutes", str(args.steady_minutes), "--turn", str(turn),
    ]  # fmt: skip
    if args.keep_requests:
        argv.append("--keep-requests")
    if args.hydrator_containers:
        argv.append("--hydrator-containers")
    if args.audit:
        argv.append("--audit")
    if args.check_interval:
        argv += ["--check-interval", args.check_interval]
    return argv


def idle_done(turn: Path) -> Path:
    return turn.with_name(f"{turn.name}.idle-done")


def row_file(turn: Path) -> Path:
    return turn.with_name(f"{turn.name}.row")


def wait_for_turn(turn: Path) -> None:
    """In a size's process, once its idle window is over: say so, then wait for its turn."""
    idle_done(turn).touch()
    say(f"idle window over; waiting for the turn to stage ({turn})")
    while not turn.exists():
        time.sleep(POLL_SECONDS)


def keep_row(turn: Path, row: ScaleRow) -> None:
    """In a size's process: its row, for the parent."""
    row_file(turn).write_bytes(pickle.dumps(row))


def _log_tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""


def run_side_by_side(
    sizes: list[int], turns: Path, command: Callable[[int, Path], list[str]]
) -> Iterator[ScaleRow]:
    """Start `command(n, turn)` for every size at once (its output in TURNS/nN.log), then give
    each its turn, smallest first, once every one has watched its idle fleet; yields the rows
    in that order. A process that fails stops the run, and says where its log is."""
    turns.mkdir(parents=True, exist_ok=True)
    for old in turns.glob("n*"):
        old.unlink()
    running: dict[int, tuple[subprocess.Popen[bytes], Path]] = {}
    try:
        for n in sizes:
            turn, log = turns / f"n{n}", turns / f"n{n}.log"
            with log.open("wb") as out:
                running[n] = (
                    subprocess.Popen(
                        command(n, turn), stdout=out, stderr=subprocess.STDOUT, env=SIZE_ENV
                    ),
                    log,
                )
            say(f"N = {n}: started beside the others, log {log}")

        def failed(n: int, what: str) -> RuntimeError:
            process, log = running[n]
            return RuntimeError(
                f"the benchmark at N = {n} {what} (exit {process.returncode}); "
                f"its log {log} ends:\n{_log_tail(log)}"
            )

        waiting = set(sizes)
        while waiting:
            for n in sorted(waiting):
                if running[n][0].poll() is not None:
                    raise failed(n, "ended before its idle window was over")
                if idle_done(turns / f"n{n}").exists():
                    waiting.discard(n)
                    say(f"N = {n}: idle window over ({len(waiting)} still watching theirs)")
            if waiting:
                time.sleep(POLL_SECONDS)
        for n in sorted(sizes):
            turn = turns / f"n{n}"
            say(f"N = {n}: staging, alone")
            turn.touch()
            process, _ = running[n]
            if process.wait() != 0 or not row_file(turn).exists():
                raise failed(n, "ended without its row")
            yield pickle.loads(row_file(turn).read_bytes())
    finally:
        for process, _ in running.values():
            if process.poll() is None:
                process.terminate()  # each stops its own control plane (scale.main's SIGTERM)
        for process, _ in running.values():
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
