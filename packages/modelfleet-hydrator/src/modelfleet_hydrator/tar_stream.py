"""Reading a tar archive from the pieces of a stream, handing each member's bytes on as
memoryview slices of those pieces: no copy is made of a file's bytes between the decompressor
and the file they are written to (tarfile's stream reader joins and slices its buffers).

Understood: ustar and GNU headers (octal or base-256 numbers), the ustar name prefix, GNU long
names and long link names (`././@LongLink`, types L and K), and pax extended headers (per
member and global; `path`, `linkpath` and `size` are applied). Sparse members are refused.
The archive must end with its end-of-archive block: one that stops early (inside a header,
inside a member's bytes, or before the end block) is an error, as is a header whose checksum
is wrong, so a damaged archive fails by name instead of staging part of itself. What follows
the end block is not read. Memory stays bounded: metadata members over META_LIMIT are refused.
Standard library only.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass

BLOCK = 512
META_LIMIT = 1024 * 1024  # the largest long name or pax header read into memory
REGULAR = {b"0", b"\0", b"7"}  # a file (7: contiguous, a file to everyone but old Unixes)
HARDLINK, SYMLINK = b"1", b"2"
# Members whose size field says nothing of bytes following the header.
HEADER_ONLY = {HARDLINK, SYMLINK, b"3", b"4", b"5", b"6"}
GNU_LONGNAME, GNU_LONGLINK = b"L", b"K"
PAX_MEMBER, PAX_GLOBAL = b"x", b"g"
SPARSE = b"S"
USED_RECORDS = ("path", "linkpath", "size")  # the pax records applied; the rest are ignored
SPARSE_RECORDS = "GNU.sparse."  # any record so named: the member is sparse
POSIX_MAGIC = b"ustar\x00"  # a ustar header, whose prefix field extends its name


class TarFormatError(ValueError):
    """The bytes are not a whole tar archive this reader can read."""


@dataclass
class Member:
    """One member of the archive as its headers (long names and pax records applied) name
    it. `kind` is the typeflag byte; `size` the bytes of data that follow the header."""

    name: str
    kind: bytes
    size: int
    linkname: str

    def isfile(self) -> bool:
        return self.kind in REGULAR

    def issym(self) -> bool:
        return self.kind == SYMLINK

    def islnk(self) -> bool:
        return self.kind == HARDLINK


def _text(field: bytes) -> str:
    """A NUL-terminated name field as text (bytes that are no UTF-8 kept as surrogates,
    as the file system takes them back)."""
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _number(field: bytes, what: str) -> int:
    """A numeric header field: octal digits (NUL or space ended), or GNU's base-256."""
    if field[:1] in (b"\x80", b"\xff"):  # base-256, two's complement
        value = int.from_bytes(field[1:], "big")
        return value - (1 << (8 * len(field) - 8)) if field[0] == 0xFF else value
    digits = field.split(b"\0", 1)[0].strip(b" ")
    if not digits:
        return 0
    try:
        return int(digits, 8)
    except ValueError:
        raise TarFormatError(f"a header's {what} is not a number: {field!r}") from None


def _checked(header: bytes) -> None:
    """Raise when the header's checksum (its bytes summed, the checksum field as spaces;
    unsigned, or signed as some old writers summed) is not the one it records."""
    try:
        recorded = _number(header[148:156], "checksum")
    except TarFormatError:
        raise TarFormatError("a header's checksum is no number: the archive is no tar") from None
    blank = header[:148] + b" " * 8 + header[156:]
    unsigned = sum(blank)
    if recorded != unsigned and recorded != unsigned - 256 * sum(b > 127 for b in blank):
        raise TarFormatError(
            f"a header's checksum is {recorded}, its bytes sum to {unsigned}: "
            "the archive is damaged or is no tar"
        )


def _pax_records(data: bytes) -> dict[str, str]:
    """The `LENGTH KEY=VALUE\\n` records of a pax extended header."""
    records, at = {}, 0
    while at < len(data):
        if not data[at:].strip(b"\0"):
            break  # padding some writers leave
        space = data.find(b" ", at)
        try:
            length = int(data[at:space]) if space > at else 0
        except ValueError:
            length = 0
        record = data[space + 1 : at + length]
        if length <= 0 or at + length > len(data) or not record.endswith(b"\n"):
            raise TarFormatError(f"a pax extended header's record is malformed at byte {at}")
        key, equals, value = record[:-1].partition(b"=")
        if not equals:
            raise TarFormatError(f"a pax extended header's record has no '=': {record[:80]!r}")
        records[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        at += length
    return records


def _used(records: dict[str, str]) -> dict[str, str]:
    """The records this reader applies (so that header after header of others cannot pile
    up in memory), and whether any says the member is sparse."""
    used = {key: records[key] for key in USED_RECORDS if key in records}
    if any(key.startswith("GNU.sparse.") for key in records):
        used[SPARSE_RECORDS] = ""
    return used


class TarReader:
    """The members of the archive whose bytes `read` hands out (a piece of any size at a time,
    b"" once they end). Iterate over the members; while at one, `contents` yields its bytes
    (what is not read of them is skipped when the next member is asked for)."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self._read = read
        self._piece = memoryview(b"")
        self._at = 0  # where in _piece the unread bytes start
        self._left = 0  # bytes of the current member not yet handed out or skipped
        self._padding = 0  # the zeros after them, up to the next block
        self._globals: dict[str, str] = {}  # pax global records: defaults for what follows
        self.offset = 0  # bytes of the archive consumed so far (for the errors' sake)

    def _fill(self) -> bool:
        """Have unread bytes in the current piece; False at the end of the stream."""
        while self._at >= len(self._piece):
            piece = self._read()
            if not piece:
                return False
            self._piece, self._at = memoryview(piece), 0
        return True

    def _take(self, n: int, what: str) -> memoryview:
        """Up to `n` bytes, from the current piece only (a slice of it, not a copy)."""
        if not self._fill():
            raise TarFormatError(
                f"the archive ends at byte {self.offset}, inside {what} (truncated?)"
            )
        chunk = self._piece[self._at : self._at + n]
        self._at += len(chunk)
        self.offset += len(chunk)
        return chunk

    def _exactly(self, n: int, what: str) -> bytes:
        """`n` bytes, joined if they span pieces (headers and metadata only: small)."""
        first = self._take(n, what)
        if len(first) == n:
            return first.tobytes()
        parts = [first.tobytes()]
        got = len(first)
        while got < n:
            chunk = self._take(n - got, what)
            parts.append(chunk.tobytes())
            got += len(chunk)
        return b"".join(parts)

    def _skip(self, n: int, what: str) -> None:
        while n:
            n -= len(self._take(n, what))

    def contents(self) -> Iterator[memoryview]:
        """The current member's bytes not read yet, as slices of the stream's pieces (each
        valid for as long as its holder keeps it; the pieces are never changed)."""
        while self._left:
            chunk = self._take(self._left, "a member's bytes")
            self._left -= len(chunk)
            yield chunk

    def _finish_member(self) -> None:
        self._skip(self._left, "a member's bytes")
        self._left = 0
        self._skip(self._padding, "the padding after a member's bytes")
        self._padding = 0

    def _data(self, size: int, what: str) -> bytes:
        """The bytes of a metadata member (its padding skipped too)."""
        if size > META_LIMIT:
            raise TarFormatError(f"{what} of {size} bytes: more than this reader takes")
        data = self._exactly(size, what) if size else b""
        self._skip(-size % BLOCK, f"the padding after {what}")
        return data

    def _header(self) -> bytes | None:
        """The next header block, None at the end-of-archive block."""
        if not self._fill():
            raise TarFormatError(
                f"the archive ends at byte {self.offset}, without its end-of-archive block "
                "(truncated?)"
            )
        header = self._exactly(BLOCK, "a header")
        if not header.strip(b"\0"):
            return None
        _checked(header)
        return header

    def __iter__(self) -> Iterator[Member]:
        pax: dict[str, str] = {}
        longname = longlink = None
        while True:
            self._finish_member()
            header = self._header()
            if header is None:
                return
            kind = header[156:157]
            size = _number(header[124:136], "size")
            if size < 0:
                raise TarFormatError(f"a header's size is negative: {size}")
            if kind in (PAX_MEMBER, PAX_GLOBAL):
                records = _pax_records(self._data(size, "a pax extended header"))
                (pax if kind == PAX_MEMBER else self._globals).update(_used(records))
                continue
            if kind in (GNU_LONGNAME, GNU_LONGLINK):
                text = _text(self._data(size, "a GNU long name"))
                longname, longlink = (text, longlink) if kind == GNU_LONGNAME else (longname, text)
                continue
            records = {**self._globals, **pax}
            member = self._member(header, kind, size, records, longname, longlink)
            pax, longname, longlink = {}, None, None
            if member.kind not in HEADER_ONLY:
                self._left, self._padding = member.size, -member.size % BLOCK
            yield member

    def _member(
        self,
        header: bytes,
        kind: bytes,
        size: int,
        records: dict[str, str],
        longname: str | None,
        longlink: str | None,
    ) -> Member:
        name = _text(header[0:100])
        if header[257:263] == POSIX_MAGIC and (prefix := _text(header[345:500])):
            name = prefix + "/" + name
        name = records.get("path", longname or name)
        if kind == SPARSE or SPARSE_RECORDS in records:
            raise TarFormatError(f"{name}: a sparse member, which this reader does not unpack")
        if "size" in records:
            try:
                size = int(records["size"])
            except ValueError:
                raise TarFormatError(f"{name}: its pax size is not a number") from None
            if size < 0:
                raise TarFormatError(f"{name}: its pax size is negative")
        linkname = records.get("linkpath", longlink or _text(header[157:257]))
        return Member(name=name, kind=kind, size=size, linkname=linkname)
