"""The namespaces a real workload node runs in: a network namespace and a mount namespace of
its own, made and removed by the suite.

- **Network:** `ip netns add NAME`, with a veth pair whose host end and node end are the two
  addresses of one /30 of TEST-NET-2 (198.51.100.0/24, RFC 5737: addresses no real network
  routes, so a test host never shadows one). The node's API server listens on the node end;
  the control plane on the host reaches it there, and the node reaches the suite's loopback
  services (registry, Hub) through forwarders on the host end.
- **Mount:** a persistent mount namespace (`unshare --mount=FILE --propagation private`) with
  its own tmpfs on /run/netns and /run/containerd. Every mount the node makes (containerd's
  overlays and pod network namespaces, the kubelet's volume tmpfs) lives only there, so it
  goes when the namespace goes, however the test ended.

Processes enter both with `nsenter --net=... --mount=...` (not `ip netns exec`, which
remounts /sys without the cgroup mounts the kubelet and runc need).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

TEST_NET = ipaddress.IPv4Network("198.51.100.0/24")
# Private to the node's mount namespace: pod network namespaces and containerd's shim sockets
# and runc state (which name no per-instance folder of their own in containerd 1.6).
PRIVATE_RUN_DIRS = ("/run/netns", "/run/containerd")


class NamespaceError(RuntimeError):
    """A namespace could not be made (says which command failed and why)."""


def _run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise NamespaceError(f"`{' '.join(argv)}` failed: {done.stderr.strip()}")
    return done.stdout


def free_link_pair() -> tuple[int, ipaddress.IPv4Address, ipaddress.IPv4Address]:
    """The index of a /30 of TEST-NET-2 no host interface holds, and its two addresses."""
    taken = _run("ip", "-4", "-o", "addr", "show")
    for index, subnet in enumerate(TEST_NET.subnets(new_prefix=30)):
        host, node = list(subnet.hosts())
        if f" {host}/" not in taken and f" {node}/" not in taken:
            return index, host, node
    raise NamespaceError(f"every /30 of {TEST_NET} is in use on this host")


@dataclass
class NodeNamespaces:
    """A node's network and mount namespaces, and the veth pair between host and node."""

    name: str
    folder: Path  # holds the mount namespace's file
    host_ip: ipaddress.IPv4Address
    node_ip: ipaddress.IPv4Address
    host_link: str
    node_link: str

    @property
    def net_file(self) -> Path:
        return Path("/run/netns") / self.name

    @property
    def mount_file(self) -> Path:
        return self.folder / "mnt"

    def enter(self, argv: list[str]) -> list[str]:
        """`argv` run inside both namespaces."""
        return [
            "nsenter", f"--net={self.net_file}", f"--mount={self.mount_file}", "--", *argv,
        ]  # fmt: skip

    def run(self, *argv: str) -> str:
        return _run(*self.enter(list(argv)))

    def mount_namespace_id(self) -> int:
        return os.stat(self.mount_file).st_ino

    def members(self) -> list[int]:
        """Every process in the node's mount namespace: what the node started, containerd's
        shims and the pods' processes among them."""
        inode = self.mount_namespace_id()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if os.stat(entry / "ns" / "mnt").st_ino == inode:
                    found.append(int(entry.name))
        return found

    def kill_members(self, timeout: float = 15) -> list[int]:
        """SIGKILL every process left in the mount namespace; those still there at `timeout`."""
        deadline = time.monotonic() + timeout
        left = self.members()
        while left and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
            left = self.members()
        return left

    def remove(self) -> list[str]:
        """Remove both namespaces and the veth pair; what could not be removed."""
        problems = []
        if self.mount_file.exists():
            left = self.kill_members()
            if left:
                problems.append(f"processes {left} still in the mount namespace")
            done = subprocess.run(["umount", "-l", str(self.mount_file)], capture_output=True)
            if done.returncode != 0:
                problems.append(f"umount {self.mount_file}: {done.stderr.decode().strip()}")
        with contextlib.suppress(OSError):
            subprocess.run(["umount", "-l", str(self.folder)], capture_output=True)
        # Deleting the namespace deletes the veth pair with it (its node end is inside).
        if self.net_file.exists():
            done = subprocess.run(["ip", "netns", "delete", self.name], capture_output=True)
            if done.returncode != 0:
                problems.append(f"ip netns delete {self.name}: {done.stderr.decode().strip()}")
        subprocess.run(["ip", "link", "delete", self.host_link], capture_output=True)
        return problems


def make_namespaces(name: str, folder: Path) -> NodeNamespaces:
    """Make the node's namespaces (removed again if any step fails)."""
    index, host_ip, node_ip = free_link_pair()
    namespaces = NodeNamespaces(
        name, folder, host_ip, node_ip, f"{name[:9]}h{index}", f"{name[:9]}n{index}"
    )
    try:
        _run("ip", "netns", "add", name)
        _run("ip", "link", "add", namespaces.host_link, "type", "veth",
             "peer", "name", namespaces.node_link)  # fmt: skip
        _run("ip", "link", "set", namespaces.node_link, "netns", name)
        _run("ip", "addr", "add", f"{host_ip}/30", "dev", namespaces.host_link)
        _run("ip", "link", "set", namespaces.host_link, "up")
        inside = ["ip", "netns", "exec", name]  # only `ip` itself: no cgroups needed
        _run(*inside, "ip", "link", "set", "lo", "up")
        _run(*inside, "ip", "addr", "add", f"{node_ip}/30", "dev", namespaces.node_link)
        _run(*inside, "ip", "link", "set", namespaces.node_link, "up")
        _run(*inside, "ip", "route", "add", "default", "via", str(host_ip))
        # The mount namespace is kept alive by a bind mount of its file, which must sit on a
        # private mount (as `ip netns` does for /run/netns).
        folder.mkdir(parents=True, exist_ok=True)
        _run("mount", "--bind", str(folder), str(folder))
        _run("mount", "--make-private", str(folder))
        namespaces.mount_file.touch()
        _run("unshare", f"--mount={namespaces.mount_file}", "--propagation", "private", "true")
        for run_dir in PRIVATE_RUN_DIRS:
            namespaces.run("mkdir", "-p", run_dir)
            namespaces.run("mount", "-t", "tmpfs", "-o", "mode=0755", name, run_dir)
        return namespaces
    except BaseException:
        namespaces.remove()
        raise
