"""The hydrator's S3 path with an in-memory bucket standing in for boto3's client and transfer
manager (real boto3 against the loopback S3 is test_hydrate_s3_killed.py): files land under
the fingerprint, a re-run fetches nothing, an interrupted run resumes, a corrupted object is
caught by its ETag."""

import hashlib
import sys
import types
from pathlib import Path

import pytest
from modelfleet_hydrator import hydrate, s3_download

FINGERPRINT = "0123456789ab"
BUCKET = {
    "qwen/config.json": b"{}",
    "qwen/model.safetensors": b"w" * 4096,
    "qwen/sub/tokenizer.json": b'{"v": 1}',
    "qwen/": b"",  # a "folder" placeholder object
    "other/secret.txt": b"not under the prefix",
}


def listed(key: str) -> dict:
    """An object as list_objects_v2 describes it: single-part uploads have the MD5 as ETag,
    multipart ones `<md5 of the parts' md5s>-<parts>` (the big file here)."""
    data = BUCKET[key]
    etag = hashlib.md5(data).hexdigest() if len(data) < 4096 else "0" * 32 + "-2"
    return {"Key": key, "Size": len(data), "ETag": f'"{etag}"'}


class FakeS3:
    def __init__(self, fail_on: str | None = None) -> None:
        self.fetched: list[str] = []
        self.fail_on = fail_on
        self.corrupt: set[str] = set()

    def get_paginator(self, name: str):
        assert name == "list_objects_v2"

        class Paginator:
            def paginate(self, Bucket: str, Prefix: str):
                assert Bucket == "models"
                keys = sorted(k for k in BUCKET if k.startswith(Prefix))
                yield {"Contents": [listed(k) for k in keys[:2]]}
                yield {"Contents": [listed(k) for k in keys[2:]]}

        return Paginator()

    def send(self, key: str, sink) -> None:
        """An object's bytes into the hydrator's sink, as boto3's transfer manager writes."""
        if key == self.fail_on:
            self.fail_on = None
            sink.write(BUCKET[key][:10])  # a partial write, then the connection drops
            raise ConnectionError("connection reset")
        self.fetched.append(key)
        data = BUCKET[key]
        if key in self.corrupt:
            self.corrupt.discard(key)
            data = data.upper()  # same size, other bytes
        sink.write(data[:3])
        sink.write(data[3:])


class Transfer:
    """What the hydrator is told of one object's transfer (a TransferFuture's surface)."""

    def __init__(self) -> None:
        self.meta = types.SimpleNamespace(
            provide_transfer_size=lambda size: None, provide_object_etag=lambda etag: None
        )
        self.error: Exception | None = None

    def result(self) -> None:
        if self.error:
            raise self.error


class TransferManager:
    """boto3's transfer manager as the hydrator uses it, over the in-memory bucket."""

    def __init__(self, s3: FakeS3) -> None:
        self.s3 = s3

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def download(self, bucket: str, key: str, fileobj, subscribers) -> None:
        assert bucket == "models"
        transfer = Transfer()
        for subscriber in subscribers:
            subscriber.on_queued(transfer)
        try:
            self.s3.send(key, fileobj)
        except ConnectionError as exc:
            transfer.error = exc
        for subscriber in subscribers:
            subscriber.on_done(transfer)


@pytest.fixture
def s3(monkeypatch):
    client = FakeS3()
    monkeypatch.setattr(s3_download, "client", lambda **_: client)
    transfer = types.SimpleNamespace(
        TransferConfig=lambda **_: types.SimpleNamespace(),
        create_transfer_manager=lambda s3, config: TransferManager(s3),
    )
    monkeypatch.setitem(sys.modules, "boto3.s3.transfer", transfer)
    subscribers = types.SimpleNamespace(BaseSubscriber=object)
    monkeypatch.setitem(sys.modules, "s3transfer.subscribers", subscribers)
    return client


def run(cache: Path) -> int:
    return hydrate.main(
        [
            f"--cache-dir={cache}",
            f"--fingerprint={FINGERPRINT}",
            "--source=S3",
            "--uri=s3://models/qwen/",
        ]
    )


def staged_files(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in directory.rglob("*")
        if p.is_file() and p.name != hydrate.MARKER
    }


def test_objects_under_the_prefix_land_under_the_fingerprint(s3, tmp_path):
    assert run(tmp_path) == 0
    assert staged_files(tmp_path / FINGERPRINT) == {
        "config.json": b"{}",
        "model.safetensors": b"w" * 4096,
        "sub/tokenizer.json": b'{"v": 1}',
    }
    assert (tmp_path / FINGERPRINT / hydrate.MARKER).is_file()


def test_a_second_run_fetches_nothing(s3, tmp_path):
    assert run(tmp_path) == 0
    s3.fetched.clear()
    assert run(tmp_path) == 0
    assert s3.fetched == []


def test_an_interrupted_run_resumes_with_the_missing_objects_only(s3, tmp_path):
    s3.fail_on = "qwen/model.safetensors"
    assert run(tmp_path) == 1
    assert not (tmp_path / FINGERPRINT).exists(), "nothing half-done is served"
    finished = set(s3.fetched)  # fetched beside the failed one, several at once
    s3.fetched.clear()
    assert run(tmp_path) == 0
    objects = {"qwen/config.json", "qwen/model.safetensors", "qwen/sub/tokenizer.json"}
    assert sorted(s3.fetched) == sorted(objects - finished), "finished objects are kept"
    assert "qwen/model.safetensors" in s3.fetched
    assert staged_files(tmp_path / FINGERPRINT)["model.safetensors"] == b"w" * 4096


def test_an_object_whose_bytes_differ_from_its_etag_fails_by_name_and_is_fetched_again(
    s3, tmp_path, capsys
):
    s3.corrupt.add("qwen/sub/tokenizer.json")
    assert run(tmp_path) == 1
    assert "integrity check failed: sub/tokenizer.json: md5" in capsys.readouterr().out
    assert not (tmp_path / FINGERPRINT).exists()
    s3.fetched.clear()
    assert run(tmp_path) == 0
    assert s3.fetched == ["qwen/sub/tokenizer.json"], "only the bad object is fetched again"
    assert staged_files(tmp_path / FINGERPRINT)["sub/tokenizer.json"] == b'{"v": 1}'


def test_a_killed_attempts_boto3_temporary_file_is_removed_as_a_partial_file(s3, tmp_path, capsys):
    """boto3 writes `<file>.part` through `<file>.part.<8 random hex digits>` and never reuses
    the name: a killed attempt's is deleted before the download, named for what it is."""
    staging = tmp_path / f".staging-{FINGERPRINT}"
    leftover = staging / "sub" / "tokenizer.json.part.a1B2c3D4"
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b'{"v"')
    assert run(tmp_path) == 0
    out = capsys.readouterr().out
    assert "removing partial file of an interrupted attempt: tokenizer.json.part.a1B2c3D4" in out
    assert "not in the commit being staged" not in out
    assert not leftover.exists()
    assert "sub/tokenizer.json.part.a1B2c3D4" not in staged_files(tmp_path / FINGERPRINT)
