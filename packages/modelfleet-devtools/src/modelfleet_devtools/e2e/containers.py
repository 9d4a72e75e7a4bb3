"""Containers run with podman and runc as processes of the control plane: each `podman run`
is started in the foreground by `Processes`, so its log, its stop (SIGTERM, proxied to the
container's PID 1) and the liveness check work as for any other process here.

podman keeps its images and containers under the control plane's work folder (vfs storage:
overlay made every run wait here), and is told to use runc (crun refuses this host's cgroup
layout) and limits the host's hard nofile allows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
"""


class ContainersUnavailable(RuntimeError):
    """podman or runc is missing; says what to install."""


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class Podman:
    """podman with its storage, run root and configuration in one folder."""

    home: Path

    @classmethod
    def under(cls, folder: Path) -> Podman:
        missing = [tool for tool in ("podman", "runc") if shutil.which(tool) is None]
        if missing:
            raise ContainersUnavailable(
                f"{' and '.join(missing)} not installed: `apt-get install podman runc` "
                "(Debian's packages) runs the functions and the hydrator as containers"
            )
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "containers.conf").write_text(CONTAINERS_CONF)
        return cls(folder)

    @property
    def env(self) -> dict[str, str]:
        return {"CONTAINERS_CONF": str(self.home / "containers.conf")}

    def argv(self, *args: str) -> list[str]:
        return [
            "podman", "--root", str(self.home / "storage"), "--runroot", str(self.home / "run"),
            "--storage-driver", "vfs", *args,
        ]  # fmt: skip

    def call(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            self.argv(*args), env={**os.environ, **self.env}, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"podman {args[0]} failed: {done.stderr.strip()[-2000:]}")
        return done.stdout.strip()

    def pull(self, reference: str) -> str:
        """Pull `reference` from a plain-HTTP loopback registry; the image's ID."""
        return self.call("pull", "--quiet", "--tls-verify=false", reference).splitlines()[-1]

    def run_argv(
        self,
        name: str,
        image: str,
        *,
        env: Mapping[str, str] = {},
        mounts: Sequence[Mount] = (),
        user: str | None = None,
        entrypoint: Sequence[str] | None = None,
        args: Sequence[str] = (),
    ) -> list[str]:
        """`podman run` in the foreground, on the host's network (everything here listens on
        loopback), removed when it stops."""
        flags = ["run", "--rm", "--replace", "--name", name, "--network", "host"]
        for key, value in sorted(env.items()):
            flags += ["--env", f"{key}={value}"]
        for mount in mounts:
            flags += [
                "--volume",
                f"{mount.source}:{mount.target}:{'ro' if mount.read_only else 'rw'}",
            ]
        if user is not None:
            flags += ["--user", user]
        if entrypoint is not None:
            flags += ["--entrypoint", entrypoint[0]]
            args = [*entrypoint[1:], *args]
        return self.argv(*flags, image, *args)

    def pid(self, name: str) -> int | None:
        """The host PID of a running container's first process."""
        try:
            return int(self.call("inspect", "--format", "{{.State.Pid}}", name, timeout=30)) or None
        except (RuntimeError, ValueError, subprocess.TimeoutExpired):
            return None

    def remove_all(self) -> None:
        """Remove every container of this storage (a `podman run` killed leaves its own)."""
        subprocess.run(
            self.argv("rm", "--force", "--all", "--time", "5"), env={**os.environ, **self.env},
            capture_output=True, check=False, timeout=120,
        )  # fmt: skip
