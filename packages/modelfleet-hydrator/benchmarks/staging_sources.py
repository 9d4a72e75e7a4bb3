"""The contenders of staging_speed.py: the model it stages, the loopback server of each source
holding it, the hydrator's, the plain client's and the floor's command lines for that source,
and the launcher that runs a command line and measures it."""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from modelfleet_devtools.loopback.hub import FakeHub, Repo
from modelfleet_devtools.loopback.s3 import Bucket, FakeS3
from modelfleet_devtools.realcp import realcp_binary

SCRIPT = Path(__file__).resolve().parent.parent / "image" / "hydrate.py"
MIB = 1024 * 1024
REPO_ID = "bench/staging"
BUCKET, PREFIX = "models", "bench/staging/"
FINGERPRINT = "0123456789ab"


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mib: float


@dataclass
class Model:
    files: dict[str, bytes]

    @property
    def size(self) -> int:
        return sum(len(d) for d in self.files.values())


def model(big: int, big_mib: float, small: int) -> Model:
    rnd = random.Random(50)
    files = {
        f"model-{i + 1:05d}-of-{big:05d}.safetensors": os.urandom(int(big_mib * MIB) + i)
        for i in range(big)
    }
    for i in range(small):
        files[f"extra/part-{i:04d}.json"] = rnd.randbytes(1024 + 97 * i % 60000)
    files["config.json"] = b'{"model_type": "bench"}'
    return Model(files)


# Runs each contender and reports what it cost. A process of its own, started before the
# model is made: a child forked from a process holding the model would count the model in its
# peak RSS (Linux records the parent's at exec after vfork), so the launcher stays small.
LAUNCHER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    argv, env = json.loads(line)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    print(json.dumps([os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime,
                      usage.ru_maxrss / 1024, out.decode(errors="replace")[-3000:]]), flush=True)
"""


class Launcher:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, argv: list[str], env: dict[str, str]) -> Run:
        """One contender's run to completion: its wall time, CPU and peak memory."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps([argv, env]) + "\n")
        self.proc.stdin.flush()
        code, wall, cpu, rss, out = json.loads(self.proc.stdout.readline())
        if code != 0:
            raise SystemExit(f"{argv[:3]} failed ({code}):\n{out}")
        return Run(wall, cpu, rss)

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def curl_floor(urls: list[str], env: dict[str, str]) -> list[str]:
    argv = ["curl", "-sf", "--parallel", "--parallel-max", "8"]
    for url in urls:
        argv += ["-o", "/dev/null", url]
    return argv


BOTO3_CLIENT = """
import os, sys, boto3
from boto3.s3.transfer import TransferConfig, create_transfer_manager
bucket, prefix, into = sys.argv[1:4]
client = boto3.client("s3")
keys = [o["Key"] for p in client.get_paginator("list_objects_v2").paginate(Bucket=bucket,
        Prefix=prefix) for o in p.get("Contents", [])]
with create_transfer_manager(client, TransferConfig()) as manager:
    futures = []
    for k in keys:
        target = os.path.join(into, k[len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        futures.append(manager.download(bucket, k, target))
for f in futures:
    f.result()
"""


@dataclass
class Source:
    """How each contender stages this source's copy of the model."""

    name: str
    env: dict[str, str]
    hydrator_args: list[str]
    plain: Callable[[Path], list[str]]
    floor_urls: list[str]
    makes_dirs: bool = False  # the plain client needs its target directory made first
    runs: dict[str, list[Run]] = field(default_factory=dict)


def hydrator_argv(python: str, into: Path, args: list[str]) -> list[str]:
    return [python, str(SCRIPT), f"--cache-dir={into}", f"--fingerprint={FINGERPRINT}", *args]


@contextmanager
def oci_source(m: Model, work: Path, env: dict[str, str], python: str) -> Iterator[Source]:
    crane = str(realcp_binary("crane"))
    disk = work / "registry"
    disk.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        host = f"127.0.0.1:{probe.getsockname()[1]}"
    registry = subprocess.Popen(
        [crane, "registry", "serve", "--address", host, "--disk", str(disk)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://{host}/v2/", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or registry.poll() is not None:
                    raise SystemExit("crane registry serve never answered") from None
                time.sleep(0.1)
        tree = work / "oci-model"
        for name, data in m.files.items():
            path = tree / "models" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        layer = work / "oci-model.tar"
        subprocess.run(["tar", "-C", str(tree), "-cf", str(layer), "models"], check=True)
        shutil.rmtree(tree)
        reference = f"{host}/bench/model:1"
        subprocess.run(
            [crane, "append", "--insecure", "--oci-empty-base", "-f", str(layer), "-t", reference],
            check=True,
            capture_output=True,
        )
        layer.unlink()
        manifest = json.loads(
            subprocess.run(
                [crane, "manifest", "--insecure", reference],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        blobs = [f"http://{host}/v2/bench/model/blobs/{la['digest']}" for la in manifest["layers"]]

        def plain(into: Path) -> list[str]:
            # Our own values only (a loopback reference and a temporary directory).
            pipeline = f"{crane} export --insecure {reference} - | tar -x -C {into}"
            return ["sh", "-c", f"set -e; {pipeline}"]

        yield Source(
            "OCI",
            env,
            ["--source=OCI", f"--image={reference}", "--path=/models"],
            plain,
            blobs,
            makes_dirs=True,
        )
    finally:
        registry.terminate()
        registry.wait(timeout=30)


@contextmanager
def hub_source(m: Model, env: dict[str, str], python: str) -> Iterator[Source]:
    repo = Repo()
    commit = repo.commit("main", m.files)
    with FakeHub({REPO_ID: repo}, lifetime=24 * 3600) as hub:
        hub_env = {**env, "HF_ENDPOINT": hub.endpoint}
        hf = str(Path(python).parent / "hf")
        urls = [
            f"{hub.endpoint}/{REPO_ID}/resolve/{commit}/{urllib.parse.quote(name)}"
            for name in sorted(m.files)
        ]
        yield Source(
            "HuggingFace",
            hub_env,
            ["--source=HuggingFace", f"--repo={REPO_ID}", "--revision=main"],
            lambda into: [hf, "download", REPO_ID, "--local-dir", str(into)],
            urls,
        )


@contextmanager
def s3_source(m: Model, env: dict[str, str], python: str) -> Iterator[Source]:
    objects = {PREFIX + name: data for name, data in m.files.items()}
    bucket = Bucket(objects)
    for key in objects:  # S3 keeps ETags; worked out here, not in the first contender's run
        bucket.etag(key)
    with FakeS3({BUCKET: bucket}, lifetime=24 * 3600) as s3:
        s3_env = {
            **env,
            "AWS_ENDPOINT_URL": s3.endpoint,
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        urls = [f"{s3.endpoint}/{BUCKET}/{urllib.parse.quote(key)}" for key in sorted(objects)]
        yield Source(
            "S3",
            s3_env,
            ["--source=S3", f"--uri=s3://{BUCKET}/{PREFIX}"],
            lambda into: [python, "-c", BOTO3_CLIENT, BUCKET, PREFIX, str(into)],
            urls,
            makes_dirs=True,
        )


def has_boto3(python: str) -> bool:
    probe = subprocess.run([python, "-c", "import boto3"], capture_output=True, check=False)
    return probe.returncode == 0
