"""A layer's blob read through the fetching and decompressing threads: the tar comes out
whole however the layer was compressed, every byte of the blob is hashed whatever the reader
did, and a blob that inflates far beyond its size never sits in memory at once."""

import bz2
import gzip
import hashlib
import io
import lzma
import tarfile
import zlib

import pytest
from modelfleet_hydrator.blob_stream import PIECE, BlobStream, Unsupported

TAR = b"".join(bytes([i % 251]) * 4096 for i in range(700))  # stands in for a tar: 2.7 MiB


class Response(io.BytesIO):
    """A registry's response: read() hands out at most `step` bytes at a time."""

    def __init__(self, data: bytes, step: int = 300_000) -> None:
        super().__init__(data)
        self.step = step

    def read(self, n: int | None = -1) -> bytes:
        return super().read(self.step if n is None or n < 0 else min(n, self.step))


def read_all(stream: BlobStream) -> bytes:
    out = []
    while piece := stream.read(PIECE):
        assert len(piece) <= PIECE
        out.append(piece)
    stream.finish()
    return b"".join(out)


@pytest.mark.parametrize(
    "blob",
    [
        pytest.param(TAR, id="an uncompressed tar"),
        pytest.param(gzip.compress(TAR), id="gzip"),
        pytest.param(gzip.compress(TAR[:1000]) + gzip.compress(TAR[1000:]), id="two gzip members"),
        pytest.param(gzip.compress(TAR) + b"\0" * 5000, id="gzip, zero padding after it"),
        pytest.param(lzma.compress(TAR), id="xz"),
        pytest.param(bz2.compress(TAR), id="bzip2"),
    ],
)
def test_the_tar_comes_out_whole_and_the_blob_is_hashed(blob):
    counted: list[int] = []
    stream = BlobStream(Response(blob), len(blob), counted.append)
    assert read_all(stream) == TAR
    assert stream.sha256.hexdigest() == hashlib.sha256(blob).hexdigest()
    assert stream.read_bytes == sum(counted) == len(blob)
    assert stream.fetch_error is None and stream.decode_error is None


@pytest.mark.parametrize(
    ("blob", "error"),
    [
        pytest.param(gzip.compress(TAR)[:-100], EOFError, id="gzip cut short"),
        pytest.param(gzip.compress(TAR) + b"not gzip", zlib.error, id="garbage after the gzip"),
        pytest.param(b"\x28\xb5\x2f\xfd" + b"\0" * 100, Unsupported, id="zstd"),
    ],
)
def test_a_blob_that_cannot_be_unpacked_says_why_and_is_still_hashed_to_its_end(blob, error):
    stream = BlobStream(Response(blob), len(blob), lambda _: None)
    with pytest.raises(error):
        read_all(stream)
    stream.finish()
    assert stream.read_bytes == len(blob)
    assert stream.sha256.hexdigest() == hashlib.sha256(blob).hexdigest()


def test_a_reader_that_stops_early_still_gets_the_whole_blob_hashed():
    blob = gzip.compress(TAR)
    stream = BlobStream(Response(blob), len(blob), lambda _: None)
    assert stream.read(10)
    stream.finish()  # as when a tar's end-of-archive comes before the padding
    assert stream.read_bytes == len(blob)
    assert stream.sha256.hexdigest() == hashlib.sha256(blob).hexdigest()


def test_a_blob_longer_than_published_is_read_one_byte_past_its_size_only():
    blob = gzip.compress(TAR)
    stream = BlobStream(Response(blob + b"x" * PIECE), len(blob), lambda _: None)
    stream.finish()
    assert stream.read_bytes == len(blob) + 1


def test_a_highly_compressible_blob_is_handed_on_in_bounded_pieces():
    blob = gzip.compress(b"\0" * (256 * PIECE))  # 256 MiB of zeros in about 250 KiB
    stream = BlobStream(Response(blob), len(blob), lambda _: None)
    total = 0
    while piece := stream.read(PIECE):
        assert len(piece) <= PIECE
        total += len(piece)
    stream.finish()
    assert total == 256 * PIECE


def test_tarfile_reads_the_stream_as_a_layer_archive():
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for name, data in (("models/a.bin", TAR), ("models/b.json", b"{}")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    blob = gzip.compress(raw.getvalue())
    stream = BlobStream(Response(blob), len(blob), lambda _: None)
    seen = {}
    with tarfile.open(fileobj=stream, mode="r|", bufsize=PIECE) as archive:  # type: ignore[call-overload]
        for member in archive:
            seen[member.name] = archive.extractfile(member).read()  # type: ignore[union-attr]
    stream.finish()
    assert seen == {"models/a.bin": TAR, "models/b.json": b"{}"}
