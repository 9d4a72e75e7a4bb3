"""A layer's blob as a readable stream of its unpacked tar, fetched, hashed and decompressed by
threads of their own.

One thread reads the registry's response, hashes every byte (sha256, for the layer's digest)
and counts it; another decompresses (gzip, or xz/bzip2 as tarfile would; a plain tar passes
through); the caller reads the tar from `read` (oci_layers.py, with tar_stream.py). hashlib,
zlib and socket reads release the GIL, so receiving, hashing, decompressing and the caller's
unpacking (hashing and writing each file) overlap on as many cores as there are. The stages
hand each other pieces of at most PIECE bytes through queues DEPTH deep: memory stays bounded
whatever the blob's size, and decompression is bounded per piece too (a small blob of zeros
cannot inflate into memory).

However the caller stops (the archive ends before its padding, or cannot be read), `finish`
lets the fetching thread read the blob to its end, so the digest always covers every byte.
Standard library only.
"""

import bz2
import hashlib
import lzma
import queue
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

PIECE = 1024 * 1024  # bytes handed from stage to stage at once (and the tar reader's)
DEPTH = 8  # pieces waiting between two stages at most
POLL = 0.05  # seconds a blocked stage waits before looking whether it was abandoned
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class Unsupported(ValueError):
    """A layer compressed in a way the standard library cannot undo."""


def _gzip(first: bytes, more: Iterator[bytes]) -> Iterator[bytes]:
    """The members of a gzip stream, decompressed (zero padding after a member is skipped,
    as gzip does); EOFError when the stream ends inside a member."""
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    for data in _chain(first, more):
        while data:
            if decoder.eof:  # another member, or padding
                data = data.lstrip(b"\0")
                if not data:
                    break
                if not data.startswith(GZIP_MAGIC[: len(data)]):
                    raise zlib.error("data after the end of the layer's gzip stream")
                decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out = decoder.decompress(data, PIECE)
            if out:
                yield out
            data = decoder.unused_data if decoder.eof else decoder.unconsumed_tail
            while len(out) == PIECE and not data and not decoder.eof:
                out = decoder.decompress(b"", PIECE)  # output was cut short: what it holds
                if out:
                    yield out
    if not decoder.eof:
        raise EOFError("the layer's gzip stream ends before its end")


def _chain(first: bytes, more: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from more


def _other(decoder: Any, first: bytes, more: Iterator[bytes]) -> Iterator[bytes]:
    """What an lzma or bz2 decompressor makes of the stream."""
    for data in _chain(first, more):
        if decoder.eof:
            if data.strip(b"\0"):
                raise ValueError("data after the end of the layer's compressed stream")
            continue
        out = decoder.decompress(data, PIECE)
        while out:
            yield out
            out = b"" if decoder.needs_input or decoder.eof else decoder.decompress(b"", PIECE)
    if not decoder.eof:
        raise EOFError("the layer's compressed stream ends before its end")


def _decompressed(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """The tar `pieces` (of a blob) hold, told apart by the blob's first bytes."""
    first = b""
    for piece in pieces:
        first += piece
        if len(first) >= 6:
            break
    if first.startswith(GZIP_MAGIC):
        yield from _gzip(first, pieces)
    elif first.startswith(b"\xfd7zXZ\x00"):
        yield from _other(lzma.LZMADecompressor(), first, pieces)
    elif first.startswith(b"BZh"):
        yield from _other(bz2.BZ2Decompressor(), first, pieces)
    elif first.startswith(ZSTD_MAGIC):
        raise Unsupported("the layer is zstd-compressed, which the hydrator cannot decompress")
    else:
        yield from _chain(first, pieces)  # an uncompressed tar


class BlobStream:
    """The tar in the blob `response` serves, `size` bytes as the manifest says; `count`
    is told every byte read (progress)."""

    def __init__(self, response: BinaryIO, size: int, count: Callable[[int], None]) -> None:
        self.response, self.limit, self.count = response, size + 1, count
        self.sha256, self.read_bytes = hashlib.sha256(), 0
        self.fetch_error: Exception | None = None  # the connection failed
        self.decode_error: Exception | None = None  # the blob is no archive we can read
        self._raw: queue.Queue[bytes | None] = queue.Queue(DEPTH)
        self._plain: queue.Queue[bytes | None] = queue.Queue(DEPTH)
        self._abandoned = threading.Event()  # the reader stopped: stop handing pieces on
        self._pending = b""
        self._threads = [
            threading.Thread(target=self._fetch, name="fetch-layer", daemon=True),
            threading.Thread(target=self._decompress, name="decompress-layer", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _hand(self, into: "queue.Queue[bytes | None]", item: bytes | None) -> None:
        while not self._abandoned.is_set():
            try:
                into.put(item, timeout=POLL)
                return
            except queue.Full:
                continue

    def _take(self, source: "queue.Queue[bytes | None]") -> bytes | None:
        while not self._abandoned.is_set():
            try:
                return source.get(timeout=POLL)
            except queue.Empty:
                continue
        return None

    def _fetch(self) -> None:
        """Read (never more than one byte past the published size: enough to tell the blob
        is too long), hash and count every byte, abandoned or not."""
        try:
            while self.read_bytes < self.limit:
                data = self.response.read(min(PIECE, self.limit - self.read_bytes))
                if not data:
                    break
                self.sha256.update(data)
                self.read_bytes += len(data)
                self.count(len(data))
                self._hand(self._raw, data)
        except Exception as exc:  # handed to the reader, which raises it
            self.fetch_error = exc
        finally:
            self._hand(self._raw, None)

    def _pieces(self) -> Iterator[bytes]:
        while (piece := self._take(self._raw)) is not None:
            yield piece

    def _decompress(self) -> None:
        try:
            for out in _decompressed(self._pieces()):
                self._hand(self._plain, out)
        except Exception as exc:  # handed to the reader, which raises it
            self.decode_error = exc
        finally:
            self._hand(self._plain, None)

    def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes of the tar (a piece as it came when `n` covers it); b"" at its end.
        What made the stream stop early is raised."""
        if not self._pending:
            piece = self._take(self._plain)
            if piece is None:
                if self.fetch_error or self.decode_error:
                    raise (self.fetch_error or self.decode_error)  # type: ignore[misc]
                return b""
            self._pending = piece
        if n is None or n < 0 or n >= len(self._pending):
            out, self._pending = self._pending, b""
            return out
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    def finish(self) -> None:
        """Stop decompressing and wait until every byte of the blob is read and hashed."""
        self._abandoned.set()
        for thread in self._threads:
            thread.join()
