"""Where one S3 object's bytes go, and how its MD5 is computed beside the download without
holding any part in memory. Standard library only.

boto3's transfer manager writes a seekable file object as its own `download_file` does: each
piece at its offset as it arrives, whatever the order of the ranged GETs (a non-seekable one
makes it hold every part received early until those before it are written: 250 MiB on the
benchmark's model). The MD5 of an ETag needs the bytes in order, so each written piece is
handed to a hash worker, which

- hashes it from the piece itself when it starts where the hash stands (every piece of a
  single-GET object, the first part of a large one);
- else only notes the written range and lets the piece go; once the bytes before it are
  hashed, it reads that range back from the file (the page cache: a copy into one reused
  buffer, no allocation) and hashes it there.

hashlib and pread release the GIL on large buffers, so the hash runs beside the download on
another core. A piece written again over bytes already hashed (a GET retried from the start
of its part) makes the streamed digest unusable: none is given and `integrity.verify` reads
the whole file again, so a digest is only ever that of the bytes on disk.
"""

import contextlib
import hashlib
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from modelfleet_hydrator.integrity import IDENTITY, Expected, file_identity

READ_BACK = 8 * 1024 * 1024  # bytes read back from the file and hashed at a time


class HashWorker(threading.Thread):
    """Runs the steps handed to it in the order handed; at most DEPTH wait, so a writer that
    outruns the hashing waits (each waiting step may hold one written piece)."""

    DEPTH = 16

    def __init__(self) -> None:
        super().__init__(name="s3-hash", daemon=True)
        self.steps: queue.Queue[tuple[Callable[..., None], tuple[Any, ...]]] = queue.Queue(
            self.DEPTH
        )
        self.buffer = bytearray(READ_BACK)  # read-back buffer, used by this thread only

    def hand(self, step: Callable[..., None], *args: Any) -> None:
        self.steps.put((step, args))

    def drain(self) -> None:
        """Wait until every step handed so far has run."""
        done = threading.Event()
        self.hand(done.set)
        done.wait()

    def run(self) -> None:
        while True:
            step, args = self.steps.get()
            # Each step keeps its own failure; the worker lives on, so `drain` always returns.
            with contextlib.suppress(Exception):
                step(*args)


class Sink:
    """One object's `<file>.part`, written at the offsets the transfer manager seeks to (only
    one thread writes an object at a time: its GET's for a single GET, the manager's I/O
    thread for ranged ones), and the MD5 of its bytes in order when its ETag is one."""

    def __init__(self, partial: Path, want: Expected, worker: HashWorker) -> None:
        self.partial, self.want, self.worker = partial, want, worker
        self.fd = -1  # opened at the first byte: not 1000 files at once
        self.position = 0
        self.md5 = hashlib.md5(usedforsecurity=False) if want.md5 else None
        self.hashed = 0  # bytes [0, hashed) are in the MD5 (worker thread only)
        self.ahead: dict[int, int] = {}  # written, not hashed yet: start -> end (worker only)
        self.ahead_ends: dict[int, int] = {}  # the same ranges: end -> start
        self.spoiled = False  # bytes already hashed were written again

    # What s3transfer asks of a seekable file object.
    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence != os.SEEK_SET:
            raise OSError("a download sink seeks to absolute offsets only")
        self.position = offset
        return offset

    def tell(self) -> int:
        return self.position

    def write(self, data: bytes | memoryview) -> int:
        if self.fd < 0:
            self.fd = os.open(self.partial, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        view, offset = memoryview(data), self.position
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], offset + done)
        self.position = offset + done
        if self.md5 is not None and done:
            self.worker.hand(self._hash, offset, data)
        return done

    # The worker's side.
    def _hash(self, offset: int, data: bytes | memoryview) -> None:
        try:
            self._take(offset, data)
        except Exception:  # a read back failed: the digest is not given, verify reads again
            self.spoiled = True

    def _take(self, offset: int, data: bytes | memoryview) -> None:
        end = offset + len(data)
        if offset < self.hashed:
            self.spoiled = True  # bytes already hashed written again
        elif offset == self.hashed:
            assert self.md5 is not None
            self.md5.update(data)
            self.hashed = end
            self._read_back()
        else:
            start = self.ahead_ends.pop(offset, offset)  # joins a range ending where it starts
            after = self.ahead.pop(end, None)  # and one starting where it ends
            if after is not None:
                self.ahead_ends.pop(after, None)
                end = after
            self.ahead.pop(start, None)
            self.ahead[start] = end
            self.ahead_ends[end] = start

    def _read_back(self) -> None:
        """Hash the written ranges that now follow on from what is hashed, from the file."""
        assert self.md5 is not None
        view = memoryview(self.worker.buffer)
        while self.hashed in self.ahead:
            end = self.ahead.pop(self.hashed)
            self.ahead_ends.pop(end, None)
            while self.hashed < end:
                n = os.preadv(self.fd, [view[: min(len(view), end - self.hashed)]], self.hashed)
                if n <= 0:
                    self.spoiled = True
                    return
                self.md5.update(view[:n])
                self.hashed += n

    def finish(self, target: Path) -> dict[str, str]:
        """On the worker, once the transfer has written every byte: rename the whole object
        into place; its digests, as `integrity.verify` takes them (none when they do not cover
        exactly the bytes on disk)."""
        if self.fd < 0:
            self.fd = os.open(self.partial, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            st = os.fstat(self.fd)
        finally:
            os.close(self.fd)
        self.partial.replace(target)
        whole = self.hashed == st.st_size == self.want.size and not self.ahead
        if self.md5 is None or self.spoiled or not whole:
            return {}
        return {"md5": self.md5.hexdigest(), IDENTITY: file_identity(st)}

    def discard(self) -> None:
        """On the worker, once the transfer has failed: no partial file stays."""
        if self.fd >= 0:
            os.close(self.fd)
        self.partial.unlink(missing_ok=True)
