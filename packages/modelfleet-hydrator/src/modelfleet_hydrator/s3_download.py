"""Fetching S3 objects into a staging directory: every object queued at once on one boto3
transfer manager (one pool of ranged GETs shared by all objects), each object written through
`<file>.part` in order (the manager holds a part received early until those before it are
written) and renamed to its name once whole; its MD5 is computed from the same bytes as they
are written, by a thread beside the writing one, so verifying (integrity.verify) reads
nothing again.

The knobs (chunk size, concurrency, checksum mode) were chosen by measuring: docs/modelcache.md,
"S3 transfer settings". Each object's size and ETag come from the listing: no HEAD request per
object, and every ranged GET carries `If-Match` with the listed ETag, so an object replaced
mid-download fails the attempt instead of mixing two versions.
"""

import functools
import hashlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from modelfleet_hydrator.hash_thread import HashThread
from modelfleet_hydrator.integrity import IDENTITY, Expected, file_identity
from modelfleet_hydrator.partials import S3_PART

MIB = 1024 * 1024
# Measured on the benchmark's model (docs/modelcache.md): ranged GETs of this size, this many
# at once across all objects.
CHUNK_BYTES = 8 * MIB
CONCURRENCY = 10
IN_ORDER_WINDOW = 20  # parts of one object in flight or held at most
# Each response is read and written IO_PIECE at a time (s3transfer's default is 256 KiB: four
# times the Python work per byte, on the cores the download competes for); at most IO_QUEUE
# pieces wait to be written, the 25 MiB s3transfer's defaults allow.
IO_PIECE = 1 * MIB
IO_QUEUE = 25
# botocore's default. "when_required" hangs s3transfer's download into a stream (its first
# ranged GET never hands the rest on; s3transfer 0.19); no HEAD is made either way, the size
# and ETag being given. Every object is checked against its size and (single-part) MD5 ETag
# before the marker whatever the mode.
CHECKSUM_VALIDATION = "when_supported"


@dataclass(frozen=True)
class S3Object:
    """One object to stage: its key, its ETag as listed, and what its file must be."""

    key: str
    etag: str
    want: Expected


@functools.cache
def client() -> Any:
    """The S3 client, one per process for the listing and the downloads, with a connection per
    concurrent request (boto3's clients may be shared between threads)."""
    import boto3
    from botocore.config import Config

    config = Config(
        max_pool_connections=CONCURRENCY,
        response_checksum_validation=CHECKSUM_VALIDATION,
        request_checksum_calculation="when_required",
    )
    return boto3.client("s3", config=config)


class _Sink:
    """Where one object's bytes go, in order (the transfer manager's single I/O thread puts
    a ranged GET's bytes in sequence before writing them to an object that cannot seek):
    its partial file, and the hash its ETag names, so it is never read again."""

    def __init__(self, partial: Path, want: Expected, hashing: HashThread) -> None:
        self.partial, self.want, self.hashing = partial, want, hashing
        self.file: BinaryIO | None = None  # opened at the first byte: not 1000 at once
        self.md5 = hashlib.md5(usedforsecurity=False) if want.md5 else None

    def write(self, data: bytes) -> int:
        if self.file is None:
            self.file = self.partial.open("wb")
        if self.md5:
            self.hashing.hand(self.md5, data)
        return self.file.write(data)

    def close(self, target: Path) -> dict[str, str]:
        """Rename the whole object into place; its digests, as verify takes them."""
        if self.file is None:
            self.file = self.partial.open("wb")  # an empty object
        with self.file:
            self.file.flush()
            identity = file_identity(os.fstat(self.file.fileno()))
        self.partial.replace(target)
        if self.md5:
            self.hashing.drain()
        return {"md5": self.md5.hexdigest(), IDENTITY: identity} if self.md5 else {}

    def discard(self) -> None:
        if self.file is not None:
            self.file.close()
        self.partial.unlink(missing_ok=True)


class _Staged:
    """Told by the transfer manager when an object has ended: moves it into place, or keeps
    the first failure."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.digests: dict[str, dict[str, str]] = {}
        self.failure: BaseException | None = None
        self.lock = threading.Lock()

    def done(self, future: Any, sink: _Sink, target: Path) -> None:
        try:
            future.result()
            digests = sink.close(target)
        except BaseException as exc:  # kept, raised by `download` at the end
            sink.discard()
            with self.lock:
                self.failure = self.failure or exc
            return
        with self.lock:
            if digests:
                self.digests[sink.want.path] = digests
        self.log(f"fetched {sink.want.path} ({sink.want.size} bytes)")


def download(
    s3: Any,
    bucket: str,
    objects: list[tuple[S3Object, Path]],
    log: Callable[[str], None],
) -> dict[str, dict[str, str]]:
    """Fetch each object to its target path; the digests of those fetched, hashed once each
    was whole. The first failure is raised once every transfer has ended (those finished are
    in place for the next attempt; boto3 removes the temporary files of the others)."""
    from boto3.s3.transfer import TransferConfig, create_transfer_manager
    from s3transfer.subscribers import BaseSubscriber

    staged, hashing = _Staged(log), HashThread()
    hashing.start()

    class Subscriber(BaseSubscriber):  # type: ignore[misc]
        def __init__(self, obj: S3Object, sink: _Sink, target: Path) -> None:
            self.obj, self.sink, self.target = obj, sink, target

        def on_queued(self, future: Any, **kwargs: Any) -> None:
            future.meta.provide_transfer_size(self.obj.want.size)
            if self.obj.etag:
                future.meta.provide_object_etag(self.obj.etag)

        def on_done(self, future: Any, **kwargs: Any) -> None:
            staged.done(future, self.sink, self.target)

    config = TransferConfig(
        multipart_threshold=CHUNK_BYTES,
        multipart_chunksize=CHUNK_BYTES,
        max_concurrency=CONCURRENCY,
        io_chunksize=IO_PIECE,
        max_io_queue=IO_QUEUE,
    )
    # Parts of one object received ahead of the one it waits for are held in memory until it
    # comes: at most this many per object, so memory stays bounded whatever the object size.
    config.max_in_memory_download_chunks = IN_ORDER_WINDOW
    with create_transfer_manager(s3, config) as manager:
        for obj, target in objects:
            target.parent.mkdir(parents=True, exist_ok=True)
            sink = _Sink(target.with_name(target.name + S3_PART), obj.want, hashing)
            manager.download(bucket, obj.key, sink, subscribers=[Subscriber(obj, sink, target)])
    if staged.failure:
        raise staged.failure
    return staged.digests
