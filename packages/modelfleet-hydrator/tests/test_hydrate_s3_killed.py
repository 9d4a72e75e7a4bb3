"""The S3 path's fastest route (several objects at once, a large one split into ranged GETs on
boto3's threads) killed mid-object with SIGKILL: the retry fetches only the object it was cut
off in, nothing partial sits at a model file's name, and the copy ends verified.

Real boto3 against the loopback S3 (modelfleet_devtools.loopback.s3), the hydrator as a
process. boto3 is the image's version, a dev dependency of the workspace.
"""

import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from hydrator_world import MARKER, SCRIPT, weights
from modelfleet_devtools.loopback.s3 import Bucket, FakeS3

MIB = 1024 * 1024
FINGERPRINT = "0123456789ab"
BIG = "qwen/model-00001-of-00002.safetensors"
OBJECTS = {
    "qwen/config.json": b'{"model_type": "tiny"}',
    "qwen/tokenizer.json": b'{"vocab": ["a", "b"]}',
    "qwen/model-00002-of-00002.safetensors": weights(2 * MIB + 17),
    # Three of boto3's 8 MiB parts: split into ranged GETs, the threaded path.
    BIG: weights(24 * MIB + 5),
}


class StallingS3(FakeS3):
    """Serves `stall_key`'s first part, then holds every later part of it until released."""

    def __init__(self, objects: dict[str, bytes], stall_key: str) -> None:
        super().__init__({"models": Bucket(objects)}, lifetime=120)
        self.stall_key, self.stalled, self.release = stall_key, threading.Event(), threading.Event()

    def handle(self, h: BaseHTTPRequestHandler, *, body: bool) -> None:
        ranged = h.headers.get("Range") or ""
        later_part = ranged.startswith("bytes=") and not ranged.startswith("bytes=0-")
        if body and self.stall_key and h.path.endswith(self.stall_key) and later_part:
            self.stalled.set()
            self.release.wait(60)
        return super().handle(h, body=body)


def argv(cache: Path) -> list[str]:
    return [
        sys.executable,
        str(SCRIPT),
        f"--cache-dir={cache}",
        f"--fingerprint={FINGERPRINT}",
        "--source=S3",
        "--uri=s3://models/qwen/",
    ]


def env(s3: FakeS3, home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "AWS_ENDPOINT_URL": s3.endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "NO_PROXY": "127.0.0.1",
    }


def name(key: str) -> str:
    return key.removeprefix("qwen/")


def test_a_run_killed_mid_object_resumes_with_that_object_only(tmp_path):
    cache = tmp_path / "claim"
    staging = cache / f".staging-{FINGERPRINT}"
    others = [staging / name(k) for k in OBJECTS if k != BIG]
    with StallingS3(OBJECTS, BIG) as s3:
        try:
            proc = subprocess.Popen(
                argv(cache), env=env(s3, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
            try:
                deadline = time.monotonic() + 60
                while not (s3.stalled.is_set() and all(p.is_file() for p in others)):
                    assert proc.poll() is None, "the run ended before it could be cut off"
                    assert time.monotonic() < deadline, "the download never reached the cut"
                    time.sleep(0.05)
                proc.send_signal(signal.SIGKILL)  # the pod is evicted mid-object
            finally:
                proc.kill()
                proc.wait(timeout=10)
            served_before_kill = Counter(s3.bytes_served)
            assert 0 < served_before_kill[f"models/{BIG}"] < len(OBJECTS[BIG]), "cut mid-object"
            assert not (cache / FINGERPRINT).exists(), "nothing half-done is served"
            assert not (staging / MARKER).exists()
            assert not (staging / name(BIG)).exists(), "a partial object under its own name"
            # What was written of it sits under a temporary name (boto3's, beside `.part`).
            assert list(staging.glob(name(BIG) + ".part*")), "the run was cut mid-object"
            for path in others:  # under a model file's name is that file, whole
                assert path.read_bytes() == OBJECTS["qwen/" + path.name]

            s3.stall_key = ""  # the parts the killed run asked for stay held until the end
            retried = subprocess.run(
                argv(cache), env=env(s3, tmp_path), capture_output=True, text=True, timeout=90
            )
            assert retried.returncode == 0, retried.stdout + retried.stderr
            fetched_again = Counter(s3.bytes_served)
            fetched_again.subtract(served_before_kill)
            assert +fetched_again == Counter({f"models/{BIG}": len(OBJECTS[BIG])}), (
                "finished objects are kept; only the cut one is fetched again"
            )
            assert f"verified {len(OBJECTS)} files" in retried.stdout
        finally:
            s3.release.set()
    staged = cache / FINGERPRINT
    assert (staged / MARKER).is_file()
    assert {
        str(p.relative_to(staged)): p.read_bytes()
        for p in staged.rglob("*")
        if p.is_file() and p.name != MARKER
    } == {name(k): v for k, v in OBJECTS.items()}, "every object, whole, and nothing else"
