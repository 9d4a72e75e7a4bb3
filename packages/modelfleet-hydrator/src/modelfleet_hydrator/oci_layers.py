"""Staging an OCI image's files: each layer streamed from the registry once, its bytes counted
and hashed as they arrive and decompressed by threads of their own (blob_stream.py), the files
under the image's model path extracted into the staging directory as they pass (tar_stream.py
hands each file's bytes on as slices of the decompressed pieces, which are written and hashed
unchanged), and the layer's sha256 compared with the manifest's when it ends.

A layer whose digest differs fails the attempt, naming the layer and the files it carried;
those files are removed, so nothing unverified is ever marked complete. A layer that passed
is recorded in the staging directory (RECORD) with the size and sha256 of each file it
carried, which is what `integrity.verify` checks the copy against before the marker is
written; a retry fetches only the layers not recorded yet (and those after them, which may
overwrite their files), and a file found missing or damaged has its layer fetched again.

Only regular files are staged (a link inside the model path is staged as a copy of its
target, read back from the staged copy); nothing is written outside the staging directory
whatever the archive names, and no mode, owner or device bit of the archive is kept. An
archive that is damaged or cut short fails the attempt by name. Standard library only.
"""

import contextlib
import fnmatch
import hashlib
import json
import posixpath
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from modelfleet_hydrator import job_report
from modelfleet_hydrator.blob_stream import PIECE, BlobStream
from modelfleet_hydrator.hash_thread import HashThread
from modelfleet_hydrator.integrity import IDENTITY, Expected, file_identity
from modelfleet_hydrator.partials import OCI_PART
from modelfleet_hydrator.registry import Reference, Registry
from modelfleet_hydrator.tar_stream import Member, TarFormatError, TarReader

RECORD = ".modelfleet-layers"  # in the staging directory: the layers that passed, and files
# Our bookkeeping beside the model's files (the marker, the revision, this record) is named
# so; an image's file named so at the top of the model path is not staged over it.
RESERVED_PREFIX = ".modelfleet-"
PARTIAL = OCI_PART  # the suffix of a file being written
WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"

Files = dict[str, list[Any]]  # relative path -> [size, sha256, index of the layer it came from]


class LayerMismatch(Exception):
    """A layer's bytes are not the ones its digest names."""


class Progress:
    """Bytes of layers read so far, read by the progress watcher."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.done += n

    def figures(self) -> dict[str, str]:
        """Bytes only: how many files an image holds is known once its layers are read."""
        with self.lock:
            done = min(self.done, self.total)
        return {job_report.BYTES_DONE: str(done), job_report.BYTES_TOTAL: str(self.total)}


def _inside(name: str, root: str) -> str | None:
    """The path of archive member `name` relative to the model path `root` ("" for root
    itself), or None when it is elsewhere in the image or climbs out of it."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None
    path = "/".join(parts)
    if path == root:
        return ""
    return path[len(root) + 1 :] if path.startswith(root + "/") else None


def selected(path: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """Whether `path` passes the filters, matched as huggingface_hub matches a repository's
    files (fnmatch, `*` crossing `/`; a pattern ending in `/` is the folder's contents)."""

    def matches(patterns: Sequence[str]) -> bool:
        return any(fnmatch.fnmatch(path, p + "*" if p.endswith("/") else p) for p in patterns)

    return (not include or matches(include)) and not matches(exclude)


def _write(chunks: Iterable[memoryview], target: Path, hashing: HashThread) -> tuple[int, str]:
    """Write `chunks` (never changed afterwards) to `target` through a partial file beside it,
    which hydrate.py's `drop_unlisted` removes should an attempt die mid-file; its size and
    sha256 (computed by `hashing` while the next chunks are written)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + PARTIAL)
    digest, size = hashlib.sha256(), 0
    with partial.open("wb", buffering=0) as out:  # the chunks are large: no buffer's copy
        for chunk in chunks:
            hashing.hand(digest, chunk)
            written = out.write(chunk)
            while written < len(chunk):
                written += out.write(chunk[written:])
            size += len(chunk)
    hashing.drain()
    partial.replace(target)
    return size, digest.hexdigest()


class Layer:
    """Extracts one layer's model files into the staging directory, keeping `files` (the
    image's files so far) up to date."""

    def __init__(self, stager: "ImageStager", index: int) -> None:
        self.stager, self.index = stager, index
        self.written: dict[str, dict[str, str]] = {}  # path -> digests, as verify takes them
        self.removed: set[str] = set()  # whited out: deleted once the layer is verified

    def member(self, archive: TarReader, member: Member) -> None:
        relative = _inside(member.name, self.stager.root)
        if not relative:
            return  # elsewhere in the image (or the model directory itself)
        if relative.startswith(RESERVED_PREFIX) and "/" not in relative:
            self.stager.log(f"skipping {relative}: the name of the hydrator's bookkeeping")
            return
        folder, base = posixpath.split(relative)
        if base == OPAQUE:
            self._remove(folder)
        elif base.startswith(WHITEOUT):
            self._remove(posixpath.join(folder, base[len(WHITEOUT) :]))
        elif not selected(relative, self.stager.include, self.stager.exclude):
            return
        elif member.isfile():
            self._stage(relative, archive.contents())
        elif member.issym() or member.islnk():
            self._link(relative, member)

    def _remove(self, relative: str) -> None:
        """A whiteout: `relative` (a file or a directory) as earlier layers left it goes."""
        files = self.stager.files
        for path in [p for p in files if p == relative or p.startswith(relative + "/")]:
            if files[path][2] < self.index:
                del files[path]
                self.removed.add(path)

    def _stage(self, relative: str, chunks: Iterable[memoryview]) -> None:
        target = self.stager.safe_join(self.stager.staging, relative)
        size, sha256 = _write(chunks, target, self.stager.hashing)
        self.stager.files[relative] = [size, sha256, self.index]
        self.written[relative] = {"sha256": sha256, IDENTITY: file_identity(target.stat())}

    def _link(self, relative: str, member: Member) -> None:
        target = member.linkname
        if member.issym():
            target = posixpath.join(posixpath.dirname(member.name), target)
        linked = _inside(posixpath.normpath(target), self.stager.root)
        if not linked or linked not in self.stager.files:
            self.stager.log(f"skipping link {relative} -> {member.linkname}: no file staged there")
            return
        self._stage(relative, _read_back(self.stager.safe_join(self.stager.staging, linked)))

    def commit(self) -> None:
        """The layer is verified: what it whited out goes from the disk too (not before, so
        that a damaged layer leaves earlier layers' files as their record says)."""
        for path in self.removed - set(self.written):
            (self.stager.staging / path).unlink(missing_ok=True)

    def discard(self) -> None:
        """Remove what this layer wrote: its bytes were not the published ones."""
        for path in self.written:
            self.stager.files.pop(path, None)
            (self.stager.staging / path).unlink(missing_ok=True)


def _read_back(path: Path) -> Iterator[memoryview]:
    """A staged file's bytes, a piece at a time (what a link inside the model path copies)."""
    with path.open("rb", buffering=0) as source:
        while piece := source.read(PIECE):
            yield memoryview(piece)


def _intact(staging: Path, files: Files) -> int:
    """The index of the first layer one of whose files is missing or of another size
    (a large number when none is)."""
    broken = [
        entry[2]
        for path, entry in files.items()
        if not (staging / path).is_file() or (staging / path).stat().st_size != entry[0]
    ]
    return min(broken, default=1 << 30)


class ImageStager:
    """Stages the files under `root` (the model path, without its leading slash) of the image
    whose `layers` the registry serves into `staging`."""

    def __init__(
        self,
        registry: Registry,
        layers: list[dict[str, Any]],
        staging: Path,
        root: str,
        log: Callable[[str], None],
        safe_join: Callable[[Path, str], Path],
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> None:
        self.registry, self.layers, self.staging, self.root = registry, layers, staging, root
        self.include, self.exclude = include, exclude
        self.log, self.safe_join = log, safe_join
        self.digests = [str(layer["digest"]) for layer in layers]
        self.progress = Progress(sum(int(layer["size"]) for layer in layers))
        self.files: Files = {}
        self.hashing = HashThread()  # each staged file's sha256, beside its writing

    def resume(self) -> int:
        """Take over what earlier attempts staged of this image; how many layers need no
        fetching (those recorded whose files are all still there at their size)."""
        record: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            record = json.loads((self.staging / RECORD).read_text())
        passed = record.get("layers") if isinstance(record, dict) else None
        if not isinstance(passed, list) or passed != self.digests[: len(passed)]:
            return 0  # nothing, or another image's layers (its files are dropped later)
        found = record.get("files")
        self.files = {
            str(p): e
            for p, e in (found.items() if isinstance(found, dict) else ())
            if isinstance(e, list)
            and len(e) == 3
            and all(isinstance(v, t) for v, t in zip(e, (int, str, int), strict=True))
        }
        keep = min(len(passed), _intact(self.staging, self.files))
        self.files = {p: e for p, e in self.files.items() if e[2] < keep}
        self.progress.done = sum(int(layer["size"]) for layer in self.layers[:keep])
        return keep

    def stage(
        self, reporter: "job_report.Reporter", report_every: float
    ) -> tuple[list[Expected], dict[str, dict[str, str]]]:
        """Fetch what is not staged yet; (every file of the model path with its size and
        sha256, the digests of those this attempt wrote, as `integrity.verify` takes them)."""
        keep = self.resume()
        if keep:
            self.log(f"{keep} of {len(self.layers)} layer(s) staged by an earlier attempt")
        reporter.send(self.progress.figures())
        watcher = job_report.Watcher(reporter, self.progress.figures, report_every)
        watcher.start()
        if not self.hashing.is_alive():
            self.hashing.start()
        streamed: dict[str, dict[str, str]] = {}
        try:
            for index in range(keep, len(self.layers)):
                streamed.update(self._fetch(index).written)
                self._save(index + 1)
        finally:
            watcher.stop()  # reports the last figures
        expected = [Expected(p, e[0], sha256=e[1]) for p, e in sorted(self.files.items())]
        return expected, {p: d for p, d in streamed.items() if p in self.files}

    def _save(self, layers: int) -> None:
        partial = self.staging / (RECORD + PARTIAL)
        record = {"layers": self.digests[:layers], "files": self.files}
        partial.write_text(json.dumps(record, sort_keys=True))
        partial.replace(self.staging / RECORD)

    def _fetch(self, index: int) -> Layer:
        layer, descriptor = Layer(self, index), self.layers[index]
        digest, size = str(descriptor["digest"]), int(descriptor["size"])
        failure: Exception | None = None
        with self.registry.open("blobs", digest) as response:
            stream = BlobStream(response, size, self.progress.add)
            try:
                archive = TarReader(lambda: stream.read(PIECE))
                for member in archive:
                    layer.member(archive, member)
            except (TarFormatError, OSError, EOFError, ValueError, zlib.error) as exc:
                failure = exc
            finally:
                stream.finish()  # the digest covers every byte, the archive's padding too
        if stream.fetch_error:  # the connection failed: nothing to tell about the bytes
            layer.discard()
            raise stream.fetch_error
        got = "sha256:" + stream.sha256.hexdigest()
        if got != digest or stream.read_bytes != size:
            layer.discard()
            carried = ", ".join(list(layer.written)[:5]) or "no model file read yet"
            raise LayerMismatch(
                f"layer {digest} (carrying {carried}): {stream.read_bytes} bytes with {got}, "
                f"the manifest publishes {size} bytes with {digest}; it is fetched again on "
                "the next attempt"
            )
        if failure:
            raise RuntimeError(f"layer {digest}: cannot extract its files: {failure}")
        layer.commit()
        self.log(f"layer {digest}: {size} bytes verified, {len(layer.written)} model file(s)")
        return layer


def fetch_image(
    image: str,
    path: str,
    filters: tuple[list[str], list[str]],
    staging: Path,
    reporter: "job_report.Reporter",
    *,
    pin: str,
    pinned_file: Path,
    report_every: float,
    log: Callable[[str], None],
    safe_join: Callable[[Path, str], Path],
) -> tuple[str, list[Expected], dict[str, dict[str, str]], int]:
    """hydrate.py's `fetch` for an image, `filters` its (include, exclude): (its digest:
    `pin` when given, else what the reference names now, written to `pinned_file` before
    anything is fetched; its model files; the digests of those this attempt wrote; the bytes
    of its layers)."""
    registry = Registry(Reference.parse(image))
    digest, layers = registry.resolve(pin)
    pinned_file.write_text(digest)
    log(f"image {image!r} is {digest}: {len(layers)} layer(s), files under {path}")
    reporter.send({job_report.REVISION: digest})
    stager = ImageStager(registry, layers, staging, path.strip("/"), log, safe_join, *filters)
    expected, streamed = stager.stage(reporter, report_every)
    return digest, expected, streamed, stager.progress.total
