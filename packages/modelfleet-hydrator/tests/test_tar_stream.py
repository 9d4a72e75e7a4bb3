"""The tar reader on archives as Python's tarfile, GNU tar and hand-made headers write them,
handed over in pieces of every awkward size: each member comes out with its whole name and
its exact bytes, those bytes are slices of the pieces handed in (no copy), and an archive
that is cut short or damaged fails with an error that says so instead of ending quietly."""

import io
import random
import subprocess
import tarfile
from collections.abc import Callable, Iterator

import pytest
from modelfleet_hydrator.blob_stream import PIECE
from modelfleet_hydrator.tar_stream import META_LIMIT, TarFormatError, TarReader

LONG = "models/" + "/".join(f"folder-{i:02d}-with-a-long-name" for i in range(12)) + "/w.bin"
BYTES = random.Random(5).randbytes(3 * 512 + 7)  # ends mid-block: padding follows


def archive(entries: dict[str, bytes], fmt: int = tarfile.PAX_FORMAT, **links: str) -> bytes:
    """A tar of `entries` (name -> bytes) and of `links` (symlink name -> target) as tarfile
    writes it in `fmt`."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as out:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            out.addfile(info)
    return raw.getvalue()


class Pieces:
    """A stream's `read`: `data` in pieces of `sizes` bytes in turn; remembers the pieces."""

    def __init__(self, data: bytes, sizes: tuple[int, ...] = (PIECE,)) -> None:
        self.data, self.sizes, self.at, self.handed = data, sizes, 0, []

    def __call__(self) -> bytes:
        piece = self.data[self.at : self.at + self.sizes[len(self.handed) % len(self.sizes)]]
        self.at += len(piece)
        self.handed.append(piece)
        return piece


def members(read: Callable[[], bytes]) -> dict[str, tuple[str, bytes, str]]:
    """name -> (kind, bytes, link target) of every member of the archive `read` hands out."""
    reader = TarReader(read)
    found = {}
    for member in reader:
        kind = "file" if member.isfile() else "symlink" if member.issym() else member.kind.decode()
        found[member.name] = (kind, b"".join(reader.contents()), member.linkname)
    return found


def test_pax_long_names_and_link_targets_come_out_whole():
    data = archive({LONG: BYTES, "models/naïve-ü.json": b"{}"}, **{LONG + ".lnk": LONG})
    assert len(LONG) > 255, "too long for a ustar header, prefix and all"
    assert b"path=" + LONG.encode() in data, "tarfile wrote a pax record"
    assert members(Pieces(data)) == {
        LONG: ("file", BYTES, ""),
        "models/naïve-ü.json": ("file", b"{}", ""),
        LONG + ".lnk": ("symlink", b"", LONG),
    }


def test_gnu_long_names_and_link_targets_come_out_whole():
    data = archive({LONG: BYTES}, tarfile.GNU_FORMAT, **{LONG + ".lnk": LONG})
    assert b"././@LongLink" in data and b"path=" not in data
    assert members(Pieces(data)) == {
        LONG: ("file", BYTES, ""),
        LONG + ".lnk": ("symlink", b"", LONG),
    }


def test_a_ustar_name_prefix_is_joined_to_its_name():
    name = "models/" + "p" * 120 + "/" + "n" * 90  # fits as prefix + name, no pax needed
    data = archive({name: b"x"}, tarfile.USTAR_FORMAT)
    assert members(Pieces(data)) == {name: ("file", b"x", "")}


@pytest.mark.parametrize(
    "sizes",
    [
        pytest.param((1,), id="1 byte"),
        pytest.param((511,), id="511 bytes"),
        pytest.param((513,), id="513 bytes"),
        pytest.param((1, 511, 513, 7, 4096), id="odd sizes in turn"),
        pytest.param((PIECE,), id="1 MiB"),
    ],
)
def test_files_come_out_exact_whatever_the_pieces_sizes(sizes):
    entries = {"models/empty.txt": b"", "models/w.bin": BYTES, "models/after.txt": b"end"}
    assert members(Pieces(archive(entries), sizes)) == {
        name: ("file", data, "") for name, data in entries.items()
    }


def test_a_file_across_many_pieces_is_handed_on_as_slices_of_them():
    big = random.Random(6).randbytes(5 * PIECE + 3)
    read = Pieces(archive({"models/big.bin": big}), (PIECE - 1, 513))
    reader = TarReader(read)
    [member] = [(m, list(reader.contents())) for m in reader]
    info, chunks = member
    assert info.size == len(big) and b"".join(chunks) == big
    assert len(chunks) > 5, "one slice per piece it spans"
    handed = {id(piece) for piece in read.handed}
    assert all(isinstance(c, memoryview) and id(c.obj) in handed for c in chunks), (
        "every chunk is a view of a piece as it was handed in, not a copy"
    )


def test_a_file_of_size_zero_yields_no_bytes_and_the_next_member_follows():
    reader = TarReader(Pieces(archive({"models/a": b"", "models/b": b"b"})))
    seen = [(m.name, m.size, list(reader.contents())) for m in reader]
    assert [(name, size) for name, size, _ in seen] == [("models/a", 0), ("models/b", 1)]
    assert seen[0][2] == [] and bytes(seen[1][2][0]) == b"b"


def test_members_whose_bytes_are_not_read_are_skipped():
    data = archive({"etc/big": BYTES * 50, "models/w.bin": BYTES})
    reader = TarReader(Pieces(data, (700,)))
    read = {m.name: b"".join(reader.contents()) for m in reader if m.name.startswith("models/")}
    assert read == {"models/w.bin": BYTES}


def header(name: bytes, size: bytes, kind: bytes = b"0", magic: bytes = b"ustar\x0000") -> bytes:
    """A hand-made header block with `size` as its size field, its checksum right."""
    block = bytearray(512)
    block[0 : len(name)] = name
    block[100:108] = b"0000644\0"
    block[124:136] = size
    block[156:157] = kind
    block[257:265] = magic
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 512)


END = b"\0" * 1024


def test_a_size_in_gnus_base_256_is_read():
    size = b"\x80" + (len(BYTES)).to_bytes(11, "big")
    data = header(b"models/w.bin", size, magic=b"ustar  \0") + padded(BYTES) + END
    assert members(Pieces(data)) == {"models/w.bin": ("file", BYTES, "")}


def test_a_pax_size_overrides_the_headers():
    record = b"path=models/w.bin\n"
    records = b"%d size=%d\n" % (len(b"00 size=%d\n" % len(BYTES)), len(BYTES))
    records += b"%d %s" % (len(record) + 3, record)
    data = (
        header(b"PaxHeader", b"%011o\0" % len(records), b"x")
        + padded(records)
        + header(b"short", b"00000000000\0")  # the ustar field says 0: the pax size wins
        + padded(BYTES)
        + END
    )
    assert members(Pieces(data)) == {"models/w.bin": ("file", BYTES, "")}


def cut(data: bytes, at: int) -> Iterator[bytes]:
    yield data[:at]


@pytest.mark.parametrize(
    ("at", "says"),
    [
        pytest.param(512 + 1000, "inside a member's bytes", id="inside a file's bytes"),
        pytest.param(512 + len(BYTES) + 3, "inside the padding", id="inside the padding"),
        pytest.param(5 * 512 + 100, "inside a header", id="inside a header"),
        pytest.param(7 * 512, "without its end-of-archive block", id="before the end block"),
        pytest.param(0, "without its end-of-archive block", id="empty"),
    ],
)
def test_a_truncated_archive_fails_saying_where_it_ends(at, says):
    data = archive({"models/w.bin": BYTES, "models/b": b"b"}, tarfile.USTAR_FORMAT)
    assert data[6 * 512 : 7 * 512].strip(b"\0") and not data[7 * 512 :].strip(b"\0")
    with pytest.raises(TarFormatError, match=f"ends at byte {at}, {says}") as err:
        members(Pieces(data[:at], (100,)))
    assert "truncated" in str(err.value)


def test_a_damaged_header_fails_on_its_checksum():
    data = bytearray(archive({"models/w.bin": BYTES}))
    at = data.index(b"models/w.bin")
    data[at] ^= 1
    with pytest.raises(TarFormatError, match="checksum"):
        members(Pieces(bytes(data)))


def test_bytes_that_are_no_tar_fail_saying_so():
    with pytest.raises(TarFormatError, match="no tar"):
        members(Pieces(random.Random(7).randbytes(4096)))


def test_a_pax_header_too_large_for_memory_is_refused_unread():
    data = header(b"PaxHeader", b"%011o\0" % (META_LIMIT + 1), b"x") + END
    with pytest.raises(TarFormatError, match="more than this reader takes"):
        members(Pieces(data))


def test_a_malformed_pax_record_fails_by_name():
    records = b"99 path=models/w.bin\n"  # the length is wrong
    data = header(b"PaxHeader", b"%011o\0" % len(records), b"x") + padded(records) + END
    with pytest.raises(TarFormatError, match="pax extended header's record is malformed"):
        members(Pieces(data))


def test_a_sparse_member_is_refused_rather_than_staged_wrong():
    data = header(b"models/w.bin", b"00000000000\0", b"S", b"ustar  \0") + END
    with pytest.raises(TarFormatError, match="sparse"):
        members(Pieces(data))


def test_a_pax_sparse_member_is_refused_too():
    records = b"22 GNU.sparse.major=1\n"
    data = header(b"PaxHeader", b"%011o\0" % len(records), b"x") + padded(records)
    data += header(b"models/w.bin", b"00000000000\0") + END
    with pytest.raises(TarFormatError, match=r"models/w\.bin: a sparse member"):
        members(Pieces(data))


def test_global_pax_records_apply_to_the_members_after_them():
    records = b"19 linkpath=target\n"
    data = header(b"GlobalHead", b"%011o\0" % len(records), b"g") + padded(records)
    data += header(b"models/a", b"00000000000\0", b"2") + END
    assert members(Pieces(data)) == {"models/a": ("symlink", b"", "target")}


@pytest.mark.parametrize("fmt", ["gnu", "oldgnu", "posix"])
def test_archives_gnu_tar_writes_read_as_tarfile_reads_them(tmp_path, fmt):
    """GNU tar (what the benchmark's modelcar is made with) in each of its formats, long
    names, a symlink and a hard link included, read through pieces of 513 bytes."""
    deep = tmp_path / "models" / "/".join(f"folder-{i:02d}-{'x' * 20}" for i in range(10))
    deep.mkdir(parents=True)
    for i, size in enumerate([0, 1, 511, 512, 513, 70_000]):
        (deep / f"f{i}-{'y' * 120}").write_bytes(random.Random(i).randbytes(size))
    (tmp_path / "models" / "naïve.json").write_text("{}")
    (tmp_path / "models" / "link").symlink_to("naïve.json")
    (tmp_path / "models" / "hard").hardlink_to(deep / f"f5-{'y' * 120}")
    made = tmp_path / "m.tar"
    subprocess.run(["tar", f"--format={fmt}", "-cf", made, "-C", tmp_path, "models"], check=True)
    with tarfile.open(made) as expected:
        wanted = {
            m.name.rstrip("/"): (
                "file" if m.isfile() else "symlink" if m.issym() else m.type.decode(),
                expected.extractfile(m).read() if m.isfile() else b"",  # type: ignore[union-attr]
                m.linkname,
            )
            for m in expected
        }
    got = members(Pieces(made.read_bytes(), (513,)))
    assert {name.rstrip("/"): entry for name, entry in got.items()} == wanted
    assert len(wanted) == 20 and any(len(name) > 255 for name in wanted)
