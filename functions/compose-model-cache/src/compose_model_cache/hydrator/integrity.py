"""Checking downloaded files against what their source published for them.

The Hub publishes, per file of a commit, its size and either the sha256 of its content (LFS
files: the weights) or its git blob id, the sha1 of `blob <size>\\0<content>` (small files kept
in git). S3 publishes an ETag, which is the MD5 of the content for an object uploaded in one
part (a multipart ETag, `<md5>-<parts>`, depends on the part size, so only the size is checked
there). Standard library only: the hydrator image runs this beside hydrate.py.
"""

import contextlib
import hashlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

CHUNK = 8 * 1024 * 1024
# Beside a streamed file's digests: which file, as last written, they are of.
IDENTITY = "identity"


def _identity(st: os.stat_result) -> str:
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


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


def _hashers(want: Expected) -> dict[str, "hashlib._Hash"]:
    hashers: dict[str, hashlib._Hash] = {}
    if want.sha256:
        hashers["sha256"] = hashlib.sha256()
    if want.git_blob:
        blob = hashlib.sha1(usedforsecurity=False)
        blob.update(f"blob {want.size}\0".encode())  # a size mismatch is caught before
        hashers["git_blob"] = blob
    if want.md5:
        hashers["md5"] = hashlib.md5(usedforsecurity=False)
    return hashers


def _digests(path: Path, want: Expected) -> dict[str, str]:
    """The digests `want` names, computed in one pass over the file."""
    hashers = _hashers(want)
    if not hashers:
        return {}
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            for h in hashers.values():
                h.update(chunk)
    return {name: h.hexdigest() for name, h in hashers.items()}


def problem_with(root: Path, want: Expected, streamed: dict[str, str] | None = None) -> str | None:
    """Why the file at root/want.path is not the published one (None: it is). `streamed`:
    digests computed while it downloaded; unless they match and the file is still the one
    they were computed of (inode, size, mtime), it is read again to be sure."""
    path = root / want.path
    if not path.is_file():
        return f"{want.path}: missing"
    size = path.stat().st_size
    if size != want.size:
        return f"{want.path}: {size} bytes, the source publishes {want.size}"
    if streamed and streamed.get(IDENTITY) == _identity(path.stat()):
        names = [n for n in streamed if n != IDENTITY]
        if names and all(streamed[n] == getattr(want, n).lower() for n in names):
            return None
    got = _digests(path, want)
    for name, label in (("sha256", "sha256"), ("git_blob", "git blob sha1"), ("md5", "md5")):
        expected = getattr(want, name)
        if expected and got[name] != expected.lower():
            return f"{want.path}: {label} {got[name]}, the source publishes {expected}"
    return None


def verify(
    root: Path, files: list[Expected], streamed: dict[str, dict[str, str]] | None = None
) -> list[str]:
    """Every problem found among `files` under `root`, in path order. Files not hashed while
    they downloaded are hashed now, a few at a time (hashlib releases the GIL)."""
    streamed = streamed or {}
    workers = max(1, min(4, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        found = pool.map(lambda want: problem_with(root, want, streamed.get(want.path)), files)
        problems = [p for p in found if p]
    return sorted(problems)


@dataclass
class _Follow:
    """One file being hashed as it is written: the open file follows huggingface_hub's
    rename of `*.incomplete` to the final path (same inode)."""

    handle: BinaryIO
    hashers: dict[str, "hashlib._Hash"]
    read: int = 0
    digests: dict[str, str] = field(default_factory=dict)


class StreamHasher(threading.Thread):
    """Hashes each file while huggingface_hub downloads it into `root`, so verifying after
    the download costs (almost) nothing more. A file is followed from its `*.incomplete`
    name (`<hash>.<etag>[.<suffix>].incomplete` under the bookkeeping directory, the etag the
    published sha256 or blob id) from the first byte; anything unexpected (a file rewritten,
    a rename across devices) just leaves it to `verify` to hash it whole."""

    def __init__(self, root: Path, bookkeeping: Path, files: list[Expected]) -> None:
        super().__init__(name="hash-while-downloading", daemon=True)
        self.root, self.downloads = root, bookkeeping / "download"
        self.files = [f for f in files if f.sha256 or f.git_blob]
        self.follows: dict[str, _Follow] = {}
        self.stopped = threading.Event()

    def _open(self, want: Expected) -> _Follow | None:
        etag = want.sha256 or want.git_blob
        folder = (self.downloads / want.path).parent
        with contextlib.suppress(OSError):
            for partial in folder.glob(f"*.{etag}*.incomplete"):
                return _Follow(partial.open("rb"), _hashers(want))
        return None

    def _advance(self, want: Expected, follow: _Follow) -> None:
        while follow.read < want.size and (chunk := follow.handle.read(CHUNK)):
            for h in follow.hashers.values():
                h.update(chunk)
            follow.read += len(chunk)
        if follow.read == want.size and not follow.digests:
            follow.digests = {n: h.hexdigest() for n, h in follow.hashers.items()}
            follow.digests[IDENTITY] = _identity(os.fstat(follow.handle.fileno()))
            follow.handle.close()

    def poll(self) -> None:
        for want in self.files:
            follow = self.follows.get(want.path)
            if follow is None and not (self.root / want.path).exists():
                follow = self._open(want)
                if follow:
                    self.follows[want.path] = follow
            if follow and not follow.digests:
                with contextlib.suppress(OSError, ValueError):
                    self._advance(want, follow)

    def run(self) -> None:
        while not self.stopped.wait(0.2):
            self.poll()

    def finish(self) -> dict[str, dict[str, str]]:
        """Stop, read what is left of the followed files; the digests of those complete."""
        self.stopped.set()
        if self.ident is not None:  # started
            self.join(timeout=30)
        self.poll()
        done = {}
        for path, follow in self.follows.items():
            if follow.digests:
                done[path] = follow.digests
            else:
                follow.handle.close()
        return done
