"""The cgroup a real node's kubelet puts its pods under (`cgroupRoot`), one per node.

This machine mounts cgroup v1, one hierarchy per controller under /sys/fs/cgroup. The kubelet
wants its root to exist in each; it is made before the kubelet starts and removed, deepest
first, once every process of the node is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

CGROUP_FS = Path("/sys/fs/cgroup")
# What cgroup v1 leaves empty in a new cpuset: copied from the parent, or nothing can join it.
CPUSET_INHERITED = ("cpuset.cpus", "cpuset.mems")


def hierarchies() -> list[Path]:
    """Every mounted hierarchy (symlinked aliases such as cpu,cpuacct counted once)."""
    return sorted(
        {p.resolve() for p in CGROUP_FS.iterdir() if p.is_dir() and (p / "cgroup.procs").exists()}
    )


def make_root(name: str) -> None:
    for hierarchy in hierarchies():
        folder = hierarchy / name
        folder.mkdir(exist_ok=True)
        if (hierarchy / "cpuset.cpus").exists():
            for knob in CPUSET_INHERITED:
                (folder / knob).write_text((hierarchy / knob).read_text())


def members(name: str) -> set[int]:
    """Every process under the root: the pods' containers (each in namespaces of its own)."""
    found: set[int] = set()
    for hierarchy in hierarchies():
        for procs in (hierarchy / name).rglob("cgroup.procs"):
            with contextlib.suppress(OSError):
                found.update(int(line) for line in procs.read_text().split())
    return found


def container_members(name: str, pod_uid: str, container_id: str) -> set[int]:
    """The processes of one container of one pod under the root (the cgroupfs driver's
    `<root>/kubepods[/<qos>]/pod<uid>/<container id>`)."""
    found: set[int] = set()
    for hierarchy in hierarchies():
        for pod in (hierarchy / name).rglob(f"pod{pod_uid}"):
            with contextlib.suppress(OSError):
                found.update(
                    int(n) for n in (pod / container_id / "cgroup.procs").read_text().split()
                )
    return found


def kill_members(name: str, timeout: float = 15) -> set[int]:
    """SIGKILL every process under the root; those still there at `timeout`."""
    deadline = time.monotonic() + timeout
    left = members(name)
    while left and time.monotonic() < deadline:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        left = members(name)
    return left


def remove_root(name: str, timeout: float = 15) -> list[str]:
    """Remove the root and everything under it; the folders that would not go."""
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for hierarchy in hierarchies():
            root = hierarchy / name
            if not root.exists():
                continue
            for folder in sorted(
                (p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)
            ):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            try:
                root.rmdir()
            except OSError:
                left.append(str(root))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)
