"""The real control plane's binaries (Crossplane, provider-kubernetes, Kubernetes), on disk.

`../shared/realcp/` beside the repository holds them xz-compressed with a `SHA256SUMS` of the
decompressed files. `realcp_binary(name)` returns a runnable path: from the directory named by
`MODELFLEET_REALCP_BIN` when set (binaries already decompressed there), else decompressed once
into a per-user cache keyed by the file's checksum and verified against it.
"""

import hashlib
import lzma
import os
import shutil
import tempfile
from pathlib import Path

from modelfleet_devtools.paths import REPO_ROOT

BIN_DIR_ENV = "MODELFLEET_REALCP_BIN"
CACHE_DIR_ENV = "MODELFLEET_REALCP_CACHE"
SHARED_REALCP_DIR = REPO_ROOT.parent / "shared" / "realcp"
HOW_TO_GET_THEM = (
    f"put the real control plane's binaries in {SHARED_REALCP_DIR} (xz-compressed, with "
    f"SHA256SUMS, as ../shared/realcp beside the repository), or set {BIN_DIR_ENV} to a "
    "directory holding them decompressed"
)


class RealcpUnavailable(LookupError):
    """A binary is neither in $MODELFLEET_REALCP_BIN nor in ../shared/realcp; says how to get it."""


def realcp_binary(name: str) -> Path:
    """A runnable path to the real control plane binary `name` (e.g. "crossplane", "kubectl")."""
    named_dir = os.environ.get(BIN_DIR_ENV)
    if named_dir:
        candidate = Path(named_dir) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        raise RealcpUnavailable(
            f"{BIN_DIR_ENV}={named_dir} holds no executable {name!r}: decompress {name}.xz from "
            f"the realcp bundle there, or unset {BIN_DIR_ENV} to unpack {SHARED_REALCP_DIR}"
        )
    return _unpacked(name, SHARED_REALCP_DIR)


def _unpacked(name: str, shared_dir: Path) -> Path:
    """Decompress shared_dir/bin/<name>.xz once into the cache, checked against SHA256SUMS."""
    compressed = shared_dir / "bin" / f"{name}.xz"
    expected = _checksums(shared_dir).get(name)
    if not compressed.is_file() or expected is None:
        raise RealcpUnavailable(f"no {name!r} binary: {HOW_TO_GET_THEM}")
    target = _cache_root() / expected / name
    if target.is_file() and os.access(target, os.X_OK):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target then renamed, so a concurrent or interrupted run never sees
    # half a binary under the final name.
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as partial:
        digest = hashlib.sha256()
        with lzma.open(compressed) as source:
            while chunk := source.read(1 << 20):
                digest.update(chunk)
                partial.write(chunk)
    partial_path = Path(partial.name)
    if digest.hexdigest() != expected:
        partial_path.unlink()
        raise RealcpUnavailable(
            f"{compressed} decompresses to sha256 {digest.hexdigest()}, "
            f"not {expected} as SHA256SUMS says: the copy is damaged"
        )
    partial_path.chmod(0o755)
    shutil.move(partial_path, target)
    return target


def _checksums(shared_dir: Path) -> dict[str, str]:
    """SHA256SUMS as {file name: sha256}; empty when the file is missing."""
    sums_file = shared_dir / "SHA256SUMS"
    if not sums_file.is_file():
        return {}
    sums: dict[str, str] = {}
    for line in sums_file.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            sums[parts[1].lstrip("*")] = parts[0]
    return sums


def _cache_root() -> Path:
    """Where unpacked binaries are kept between runs ($XDG_CACHE_HOME honoured)."""
    if configured := os.environ.get(CACHE_DIR_ENV):
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "modelfleet" / "realcp"
