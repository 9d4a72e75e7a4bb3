"""The one launcher: a process's output lands in its log, and stopping it stops what it
started too, a process that ignores SIGTERM included (after the grace period)."""

import os
import sys
import time
from pathlib import Path

import pytest
from modelfleet_cli.launch import Launched

# Prints, starts a child that prints its pid (and sleeps), and sleeps; `ignore`: both
# ignore SIGTERM.
PARENT = """
import signal, subprocess, sys, time
if sys.argv[1] == "ignore":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("parent up", flush=True)
child = "import signal, sys, time, os\\n"
if sys.argv[1] == "ignore":
    child += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
child += "print('child', os.getpid(), flush=True)\\ntime.sleep(600)"
subprocess.Popen([sys.executable, "-c", child])
time.sleep(600)
"""


def child_pid(process: Launched) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in process.tail().splitlines():
            if line.startswith("child "):
                return int(line.split()[1])
        time.sleep(0.1)
    raise AssertionError(f"no child reported: {process.tail()!r}")


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waits for its parent: not running
        return stat.read().split()[2] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("mode", "grace"), [("plain", 10.0), ("ignore", 0.5)])
def test_stopping_a_launched_process_stops_what_it_started(tmp_path: Path, mode, grace):
    log = tmp_path / "logs" / "parent.log"
    process = Launched.start("parent", [sys.executable, "-c", PARENT, mode], log)
    child = child_pid(process)
    assert process.alive() and running(child)
    assert "parent up" in process.tail()

    process.stop(grace)

    assert not process.alive()
    deadline = time.monotonic() + 10
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(child)
    assert process.argv[-1] == mode and log.exists()


def test_the_environment_given_is_added_and_remembered(tmp_path: Path):
    code = "import os; print(os.environ['LAUNCH_TEST'], 'PATH' in os.environ)"
    process = Launched.start(
        "env", [sys.executable, "-c", code], tmp_path / "env.log", env={"LAUNCH_TEST": "given"}
    )
    process.popen.wait(timeout=30)
    assert process.tail() == "given True"
    assert process.env == {"LAUNCH_TEST": "given"}
