"""The Python an image runs, staged on the build host: wheels only, each pinned by hash.

Third-party packages come from the release tree's `uv.lock` (`uv export`, installed with
`--require-hashes` for the image's platform and Python); the workspace's own packages are
built into wheels from the tree. Nothing is resolved anew and no package index is asked for
anything the lock does not name by hash. Bytecode is compiled with unchecked hashes, so it
does not depend on file times, and a non-root container never needs to write it.
"""

from __future__ import annotations

import compileall
import os
import py_compile
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from .rootfs import PYTHON_VERSION

# Debian's platform names -> the wheels' (manylinux 2.28 holds for bookworm's glibc 2.36).
WHEEL_PLATFORMS = {"amd64": "x86_64-manylinux_2_28", "arm64": "aarch64-manylinux_2_28"}


class StagingFailed(RuntimeError):
    """A uv step failed; carries what it printed."""


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        raise StagingFailed("uv is not on PATH: it exports the lock and installs the wheels")
    return found


def _run(argv: list[str], cwd: Path, epoch: int | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    if epoch is not None:  # wheels built from the tree take their files' times from it
        env["SOURCE_DATE_EPOCH"] = str(epoch)
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise StagingFailed(f"{' '.join(argv[:4])} … failed:\n{done.stderr[-3000:]}")
    return done.stdout


def locked_requirements(tree: Path, package: str, out: Path) -> Path:
    """What `package` needs from outside the workspace, by version and hash from uv.lock."""
    text = _run(
        [_uv(), "export", "--frozen", "--no-dev", "--no-emit-workspace", "--no-header",
         "--package", package, "--format", "requirements-txt"],
        tree,
    )  # fmt: skip
    out.write_text(text)
    return out


def install_requirements(tree: Path, requirements: Path, target: Path, architecture: str) -> None:
    """Install pinned wheels into `target` for the image's platform and Python."""
    _run(
        [_uv(), "pip", "install", "--quiet", "--target", str(target), "--no-deps",
         "--require-hashes", "--only-binary", ":all:", "--no-compile",
         "--python-platform", WHEEL_PLATFORMS[architecture], "--python-version", PYTHON_VERSION,
         "-r", str(requirements)],
        tree,
    )  # fmt: skip


def workspace_members(tree: Path) -> dict[str, Path]:
    """Workspace package name -> its folder, for every member of the release tree."""
    members = {}
    found = [*tree.glob("packages/*/pyproject.toml"), *tree.glob("functions/*/pyproject.toml")]
    for pyproject in sorted(found):
        members[tomllib.loads(pyproject.read_text())["project"]["name"]] = pyproject.parent
    return members


def install_members(tree: Path, names: list[str], target: Path, wheels: Path, epoch: int) -> None:
    """Build the named workspace packages into wheels and install them into `target`."""
    members = workspace_members(tree)
    shutil.rmtree(wheels, ignore_errors=True)  # only this build's wheels are installed
    wheels.mkdir(parents=True)
    for name in names:
        _run(
            [_uv(), "build", "--quiet", "--wheel", "--out-dir", str(wheels), str(members[name])],
            tree,
            epoch,
        )
    built = sorted(str(w) for w in wheels.glob("*.whl"))
    _run(
        [_uv(), "pip", "install", "--quiet", "--target", str(target), "--no-deps", "--no-compile",
         "--python-version", PYTHON_VERSION, *built],
        tree,
    )  # fmt: skip


def workspace_dependencies(tree: Path, package: str) -> list[str]:
    """`package` and the workspace packages it depends on, transitively."""
    members = workspace_members(tree)
    wanted, queue = [], [package]
    while queue:
        name = queue.pop()
        if name in wanted:
            continue
        wanted.append(name)
        project = tomllib.loads((members[name] / "pyproject.toml").read_text())["project"]
        for requirement in project.get("dependencies", []):
            dependency = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
            if dependency in members:
                queue.append(dependency)
    return sorted(wanted)


def console_script(tree: Path, package: str) -> str:
    """The `module:function` of the console script named after `package`."""
    members = workspace_members(tree)
    project = tomllib.loads((members[package] / "pyproject.toml").read_text())["project"]
    return str(project["scripts"][package])


def tidy(target: Path, in_image: str) -> None:
    """Drop what the installer writes about the build host (scripts naming its interpreter,
    records, where a wheel came from, uv's cache keys and lock) and compile bytecode that does
    not depend on file times. `in_image`: where `target` lies in the image."""
    shutil.rmtree(target / "bin", ignore_errors=True)
    (target / ".lock").unlink(missing_ok=True)
    for info in target.glob("*.dist-info"):
        for name in ("RECORD", "direct_url.json", "uv_cache.json", "INSTALLER", "REQUESTED"):
            (info / name).unlink(missing_ok=True)
    compileall.compile_dir(
        str(target), quiet=1, workers=1, ddir=in_image,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )  # fmt: skip
