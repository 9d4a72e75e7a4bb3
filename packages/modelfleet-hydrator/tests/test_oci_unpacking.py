"""A layer's archive unpacked into the staging directory by the tar reader, from a registry
stand-in that serves the blobs as given: whatever names the archive carries (`..`, absolute
paths, long names that climb out, links pointing away), nothing lands outside the staging
directory, only the model path's regular files are staged, without the archive's mode bits,
and a layer whose archive is cut short fails by name, leaving no file that looks complete."""

import contextlib
import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
from modelfleet_hydrator import job_report
from modelfleet_hydrator.oci_layers import RECORD, ImageStager
from modelfleet_hydrator.sources import safe_join

WEIGHTS = bytes(range(256)) * 4099  # about 1 MiB, not a multiple of a block
CLIMB = "models/" + "../" * 40 + "outside-long.txt"  # over 100 bytes: a long name


class Blobs:
    """The registry: serves each blob by its digest, and counts what it served."""

    def __init__(self, *blobs: bytes) -> None:
        self.blobs = {"sha256:" + hashlib.sha256(b).hexdigest(): b for b in blobs}
        self.layers = [{"digest": d, "size": len(b)} for d, b in self.blobs.items()]
        self.fetched: list[str] = []

    def open(self, kind: str, digest: str) -> contextlib.AbstractContextManager[io.BytesIO]:
        assert kind == "blobs"
        self.fetched.append(digest)
        return contextlib.nullcontext(io.BytesIO(self.blobs[digest]))


def tar(fmt: int, *infos: tuple[tarfile.TarInfo, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as out:
        for info, data in infos:
            info.size = len(data) if info.isfile() else 0
            out.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return raw.getvalue()


def entry(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


def stage(tmp_path: Path, registry: Blobs) -> tuple[Path, list[str], dict[str, str]]:
    """Stage the model path /models of `registry`'s image; the staging directory, the log,
    and every file under it by relative path with its sha256."""
    staging = tmp_path / "claim" / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    log: list[str] = []
    stager = ImageStager(
        registry,  # type: ignore[arg-type]
        registry.layers,
        staging,
        "models",
        log.append,
        safe_join,
    )
    try:
        stager.stage(job_report.Reporter(None, log.append), 60)
    finally:
        files = {
            str(p.relative_to(staging)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in staging.rglob("*")
            if p.is_file()
        }
    return staging, log, files


def umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_names_that_climb_out_of_the_model_path_stage_nothing_outside_it(tmp_path):
    pax_climb = entry("models/innocent.txt")
    pax_climb.pax_headers = {"path": "models/../../pax-outside.txt"}  # the pax name wins
    first = tar(
        tarfile.PAX_FORMAT,
        (entry("models/w.bin"), WEIGHTS),
        (entry("models/empty.txt"), b""),
        (entry("models/../etc/passwd"), b"root::0:0"),
        (entry("../../outside.txt"), b"out"),
        (entry("/models/absolute.bin"), b"abs"),  # rooted: the image's /models
        (pax_climb, b"pax"),
        (entry("models/setuid.bin", mode=0o6755), b"suid"),
        (entry("models/tty", tarfile.CHRTYPE), b""),
        (entry("models/fifo", tarfile.FIFOTYPE), b""),
    )
    second = gzip.compress(
        tar(
            tarfile.GNU_FORMAT,
            (entry(CLIMB), b"long"),
            (entry("models/up", tarfile.SYMTYPE, "../../../etc/shadow"), b""),
            (entry("models/rooted", tarfile.SYMTYPE, "/etc/passwd"), b""),
            (entry("models/hard-out", tarfile.LNKTYPE, "../outside.txt"), b""),
            (entry("models/sub/w-link.bin", tarfile.SYMTYPE, "../w.bin"), b""),
            (entry("models/w-hard.bin", tarfile.LNKTYPE, "models/w.bin"), b""),
        )
    )
    staging, log, files = stage(tmp_path, Blobs(first, second))
    assert {p: h for p, h in files.items() if p != RECORD} == {
        "w.bin": sha(WEIGHTS),
        "empty.txt": sha(b""),
        "absolute.bin": sha(b"abs"),
        "setuid.bin": sha(b"suid"),
        "sub/w-link.bin": sha(WEIGHTS),  # links inside the model path: copies of their target
        "w-hard.bin": sha(WEIGHTS),
    }
    outside = [p for p in tmp_path.rglob("*") if staging not in (p, *p.parents)]
    assert outside == [tmp_path / "claim"], "nothing written beside the staging directory"
    assert (staging / "setuid.bin").stat().st_mode & 0o7777 == 0o666 & ~umask(), "no mode kept"
    assert not any(p.is_symlink() for p in staging.rglob("*")), "links are copies"
    assert any("skipping link up -> ../../../etc/shadow" in line for line in log)


@pytest.mark.parametrize("compressed", [False, True], ids=["plain tar", "gzip"])
def test_a_layer_cut_short_fails_by_name_and_leaves_no_file_that_looks_complete(
    tmp_path, compressed
):
    whole = tar(tarfile.PAX_FORMAT, (entry("models/a.txt"), b"a"), (entry("models/w.bin"), WEIGHTS))
    cut = whole[: whole.index(WEIGHTS) + 4096]  # published so: its digest holds
    blob = gzip.compress(cut) if compressed else cut
    with pytest.raises(RuntimeError, match="cannot extract its files: the archive ends at byte"):
        stage(tmp_path, Blobs(blob))
    staging = tmp_path / "claim" / "staging"
    assert not (staging / "w.bin").exists(), "the cut file is only ever a partial file"
    assert not (staging / RECORD).exists(), "the layer is not recorded as staged"


def test_a_layer_staged_is_recorded_and_a_second_run_fetches_nothing(tmp_path):
    registry = Blobs(tar(tarfile.PAX_FORMAT, (entry("models/w.bin"), WEIGHTS)))
    staging, _, files = stage(tmp_path, registry)
    assert files["w.bin"] == sha(WEIGHTS)
    record = json.loads((staging / RECORD).read_text())
    assert record["files"] == {"w.bin": [len(WEIGHTS), sha(WEIGHTS), 0]}
    stage(tmp_path, registry)
    assert registry.fetched == [registry.layers[0]["digest"]], "fetched once"


class CutAfter(io.BytesIO):
    """A response whose connection drops after `limit` bytes."""

    def __init__(self, data: bytes, limit: int) -> None:
        super().__init__(data)
        self.limit = limit

    def read(self, n: int | None = -1) -> bytes:
        if self.tell() >= self.limit:
            raise ConnectionResetError("the connection dropped")
        return super().read(min(self.limit - self.tell(), n if n and n > 0 else self.limit))


def test_a_connection_cut_mid_file_resumes_from_the_layer_it_was_in(tmp_path):
    first = tar(tarfile.PAX_FORMAT, (entry("models/config.json"), b"{}"))
    second = tar(tarfile.PAX_FORMAT, (entry("models/w.bin"), WEIGHTS * 3))
    registry = Blobs(first, second)
    cut_digest = registry.layers[1]["digest"]
    served = registry.open
    registry.open = lambda kind, digest: (  # type: ignore[method-assign]
        contextlib.nullcontext(CutAfter(second, len(second) // 2))
        if digest == cut_digest
        else served(kind, digest)
    )
    with pytest.raises(ConnectionResetError):
        stage(tmp_path, registry)
    staging = tmp_path / "claim" / "staging"
    assert not (staging / "w.bin").exists(), "the file cut off is only a partial file"
    partial = staging / "w.bin.modelfleet-partial"
    assert 0 < partial.stat().st_size < 3 * len(WEIGHTS)

    again = Blobs(first, second)
    _, log, files = stage(tmp_path, again)
    assert again.fetched == [cut_digest], "the layer staged before the cut is not fetched again"
    assert "1 of 2 layer(s) staged by an earlier attempt" in log
    assert files["w.bin"] == sha(WEIGHTS * 3) and files["config.json"] == sha(b"{}")
    assert not partial.exists()
