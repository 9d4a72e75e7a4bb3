"""Staging one model from each source side by side: the hydrator, the fastest plain client of
that source, and the floor (the same bytes from the same loopback server into /dev/null).

The model (BIG files of BIG_MIB MiB and SMALL small files, random bytes) is served on
127.0.0.1 by three loopback sources at once:

- OCI: `crane registry serve` (realcp) holding a one-layer modelcar (the files under /models,
  gzipped by `crane append`); plain client `crane export IMAGE - | tar -x`;
- HuggingFace: the loopback Hub (modelfleet_devtools.loopback.hub); plain client `hf download`;
- S3: the loopback S3 (modelfleet_devtools.loopback.s3); plain client boto3's transfer
  manager with its defaults, every object queued at once (what `aws s3 cp --recursive` does);
  measured only when --python has boto3 (the image's requirements.txt installs it).

The hydrator runs as a composed Job runs it (the image's launcher, image/hydrate.py, with the
Job's arguments; no Job to report to), with the interpreter --python names; `hf download` and
the boto3 client run with that interpreter too. The floor is `curl` fetching the same URLs
(8 at once) into /dev/null.

Cases: unpaced, and through a paced link (--cases 1gbit,10gbit: the loopback interface of a
private network namespace shaped by `tc ... tbf`, which needs root and `unshare -n`). Each
case runs ROUNDS rounds, the contenders of a source in turn, alternating the order. Reported
per case and contender: the median wall time, MiB/s (model bytes / median time), the median
CPU seconds (user + system of the process and the children it waited for), the largest peak
RSS of one of its processes, and the ratio of the median times to the plain client's and to
the floor's.

Run: uv run python packages/modelfleet-hydrator/benchmarks/staging_speed.py [--write-docs]
(--write-docs replaces the section between the markers in docs/benchmarks.md with the output).
"""

import argparse
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    SectionError,
    check_sections,
    script_command,
    section_name,
    write_sections,
)
from modelfleet_devtools.loopback.hub import FakeHub, Repo
from modelfleet_devtools.loopback.s3 import Bucket, FakeS3
from modelfleet_devtools.realcp import realcp_binary

HERE = Path(__file__).resolve().parent
PACKAGES = HERE.parents[1]
SCRIPT = HERE.parent / "image" / "hydrate.py"
SOURCE_PATHS = [PACKAGES / "modelfleet-hydrator" / "src", PACKAGES / "modelfleet-contracts" / "src"]
MIB = 1024 * 1024
REPO_ID = "bench/staging"
BUCKET, PREFIX = "models", "bench/staging/"
RATES = {"unpaced": "", "1gbit": "1gbit", "10gbit": "10gbit"}  # case -> tc rate
SOURCES = ("OCI", "HuggingFace", "S3")
PLAIN = {"OCI": "crane export, tar -x", "HuggingFace": "hf download", "S3": "boto3 transfer"}
SECTION = section_name(__file__)
FINGERPRINT = "0123456789ab"
TBF = ["burst", "4mb", "latency", "200ms"]  # a bucket that holds a few loopback packets


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
    with FakeS3({BUCKET: Bucket(objects)}, lifetime=24 * 3600) as s3:
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


def shape(rate: str) -> None:
    """Pace this network namespace's loopback interface to `rate` ("" : unpaced)."""
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True, check=False)
    if rate:
        subprocess.run(
            ["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, *TBF],
            check=True,
        )


def measure_source(
    launcher: Launcher, source: Source, python: str, work: Path, rounds: int
) -> dict[str, list[Run]]:
    contenders: dict[str, Callable[[Path], list[str]]] = {
        "hydrator": lambda into: hydrator_argv(python, into, source.hydrator_args),
        PLAIN[source.name]: source.plain,
        "floor (curl to /dev/null)": lambda _: curl_floor(source.floor_urls, source.env),
    }
    runs: dict[str, list[Run]] = {name: [] for name in contenders}
    for r in range(rounds):
        names = list(contenders) if r % 2 == 0 else list(reversed(contenders))
        for name in names:
            into = work / "into"
            shutil.rmtree(into, ignore_errors=True)
            if source.makes_dirs:
                into.mkdir()
            runs[name].append(launcher.run(contenders[name](into), source.env))
            shutil.rmtree(into, ignore_errors=True)
    return runs


def rate(mib_s: float) -> str:
    return f"{mib_s:.0f}" if mib_s >= 100 else f"{mib_s:.2g}"


def table(source: str, size: int, runs: dict[str, list[Run]]) -> list[str]:
    median = {name: statistics.median(r.wall for r in rs) for name, rs in runs.items()}
    plain, floor = median[PLAIN[source]], median["floor (curl to /dev/null)"]
    lines = []
    for name, rs in runs.items():
        wall, cpu, rss = (
            median[name],
            statistics.median(r.cpu for r in rs),
            max(r.rss_mib for r in rs),
        )
        every = ", ".join(f"{r.wall:.2f}" for r in rs)
        lines.append(
            f"| {source} | {name} | {wall:.2f} s | {rate(size / MIB / wall)} | {cpu:.2f} s | "
            f"{rss:.0f} MiB | {wall / plain:.2f}x | {wall / floor:.2f}x | {every} |"
        )
    return lines


def inner(args: argparse.Namespace) -> dict[str, object]:
    """Measure every case inside this process's network namespace; the figures as JSON."""
    if any(RATES[c] for c in args.cases):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    launcher = Launcher()
    m = model(args.big_files, args.big_mib, args.small_files)
    python = args.python
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join([args.hydrator_src, *(str(p) for p in SOURCE_PATHS[1:])]),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "NO_PROXY": "127.0.0.1",
    }
    results: dict[str, object] = {"size": m.size, "files": len(m.files), "cases": {}}
    load: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="eng-staging-bench-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        env["HOME"] = str(work)
        env["HF_HOME"] = str(work / "hf-home")
        makers = {
            "OCI": lambda: oci_source(m, work, env, python),
            "HuggingFace": lambda: hub_source(m, env, python),
            "S3": lambda: s3_source(m, env, python),
        }
        sources = [stack.enter_context(makers[name]()) for name in args.sources]
        for case in args.cases:
            shape(RATES[case])
            case_runs = {}
            load[case] = [os.getloadavg()[0]]
            for source in sources:
                print(f"{time.strftime('%H:%M:%S')} {case}: {source.name}", file=sys.stderr)
                runs = measure_source(launcher, source, python, work, args.rounds)
                case_runs[source.name] = [
                    (name, [r.__dict__ for r in rs]) for name, rs in runs.items()
                ]
            load[case].append(os.getloadavg()[0])
            results["cases"][case] = case_runs  # type: ignore[index]
        shape("")
    launcher.close()
    results["load"] = load
    return results


def report(args: argparse.Namespace, results: dict[str, object]) -> list[str]:
    size = int(results["size"])  # type: ignore[call-overload]
    load: dict[str, list[float]] = results["load"]  # type: ignore[assignment]
    lines = [
        f"Model: {args.big_files} files of {args.big_mib:g} MiB and {args.small_files + 1} small "
        f"ones, {size / MIB:.0f} MiB in {results['files']} files (random bytes). "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; median of {args.rounds} "
        "round(s), the contenders of a source run in turn, alternating the order.",
        "",
        "| source | contender | median wall time | MiB/s | CPU time | peak RSS | "
        "/ plain client | / floor | all runs (s) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    cases: dict[str, dict[str, list[tuple[str, list[dict[str, float]]]]]] = results["cases"]  # type: ignore[assignment]
    for case, by_source in cases.items():
        lines.append(
            f"| **{case}** (load {load[case][0]:.1f} before, {load[case][1]:.1f} after) "
            "| | | | | | | | |"
        )
        for source, runs in by_source.items():
            lines += table(source, size, {name: [Run(**r) for r in rs] for name, rs in runs})
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-files", type=int, default=3)
    parser.add_argument("--big-mib", type=float, default=1024)
    parser.add_argument("--small-files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default="unpaced,1gbit,10gbit")
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--python", default=sys.executable, help="the hydrator's interpreter")
    parser.add_argument(
        "--hydrator-src",
        default=str(SOURCE_PATHS[0]),
        help="the modelfleet_hydrator package's parent directory (to measure another version)",
    )
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    argv_given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv_given)
    args.cases = [c for c in args.cases.split(",") if c]
    args.sources = [s for s in args.sources.split(",") if s]
    for case in args.cases:
        if case not in RATES:
            parser.error(f"--cases: {case!r} is none of {', '.join(RATES)}")
    for source in args.sources:
        if source not in SOURCES:
            parser.error(f"--sources: {source!r} is none of {', '.join(SOURCES)}")
    if "S3" in args.sources and not has_boto3(args.python):
        parser.error(
            f"--sources S3 needs boto3 in --python ({args.python}); make one with the image's "
            "requirements: uv venv DIR && uv pip install --python DIR/bin/python -r "
            "packages/modelfleet-hydrator/image/requirements.txt"
        )
    if args.inner:
        print(json.dumps(inner(args)))
        return 0
    if args.write_docs:
        try:
            check_sections(BENCHMARKS_DOC, [SECTION])
        except SectionError as err:
            raise SystemExit(f"--write-docs: {err}") from err
    if any(RATES[c] for c in args.cases):
        # A private network namespace: its loopback interface is ours to pace, and it goes
        # away with the run.
        argv_inner = [sys.executable, __file__, *argv_given]
        proc = subprocess.run(  # its progress and its errors go to our stderr
            ["unshare", "-n", *argv_inner, "--inner"],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"the measuring run failed:\n{proc.stdout[-2000:]}")
        results = json.loads(proc.stdout.strip().splitlines()[-1])
    else:
        results = inner(args)
    lines = report(args, results)
    print("\n".join(lines))
    if args.write_docs:
        write_sections(BENCHMARKS_DOC, {SECTION: section(argv_given, lines)})
    return 0


def section(argv: list[str], lines: list[str]) -> str:
    """The docs section for a run with `argv` that printed `lines`."""
    shown = " ".join([script_command(__file__), *(a for a in argv if a != "--write-docs")])
    return "\n".join([f"Produced by `{shown} --write-docs`.", "", *lines])


if __name__ == "__main__":
    sys.exit(main())
