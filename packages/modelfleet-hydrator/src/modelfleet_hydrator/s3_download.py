"""Fetching S3 objects into a staging directory: every object queued at once on one boto3
transfer manager (one pool of ranged GETs shared by all objects), each object written to
`<file>.part` at the offsets its parts arrive at (as boto3's `download_file` writes: no part
is held in memory waiting for those before it) and renamed to its name once whole and hashed;
its MD5 is computed beside the download by a hash worker, from the written pieces in order or
read back from the page cache (s3_sink.py), so verifying (integrity.verify) reads nothing
again.

The knobs (chunk size, concurrency, checksum mode) were chosen by measuring: docs/modelcache.md,
"S3 transfer settings". Each object's size and ETag come from the listing: no HEAD request per
object, and every ranged GET carries `If-Match` with the listed ETag, so an object replaced
mid-download fails the attempt instead of mixing two versions.
"""

import functools
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelfleet_hydrator.integrity import Expected
from modelfleet_hydrator.partials import S3_PART
from modelfleet_hydrator.s3_sink import HashWorker, Sink

MIB = 1024 * 1024
# Measured on the benchmark's model (docs/modelcache.md): ranged GETs of this size, this many
# at once across all objects.
CHUNK_BYTES = 8 * MIB
CONCURRENCY = 10
HASH_WORKERS = 2  # at most; objects are handed to them in turn (s3_sink.py)
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


class _Staged:
    """Told by the transfer manager when an object has ended: has its hash worker move it
    into place once hashed (or remove what was written of it), keeping the first failure."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.digests: dict[str, dict[str, str]] = {}
        self.failure: BaseException | None = None
        self.lock = threading.Lock()

    def fail(self, exc: BaseException) -> None:
        with self.lock:
            self.failure = self.failure or exc

    def done(self, future: Any, sink: Sink, target: Path) -> None:
        try:
            future.result()
        except BaseException as exc:  # kept, raised by `download` at the end
            self.fail(exc)
            sink.worker.hand(self._discard, sink)
            return
        sink.worker.hand(self._finish, sink, target)

    def _discard(self, sink: Sink) -> None:
        try:
            sink.discard()
        except BaseException as exc:
            self.fail(exc)

    def _finish(self, sink: Sink, target: Path) -> None:
        try:
            digests = sink.finish(target)
        except BaseException as exc:
            self.fail(exc)
            self._discard(sink)
            return
        with self.lock:
            if digests:
                self.digests[sink.want.path] = digests
        self.log(f"fetched {sink.want.path} ({sink.want.size} bytes)")


def _workers() -> int:
    """Hash workers: one object's MD5 is sequential, so several objects hash at once."""
    return max(1, min(HASH_WORKERS, os.cpu_count() or 1))


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

    staged = _Staged(log)
    workers = [HashWorker() for _ in range(_workers())]
    for worker in workers:
        worker.start()

    class Subscriber(BaseSubscriber):  # type: ignore[misc]
        def __init__(self, obj: S3Object, sink: Sink, target: Path) -> None:
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
    with create_transfer_manager(s3, config) as manager:
        for i, (obj, target) in enumerate(objects):
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + S3_PART)
            sink = Sink(partial, obj.want, workers[i % len(workers)])
            manager.download(bucket, obj.key, sink, subscribers=[Subscriber(obj, sink, target)])
    for worker in workers:  # every object renamed into place (or removed) once hashed
        worker.drain()
    if staged.failure:
        raise staged.failure
    return staged.digests
