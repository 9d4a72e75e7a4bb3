"""Releases of Modelfleet the end-to-end suite installs: this checkout, and the previous one.

A release is a source tree, built into images and packages as `modelfleet-release` builds them
(from its own `uv.lock`: the dependencies it shipped with, not today's). The current release is
this checkout; the previous one a commit of this repository's history, taken with `git archive`.
"""

from __future__ import annotations

import runpy
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..paths import REPO_ROOT

# The release an upgrade starts from: the commit of main that today's release is an upgrade
# of (56c2cd3: ModelCache's unsharded layout, each Job with access objects of its own).
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
    """Sources to build images and packages from, and the version they are published as."""

    name: str  # "previous" or "current": prefixes nothing for the current release's containers
    root: Path
    version: str

    def default_hydrator_image(self) -> str:
        """The hydrator image this release's compose-model-cache puts in a Job by default,
        read from its own contracts (a module of the standard library only)."""
        hydration = (
            self.root / "packages/modelfleet-contracts/src/modelfleet_contracts/hydration.py"
        )
        return str(runpy.run_path(str(hydration))["DEFAULT_IMAGE"])

    def xrd_names(self) -> list[str]:
        """The CompositeResourceDefinitions this release installs (its own `apis/`): the
        previous release may define fewer than today's."""
        return sorted(
            yaml.safe_load(d.read_text())["metadata"]["name"]
            for d in (self.root / "apis").glob("*/definition.yaml")
        )


def current_release() -> Release:
    return Release("current", REPO_ROOT, CURRENT_VERSION)


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


def previous_release(work: Path, commit: str = PREVIOUS_RELEASE) -> Release:
    """The previous release checked out under `work`."""
    root = checkout(commit, work / f"release-{commit[:12]}")
    return Release("previous", root, PREVIOUS_VERSION)
