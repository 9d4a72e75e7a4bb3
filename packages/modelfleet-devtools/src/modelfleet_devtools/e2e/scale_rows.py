"""What modelfleet-scale-bench measures at each fleet size (`ScaleRow`, one row of its table),
the line above its table, and how it reads a process tree's CPU."""

from __future__ import annotations

import os
import platform
import shlex
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..realcp import realcp_binary
from .processes import Processes
from .provider_config import recommended_args
from .scale_changes import ChangeSeen


def cpu_seconds(processes: Processes, names: tuple[str, ...]) -> float:
    """User + system CPU of the named processes and everything in their process groups
    (children that ended included); for a `podman run`, its container's first process too."""
    named = [p for p in processes.started if p.name in names]
    groups = {p.popen.pid for p in named} | {p.container_pid for p in named if p.container_pid}
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        # After the command: state, ppid, pgrp, ..., utime, stime, and the same of children
        # it has waited for (12th to 15th): a child that ended counts through its parent.
        if int(fields[2]) in groups or int(stat.parent.name) in groups:
            total += sum(int(f) for f in fields[11:15])
    return total / ticks


@dataclass
class ScaleRow:
    clusters: int
    stagings: int
    crossplane: str
    clusters_ready_s: float
    ready_s: float
    control_plane_cpu_s: float
    functions_cpu_s: float
    deleted_s: float | None
    # Control-plane CPU per second while the registered fleet sat idle (its routine polling).
    idle_cpu_per_s: float = 0.0
    # The same by process (the functions together), in the order of IDLE_BY_PROCESS_HEADER.
    idle_by_process: dict[str, float] = field(default_factory=dict)
    # From each cluster's hydration Job completing to its row seen Ready, in seconds.
    job_to_row_s: list[float] = field(default_factory=list)
    # How soon changes on a cluster are seen once the fleet is at rest (at `--changes-at`).
    changes: list[ChangeSeen] = field(default_factory=list)
    # Set when the cache did not turn Ready within the limit: how far it got, and why.
    not_ready: str = ""
    # The machine's 15-minute load average when the cache was measured: what else ran.
    load: float = field(default_factory=lambda: os.getloadavg()[2])

    @property
    def per_staging_s(self) -> float:
        return self.control_plane_cpu_s / max(self.stagings, 1)

    @property
    def per_staging_above_idle_s(self) -> float:
        """What staging added to what the fleet costs anyway over the same time."""
        above = self.control_plane_cpu_s - self.idle_cpu_per_s * self.ready_s
        return max(above, 0.0) / max(self.stagings, 1)

    HEADER = (
        "| N | cluster stagings | Crossplane | clusters Ready | idle fleet CPU "
        "| cache: time to Ready | control-plane CPU | per staging | per staging above idle "
        "| functions CPU | while staging, Job complete → its row: median / worst "
        "| cache deleted | load |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )

    IDLE_PROCESSES = ("kube-apiserver", "etcd", "crossplane", "provider-kubernetes", "functions")
    IDLE_BY_PROCESS_HEADER = (
        "| N | idle fleet CPU | " + " | ".join(IDLE_PROCESSES) + " |\n"
        "|---|---|" + "---|" * len(IDLE_PROCESSES)
    )

    def idle_by_process_markdown(self) -> str:
        each = " | ".join(f"{self.idle_by_process.get(p, 0.0):.3f}" for p in self.IDLE_PROCESSES)
        return f"| {self.clusters} | {self.idle_cpu_per_s:.3f} s/s | {each} |"

    @property
    def job_to_row(self) -> str:
        if not self.job_to_row_s:
            return "not measured"
        median = statistics.median(self.job_to_row_s)
        worst = max(self.job_to_row_s)
        return f"{median:.0f} s / {worst:.0f} s ({len(self.job_to_row_s)} Jobs)"

    def markdown(self) -> str:
        ready = (
            f"not Ready after {self.ready_s:.0f} s: {self.not_ready}"
            if self.not_ready
            else f"{self.ready_s:.0f} s"
        )
        deleted = "not measured" if self.deleted_s is None else f"{self.deleted_s:.0f} s"
        return (
            f"| {self.clusters} | {self.stagings} | {self.crossplane} "
            f"| {self.clusters_ready_s:.0f} s | {self.idle_cpu_per_s:.2f} s/s | {ready} "
            f"| {self.control_plane_cpu_s:.0f} s | {self.per_staging_s:.2f} s "
            f"| {self.per_staging_above_idle_s:.2f} s "
            f"| {self.functions_cpu_s:.1f} s | {self.job_to_row} | {deleted} "
            f"| {self.load:.1f} |"
        )


def crossplane_version() -> str:
    out = subprocess.run(
        [str(realcp_binary("crossplane-core")), "--version"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def header(given: list[str], version: str, *, hydrator_containers: bool = False) -> str:
    """The line above the table: the command exactly as given, where, and what ran."""
    command = shlex.join(["uv", "run", "modelfleet-scale-bench", *given])
    jobs = (
        "each hydration Job a hydrator container on this machine"
        if hydrator_containers
        else "hydration Jobs simulated by the kubelet stand-in"
    )
    return (
        f"Produced by `{command}` "
        f"on {time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the start; Crossplane {version}; "
        f"provider-kubernetes {' '.join(recommended_args())} "
        f"(docs/install/provider-kubernetes.yaml); {jobs}."
    )
