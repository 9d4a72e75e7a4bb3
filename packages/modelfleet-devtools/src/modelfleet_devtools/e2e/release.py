"""Releases of Modelfleet the end-to-end suite installs: this checkout, and the previous one.

A release is a source tree (its `apis/` and `functions/*/package/`, built into packages as they
were published) and a Python environment whose console scripts serve its functions. The
current release is this checkout in the workspace's own `.venv`. The previous release is a
commit of this repository's history, taken with `git archive` and given an environment of its
own from its own `uv.lock` (`uv sync --locked --no-dev`, as its function images were built:
the dependencies it shipped with, not today's), which takes a few seconds from uv's cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..paths import REPO_ROOT

# The release an upgrade starts from: the commit of main that today's release is an upgrade
# of (56c2cd3, main at the start of 2026-11-26, before issue 20's reshaping of ModelCache).
# When we release, move it to the commit the release was cut from (`git rev-parse <tag>`):
# the upgrade scenario then proves that upgrading from what users run now loses nothing.
PREVIOUS_RELEASE = "56c2cd3495f522c1abe8a8c595df9044b7ec704a"
# The package version each release is published as: the previous one as the version users
# installed, the current one above it, so the package manager sees an upgrade.
PREVIOUS_VERSION = "v0.1.0"
CURRENT_VERSION = "v0.2.0"


class ReleaseUnavailable(RuntimeError):
    """The previous release cannot be had from this checkout (says why and what to do)."""


@dataclass(frozen=True)
class Release:
    """Sources to build packages from and the folder of console scripts serving them."""

    name: str  # "previous" or "current": prefixes nothing for the current release's processes
    root: Path
    scripts: Path
    version: str

    def xrd_names(self) -> list[str]:
        """The CompositeResourceDefinitions this release installs (its own `apis/`): the
        previous release may define fewer than today's."""
        return sorted(
            yaml.safe_load(d.read_text())["metadata"]["name"]
            for d in (self.root / "apis").glob("*/definition.yaml")
        )


def current_release() -> Release:
    return Release("current", REPO_ROOT, Path(sys.executable).parent, CURRENT_VERSION)


def _git(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(REPO_ROOT), *args], stdout=stdout, stderr=subprocess.PIPE, check=False
    )


def checkout(commit: str, into: Path) -> Path:
    """The sources of `commit`, from this repository's history, unpacked into `into`."""
    if shutil.which("git") is None:
        raise ReleaseUnavailable(f"git is not installed: it is needed to check out {commit}")
    if _git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        shallow = _git("rev-parse", "--is-shallow-repository").stdout.decode().strip()
        hint = (
            "this is a shallow clone: `git fetch --unshallow` (.ci/run does it)"
            if shallow == "true"
            else "fetch the history that holds it (`git fetch origin`)"
        )
        raise ReleaseUnavailable(
            f"the previous release, commit {commit}, is not in this checkout's history "
            f"({REPO_ROOT}): {hint}; the upgrade scenario installs that release first"
        )
    into.mkdir(parents=True, exist_ok=True)
    archive = into.with_suffix(".tar")
    with archive.open("wb") as out:
        made = _git("archive", "--format=tar", commit, stdout=out.fileno())
    if made.returncode != 0:
        raise ReleaseUnavailable(f"git archive {commit}: {made.stderr.decode().strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()
    return into


def _uv() -> str:
    # `uv run` names its own binary in $UV for what it starts.
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        raise ReleaseUnavailable("uv is not on PATH: it builds the previous release's environment")
    return found


def sync_environment(root: Path) -> Path:
    """`uv sync --locked --no-dev` in a release's tree; returns its console-script folder."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")
    }
    synced = subprocess.run(
        [_uv(), "sync", "--locked", "--no-dev", "--all-packages", "--no-editable", "--quiet"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if synced.returncode != 0:
        raise ReleaseUnavailable(f"uv sync in {root} failed:\n{synced.stderr.strip()}")
    return root / ".venv" / "bin"


def previous_release(work: Path, commit: str = PREVIOUS_RELEASE) -> Release:
    """The previous release checked out under `work` with its own environment."""
    root = checkout(commit, work / f"release-{commit[:12]}")
    return Release("previous", root, sync_environment(root), PREVIOUS_VERSION)
