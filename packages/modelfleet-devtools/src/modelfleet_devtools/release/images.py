"""Images assembled and pushed with crane (go-containerregistry), no container engine:
layers appended to an empty base, the config set, each step a new manifest in the registry.

crane writes no build time into an image (its created times are the zero time), so the
digest depends only on the layers and the config set here.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path


class PushFailed(RuntimeError):
    """crane refused; carries what it printed."""


@dataclass(frozen=True)
class ImageSettings:
    """What the image runs and how (the OCI config's fields we set)."""

    entrypoint: list[str]
    user: str = ""
    workdir: str = ""
    env: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


def _crane(crane: Path, *args: str) -> str:
    done = subprocess.run([str(crane), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PushFailed(f"crane {args[0]} failed:\n{done.stderr[-2000:]}")
    return done.stdout.strip()


def push_image(
    crane: Path, reference: str, layers: list[Path], config: ImageSettings, platform: str
) -> str:
    """Push an image of `layers` (bottom first) with `config` to `reference`; its digest."""
    staging = f"{reference}-layers"
    _crane(crane, "append", "--insecure", "--oci-empty-base", "--platform", platform,
           *(arg for layer in layers for arg in ("-f", str(layer))), "-t", staging)  # fmt: skip
    flags = ["--set-platform", platform, "--entrypoint", ",".join(config.entrypoint)]
    if config.user:
        flags += ["--user", config.user]
    if config.workdir:
        flags += ["--workdir", config.workdir]
    for key, value in sorted(config.env.items()):
        flags += ["--env", f"{key}={value}"]
    for key, value in sorted(config.labels.items()):
        flags += ["--label", f"{key}={value}"]
    _crane(crane, "mutate", "--insecure", *flags, "-t", reference, staging)
    return digest(crane, reference)


def digest(crane: Path, reference: str) -> str:
    return _crane(crane, "digest", "--insecure", reference)


def save_tarball(crane: Path, reference: str, out: Path) -> Path:
    """The image as a tarball (what `crossplane xpkg build --embed-runtime-image-tarball`
    reads)."""
    _crane(crane, "pull", "--insecure", reference, str(out))
    return out


def push_file(crane: Path, tarball: Path, reference: str) -> str:
    """Push an image tarball (an xpkg is one) to `reference`; its digest."""
    _crane(crane, "push", "--insecure", str(tarball), reference)
    return digest(crane, reference)


def push_index(crane: Path, reference: str, manifests: list[str]) -> str:
    """Push a multi-platform index of the given image references; its digest."""
    _crane(crane, "index", "append", "--insecure",
           *(arg for m in manifests for arg in ("-m", m)), "-t", reference)  # fmt: skip
    return digest(crane, reference)


def tag(crane: Path, reference: str, new_tag: str) -> None:
    _crane(crane, "tag", "--insecure", reference, new_tag)
