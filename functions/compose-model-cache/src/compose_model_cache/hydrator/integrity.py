"""Checking downloaded files against what their source published for them.

The Hub publishes, per file of a commit, its size and either the sha256 of its content (LFS
files: the weights) or its git blob id, the sha1 of `blob <size>\\0<content>` (small files kept
in git). S3 publishes an ETag, which is the MD5 of the content for an object uploaded in one
part (a multipart ETag, `<md5>-<parts>`, depends on the part size, so only the size is checked
there). Standard library only: the hydrator image runs this beside hydrate.py.
"""

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class Expected:
    """One file the source says the model has, and how to recognise its bytes."""

    path: str  # relative to the model's directory, "/"-separated
    size: int
    sha256: str = ""  # LFS: sha256 of the content
    git_blob: str = ""  # not LFS: git blob sha1
    md5: str = ""  # S3 single-part ETag


def s3_expected(relative: str, size: int, etag: str) -> Expected:
    """An S3 object's published facts; the ETag counts only when it is a plain MD5."""
    md5 = etag.strip('"').lower()
    is_md5 = len(md5) == 32 and all(c in "0123456789abcdef" for c in md5)
    return Expected(relative, size, md5=md5 if is_md5 else "")


def _digests(path: Path, want: Expected) -> dict[str, str]:
    """The digests `want` names, computed in one pass over the file."""
    hashers = {}
    if want.sha256:
        hashers["sha256"] = hashlib.sha256()
    if want.git_blob:
        blob = hashlib.sha1(usedforsecurity=False)
        blob.update(f"blob {path.stat().st_size}\0".encode())
        hashers["git_blob"] = blob
    if want.md5:
        hashers["md5"] = hashlib.md5(usedforsecurity=False)
    if not hashers:
        return {}
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            for h in hashers.values():
                h.update(chunk)
    return {name: h.hexdigest() for name, h in hashers.items()}


def problem_with(root: Path, want: Expected) -> str | None:
    """Why the file at root/want.path is not the published one (None: it is)."""
    path = root / want.path
    if not path.is_file():
        return f"{want.path}: missing"
    size = path.stat().st_size
    if size != want.size:
        return f"{want.path}: {size} bytes, the source publishes {want.size}"
    got = _digests(path, want)
    for name, label in (("sha256", "sha256"), ("git_blob", "git blob sha1"), ("md5", "md5")):
        expected = getattr(want, name)
        if expected and got[name] != expected.lower():
            return f"{want.path}: {label} {got[name]}, the source publishes {expected}"
    return None


def verify(root: Path, files: list[Expected]) -> list[str]:
    """Every problem found among `files` under `root`, in path order. Files are hashed a few
    at a time (hashlib releases the GIL on large buffers)."""
    workers = max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        found = pool.map(lambda want: problem_with(root, want), files)
        problems = [p for p in found if p]
    return sorted(problems)
