"""The images a real node pulls from the suite's loopback registry, under the names a
platform team's registry mirror serves them by.

- **The pod sandbox:** `pause` from ../shared/realcp as a one-layer image,
  `registry.k8s.io/pause:3.10` through the mirror (`pause:3.10` in the loopback registry).
- **The release's images:** published to the loopback registry as `<name>:<tag>` (what the
  release build pushes); a node's `ghcr.io` mirror asks for `modelfleet/<name>:<tag>`, so each
  tag is copied there too (a copy in one registry: its blobs are shared).
"""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from ..realcp import realcp_binary
from .node_config import SANDBOX_IMAGE

# The hydrator, and the CPU engine image (engine/image.py) when a scenario pushed it.
PUBLISHED_REPOSITORIES = ("model-hydrator", "vllm-cpu")
MIRRORED_NAMESPACE = "modelfleet"  # ghcr.io/modelfleet/<name>


def _crane(crane: Path, *args: str) -> str:
    done = subprocess.run(
        [str(crane), *args], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"crane {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def sandbox_reference(registry: str) -> str:
    """Where the loopback registry keeps the sandbox image (its path under registry.k8s.io)."""
    return f"{registry}/{SANDBOX_IMAGE.split('/', 1)[1]}"


def push_sandbox_image(crane: Path, registry: str, work: Path) -> str:
    """Push the pause binary as the sandbox image, unless it is there already."""
    reference = sandbox_reference(registry)
    if subprocess.run([str(crane), "digest", "--insecure", reference],
                      capture_output=True, timeout=30).returncode == 0:  # fmt: skip
        return reference
    layer = work / "pause-layer.tar"
    work.mkdir(parents=True, exist_ok=True)
    with tarfile.open(layer, "w") as tar:
        info = tar.gettarinfo(str(realcp_binary("pause")), arcname="pause")
        info.mode, info.uid, info.gid, info.mtime = 0o755, 0, 0, 0
        with realcp_binary("pause").open("rb") as binary:
            tar.addfile(info, binary)
    _crane(crane, "append", "--insecure", "--oci-empty-base", "-f", str(layer), "-t", reference)
    _crane(crane, "mutate", "--insecure", "--entrypoint", "/pause", reference)
    return reference


def mirror_published(crane: Path, registry: str) -> list[str]:
    """Copy every tag of the release's images to where a ghcr.io mirror looks; the copies."""
    copied = []
    for repository in PUBLISHED_REPOSITORIES:
        listed = subprocess.run([str(crane), "ls", "--insecure", f"{registry}/{repository}"],
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        for tag in listed.stdout.split() if listed.returncode == 0 else []:
            target = f"{registry}/{MIRRORED_NAMESPACE}/{repository}:{tag}"
            _crane(crane, "copy", "--insecure", f"{registry}/{repository}:{tag}", target)
            copied.append(target)
    return copied
