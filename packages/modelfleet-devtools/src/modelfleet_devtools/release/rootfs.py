"""The images' base: a Debian root filesystem with the distribution's Python, made with
mmdebstrap from Debian's packages (no base image is pulled from any container registry).

Only packages are unpacked (mmdebstrap's `extract` variant: no maintainer scripts run), so
an arm64 root filesystem is made on an amd64 host without emulation. With SOURCE_DATE_EPOCH
set, the same mirror state gives the same tar, byte for byte.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

SUITE = "bookworm"
# Python 3.11 (the wheels' ABI), its standard library and CA certificates (HTTPS sources);
# grpcio links libstdc++; base-files gives /etc/os-release, tzdata the zones log timestamps
# may name.
PACKAGES = (
    "python3-minimal", "libpython3.11-stdlib", "libstdc++6",
    "ca-certificates", "base-files", "tzdata",
)  # fmt: skip
PYTHON_VERSION = "3.11"
# Where Debian's Python looks for packages installed outside the distribution.
SITE_PACKAGES = "usr/local/lib/python3.11/dist-packages"
# Nothing reads these at run time: documentation, translations, glibc's iconv modules (Python
# has its own codecs), the leap-second time zones.
EXCLUDED = (
    "/usr/share/doc/*", "/usr/share/man/*", "/usr/share/info/*", "/usr/share/lintian/*",
    "/usr/share/locale/*", "/usr/lib/*/gconv/*", "/usr/share/zoneinfo/right/*",
)  # fmt: skip


def rootfs_key(architecture: str, epoch: int) -> str:
    """What the root filesystem is made from, as a name: the same key, the same recipe."""
    recipe = repr((SUITE, PACKAGES, EXCLUDED, architecture, epoch)).encode()
    return f"{architecture}-{hashlib.sha256(recipe).hexdigest()[:16]}"


class RootfsUnavailable(RuntimeError):
    """mmdebstrap is not installed; says what to install."""


class RootfsBuildFailed(RuntimeError):
    """mmdebstrap ran and failed (a mirror out of reach, say); carries what it printed."""


def debian_rootfs(
    out: Path, *, architecture: str, epoch: int, packages: tuple[str, ...] = PACKAGES
) -> Path:
    """Write the base root filesystem for `architecture` (Debian's name: amd64, arm64) with
    `packages` (default: the release images' base) and what they depend on."""
    if shutil.which("mmdebstrap") is None:
        raise RootfsUnavailable(
            "mmdebstrap is not installed: `apt-get install mmdebstrap` (Debian's package); "
            "it makes the images' base from Debian's packages"
        )
    argv = [
        "mmdebstrap", "--variant=extract", f"--architectures={architecture}",
        f"--include={','.join(packages)}",
        *(f"--dpkgopt=path-exclude={pattern}" for pattern in EXCLUDED),
        SUITE, str(out),
    ]  # fmt: skip
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
    made = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if made.returncode != 0:
        raise RootfsBuildFailed(
            f"mmdebstrap failed ({made.returncode}; it needs Debian's mirror):\n"
            f"{made.stderr[-3000:]}"
        )
    return out
