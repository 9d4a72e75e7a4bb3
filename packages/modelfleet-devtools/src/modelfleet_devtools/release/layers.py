"""Image layers as reproducible tar files: the same tree gives the same bytes.

Every entry is written in name order, owned by root, with one modification time (the
release's SOURCE_DATE_EPOCH), so a layer's digest depends on its files' content and modes only.
"""

from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path


def _normalised(info: tarfile.TarInfo, mtime: int) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = mtime
    info.pax_headers = {}
    return info


def tree_layer(root: Path, out: Path, *, under: str, mtime: int) -> Path:
    """A layer holding the tree `root` at path `under` in the image (e.g. "usr/local"),
    with the folders leading to it."""
    parts = Path(under).parts
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar:
        for depth in range(1, len(parts) + 1):
            folder = tarfile.TarInfo("/".join(parts[:depth]))
            folder.type = tarfile.DIRTYPE
            folder.mode = 0o755
            tar.addfile(_normalised(folder, mtime))
        for path in sorted(_walk(root)):
            name = "/".join((*parts, *path.relative_to(root).parts))
            info = tar.gettarinfo(str(path), arcname=name)
            if info.isreg():
                # Files keep their executable bit only: a build host's umask never shows.
                info.mode = 0o755 if info.mode & stat.S_IXUSR else 0o644
                with path.open("rb") as data:
                    tar.addfile(_normalised(info, mtime), data)
            else:
                if info.isdir():
                    info.mode = 0o755
                tar.addfile(_normalised(info, mtime))
    return out


def _walk(root: Path) -> list[Path]:
    found = []
    for folder, folders, files in os.walk(root):
        folders.sort()
        found += [Path(folder) / name for name in (*folders, *sorted(files))]
    return found


def rootfs_layer(rootfs_tar: Path, out: Path) -> Path:
    """The root filesystem tar without device nodes (the container runtime makes /dev)."""
    with (
        tarfile.open(rootfs_tar) as source,
        tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as tar,
    ):
        for member in source:
            if member.name.startswith("./dev/") or member.ischr() or member.isblk():
                continue
            data = source.extractfile(member) if member.isreg() else None
            tar.addfile(member, data)
    return out
