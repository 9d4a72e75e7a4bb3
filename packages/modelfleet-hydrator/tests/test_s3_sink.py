"""The S3 sink (s3_sink.py): parts written at their offsets in any order still give the MD5
of the bytes on disk, a corrupted part is caught by it, a part written again over hashed bytes
leaves verifying to read the file, and boto3's transfer manager takes the sink as a seekable
file (so it holds no part in memory waiting for those before it)."""

import hashlib
import os
import random
from pathlib import Path

import pytest
from modelfleet_hydrator.integrity import IDENTITY, problem_with, s3_expected
from modelfleet_hydrator.partials import s3_partial_bytes
from modelfleet_hydrator.s3_sink import READ_BACK, HashWorker, Sink

PIECE = 256 * 1024
CONTENT = random.Random(3).randbytes(40 * PIECE + 123)  # more than READ_BACK to read back


@pytest.fixture
def worker():
    w = HashWorker()
    w.start()
    return w


def sink_for(tmp_path: Path, worker: HashWorker, content: bytes = CONTENT) -> Sink:
    want = s3_expected("model.bin", len(content), hashlib.md5(content).hexdigest())
    return Sink(tmp_path / "model.bin.part", want, worker)


def pieces(content: bytes) -> list[tuple[int, bytes]]:
    return [(o, content[o : o + PIECE]) for o in range(0, len(content), PIECE)]


def write(sink: Sink, at: list[tuple[int, bytes]]) -> None:
    for offset, data in at:  # as s3transfer's IOWriteTask does
        sink.seek(offset)
        sink.write(data)


def finish(sink: Sink, worker: HashWorker, target: Path) -> dict[str, str]:
    got: list[dict[str, str]] = []
    worker.hand(lambda: got.append(sink.finish(target)))
    worker.drain()
    return got[0]


def test_pieces_in_any_order_hash_to_the_objects_md5(tmp_path, worker):
    assert len(CONTENT) > READ_BACK
    sink = sink_for(tmp_path, worker)
    shuffled = pieces(CONTENT)
    first, rest = shuffled[0], shuffled[1:]
    random.Random(5).shuffle(rest)
    write(sink, [*rest, first])  # the first piece last: everything else is read back
    digests = finish(sink, worker, tmp_path / "model.bin")
    assert (tmp_path / "model.bin").read_bytes() == CONTENT
    assert not (tmp_path / "model.bin.part").exists()
    assert digests["md5"] == hashlib.md5(CONTENT).hexdigest()
    assert problem_with(tmp_path, sink.want, digests) is None


def test_in_order_pieces_are_hashed_from_the_pieces_themselves(tmp_path, worker):
    sink = sink_for(tmp_path, worker)
    write(sink, pieces(CONTENT))
    worker.drain()
    assert sink.hashed == len(CONTENT) and not sink.ahead
    assert finish(sink, worker, tmp_path / "model.bin")["md5"] == hashlib.md5(CONTENT).hexdigest()


def test_a_corrupted_part_written_out_of_order_fails_verification(tmp_path, worker):
    sink = sink_for(tmp_path, worker)
    parts = pieces(CONTENT)
    offset, data = parts[7]
    parts[7] = (offset, bytes(b ^ 0xFF for b in data))  # same size, other bytes
    write(sink, parts[::-1])
    digests = finish(sink, worker, tmp_path / "model.bin")
    problem = problem_with(tmp_path, sink.want, digests)
    assert problem is not None and problem.startswith("model.bin: md5 ")


def test_a_part_written_again_over_hashed_bytes_leaves_the_file_to_be_read_again(tmp_path, worker):
    """A GET retried from its part's start writes bytes already hashed: the streamed digest
    could then differ from the disk, so none is given and verify reads the file."""
    sink = sink_for(tmp_path, worker)
    parts = pieces(CONTENT)
    write(sink, parts[:10])
    worker.drain()
    write(sink, [(parts[2][0], b"\0" * len(parts[2][1]))])  # other bytes over hashed ones
    write(sink, parts[10:])
    digests = finish(sink, worker, tmp_path / "model.bin")
    assert digests == {}
    problem = problem_with(tmp_path, sink.want, digests)
    assert problem is not None and "md5" in problem, "the file is read again and fails"


def test_a_multipart_etag_is_not_hashed_and_the_object_still_lands_whole(tmp_path, worker):
    want = s3_expected("model.bin", len(CONTENT), "0" * 32 + "-3")
    sink = Sink(tmp_path / "model.bin.part", want, worker)
    write(sink, pieces(CONTENT)[::-1])
    assert finish(sink, worker, tmp_path / "model.bin") == {}
    assert (tmp_path / "model.bin").read_bytes() == CONTENT


def test_an_empty_object_lands_as_an_empty_file(tmp_path, worker):
    sink = sink_for(tmp_path, worker, b"")
    digests = finish(sink, worker, tmp_path / "model.bin")
    assert (tmp_path / "model.bin").read_bytes() == b""
    assert digests["md5"] == hashlib.md5(b"").hexdigest() and IDENTITY in digests


def test_a_discarded_transfer_leaves_no_partial_file(tmp_path, worker):
    sink = sink_for(tmp_path, worker)
    write(sink, pieces(CONTENT)[3:5])
    worker.hand(sink.discard)
    worker.drain()
    assert list(tmp_path.iterdir()) == []


def test_progress_counts_what_is_written_of_a_part_file_with_holes(tmp_path, worker):
    """The last part written first makes `.part` its full size: progress counts blocks."""
    sink = sink_for(tmp_path, worker, b"x" * (8 * 1024 * 1024))
    sink.seek(8 * 1024 * 1024 - PIECE)
    sink.write(b"x" * PIECE)
    worker.drain()
    assert os.stat(tmp_path / "model.bin.part").st_size == 8 * 1024 * 1024
    assert PIECE <= s3_partial_bytes(tmp_path, ["model.bin"]) < 1024 * 1024
    worker.hand(sink.discard)
    worker.drain()


def test_boto3s_transfer_manager_writes_the_sink_at_offsets_not_through_a_defer_queue(
    tmp_path, worker
):
    from s3transfer.download import DownloadSeekableOutputManager, DownloadSubmissionTask
    from s3transfer.futures import TransferFuture, TransferMeta
    from s3transfer.utils import CallArgs, OSUtils

    sink = sink_for(tmp_path, worker)
    future = TransferFuture(TransferMeta(CallArgs(fileobj=sink)))
    task = DownloadSubmissionTask.__new__(DownloadSubmissionTask)
    chosen = task._get_download_output_manager_cls(future, OSUtils())
    assert chosen is DownloadSeekableOutputManager
