"""Checking downloaded files against what their source published for them.

The Hub publishes, per file of a commit, its size and either the sha256 of its content (LFS
files: the weights) or its git blob id, the sha1 of `blob <size>\\0<content>` (small files kept
in git). S3 publishes an ETag, which is the MD5 of the content for an object uploaded in one
part (a multipart ETag, `<md5>-<parts>`, depends on the part size, so only the size is checked
there). Standard library only.
"""

import contextlib
import hashlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from io import BufferedReader
from pathlib import Path

# Read into one reused buffer: a fresh multi-MiB bytes object per read costs a mmap and page
# faults each time, which on a CPU-bound download shows up as wall time.
CHUNK = 8 * 1024 * 1024
# Beside a streamed file's digests: which file, as last written, they are of.
IDENTITY = "identity"


def file_identity(st: os.stat_result) -> str:
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


def _feed(
    handle: BufferedReader, hashers: list["hashlib._Hash"], limit: int, buffer: bytearray
) -> int:
    """Hash what `handle` holds from where it is, up to `limit` bytes; how many were read."""
    view, read = memoryview(buffer), 0
    while read < limit:
        n = handle.readinto(view[: min(len(view), limit - read)])
        if not n:
            break
        for h in hashers:
            h.update(view[:n])
        read += n
    return read


def _digests(path: Path, want: Expected) -> dict[str, str]:
    """The digests `want` names, computed in one pass over the file."""
    hashers = _hashers(want)
    if not hashers:
        return {}
    with path.open("rb") as f:
        _feed(f, list(hashers.values()), want.size, bytearray(CHUNK))
    return {name: h.hexdigest() for name, h in hashers.items()}


def streamed_digests(path: Path, want: Expected) -> dict[str, str]:
    """The digests `want` names of the file at `path` just written, with which file they are
    of (as `problem_with` takes them); empty when it cannot be read (verify reads it again)."""
    hashers = _hashers(want)
    try:
        with path.open("rb") as f:
            _feed(f, list(hashers.values()), want.size, bytearray(CHUNK))
            identity = file_identity(os.fstat(f.fileno()))
    except OSError:
        return {}
    return {**{name: h.hexdigest() for name, h in hashers.items()}, IDENTITY: identity}


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
    if streamed and streamed.get(IDENTITY) == file_identity(path.stat()):
        names = [n for n in streamed if n != IDENTITY]
        if names and all(streamed[n] == getattr(want, n).lower() for n in names):
            return None
    got = _digests(path, want)
    for name, label in (("sha256", "sha256"), ("git_blob", "git blob sha1"), ("md5", "md5")):
        expected = getattr(want, name)
        if expected and got[name] != expected.lower():
            return f"{want.path}: {label} {got[name]}, the source publishes {expected}"
    return None


def _workers() -> int:
    """Threads hashing at once (hashlib releases the GIL on large updates)."""
    return max(1, min(4, os.cpu_count() or 1))


def verify(
    root: Path, files: list[Expected], streamed: dict[str, dict[str, str]] | None = None
) -> list[str]:
    """Every problem found among `files` under `root`, in path order. Files not hashed while
    they downloaded are hashed now, a few at a time (hashlib releases the GIL)."""
    streamed = streamed or {}
    with ThreadPoolExecutor(max_workers=_workers()) as pool:
        found = pool.map(lambda want: problem_with(root, want, streamed.get(want.path)), files)
        problems = [p for p in found if p]
    return sorted(problems)


@dataclass
class _Follow:
    """One file being hashed as it is written: the open file follows huggingface_hub's
    rename of `*.incomplete` to the final path (same inode)."""

    handle: BufferedReader
    hashers: dict[str, "hashlib._Hash"]
    read: int = 0
    digests: dict[str, str] = field(default_factory=dict)


class StreamHasher(threading.Thread):
    """Hashes each file while huggingface_hub downloads it into `root`, so verifying after
    the download costs (almost) nothing more. A file is followed from its `*.incomplete`
    name (`<hash>.<etag>[.<attempt>].incomplete` beside its metadata under the bookkeeping
    directory, the etag the published sha256 or blob id) from the first byte; anything unexpected (a
    file rewritten, a rename across devices) just leaves it to `verify` to hash it whole."""

    # Often enough that little is left to hash when the download ends (the hasher never
    # falls more than this far behind while it has CPU); each poll lists each folder once.
    EVERY = 0.05

    def __init__(self, root: Path, bookkeeping: Path, files: list[Expected]) -> None:
        super().__init__(name="hash-while-downloading", daemon=True)
        self.root, self.downloads = root, bookkeeping / "download"
        self.files = [f for f in files if f.sha256 or f.git_blob]
        self.follows: dict[str, _Follow] = {}
        self.stopped = threading.Event()
        self.buffer = bytearray(CHUNK)

    def _open_new(self) -> None:
        """Start following the files whose download has begun since the last poll."""
        waiting: dict[Path, dict[str, Expected]] = {}
        for want in self.files:
            if want.path not in self.follows and not (self.root / want.path).exists():
                folder = (self.downloads / want.path).parent
                waiting.setdefault(folder, {})[want.sha256 or want.git_blob] = want
        for folder, by_etag in waiting.items():
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                for entry in entries:
                    parts = entry.name.split(".")
                    found = by_etag.get(parts[1]) if len(parts) in (3, 4) else None
                    if found and parts[-1] == "incomplete" and found.path not in self.follows:
                        with contextlib.suppress(OSError):
                            handle = open(entry.path, "rb")  # noqa: SIM115 (closed when done)
                            self.follows[found.path] = _Follow(handle, _hashers(found))

    def _advance(self, want: Expected, follow: _Follow, buffer: bytearray) -> None:
        hashers = list(follow.hashers.values())
        follow.read += _feed(follow.handle, hashers, want.size - follow.read, buffer)
        if follow.read == want.size and not follow.digests:
            follow.digests = {n: h.hexdigest() for n, h in follow.hashers.items()}
            follow.digests[IDENTITY] = file_identity(os.fstat(follow.handle.fileno()))
            follow.handle.close()

    def _catch_up(self, want: Expected, buffer: bytearray) -> None:
        follow = self.follows.get(want.path)
        if follow and not follow.digests:
            with contextlib.suppress(OSError, ValueError):
                self._advance(want, follow, buffer)

    def poll(self) -> None:
        self._open_new()
        for want in self.files:
            self._catch_up(want, self.buffer)

    def run(self) -> None:
        while not self.stopped.wait(self.EVERY):
            self.poll()

    def finish(self) -> dict[str, dict[str, str]]:
        """Stop, read what is left of the followed files (the last ones to finish downloading,
        a few at a time); the digests of those complete."""
        self.stopped.set()
        if self.ident is not None:  # started
            self.join(timeout=30)
        self._open_new()
        left = [want for want in self.files if want.path in self.follows]
        with ThreadPoolExecutor(max_workers=_workers()) as pool:
            list(pool.map(lambda want: self._catch_up(want, bytearray(CHUNK)), left))
        done = {}
        for path, follow in self.follows.items():
            if follow.digests:
                done[path] = follow.digests
            else:
                follow.handle.close()
        return done
