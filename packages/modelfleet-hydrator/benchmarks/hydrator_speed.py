"""How fast the hydrator stages a model, against plain `hf download` of the same files, and
what a re-run fetches.

A multi-file model (SHARDS weight shards of SHARD_MIB MiB and a few small files) is served by
the loopback Hub (modelfleet_devtools.loopback.hub, 127.0.0.1 only), twice: unpaced, where the
client, the Hub and any hashing share this machine's CPUs (the CPU is the bottleneck), and
through a simulated 1 Gbit/s link every download shares (the network is the bottleneck, as
it is when a cluster pulls from the real Hub). Each round runs, in turn (alternating which goes
first), as separate processes:

- `hf download REPO --local-dir DIR`: huggingface_hub's own CLI, the same version the image
  pins;
- the hydrator as a composed Job runs it (the image's launcher, image/hydrate.py, with the
  Job's arguments, reporting to a loopback API server as it would to its Job), which also
  resolves the commit, verifies every file's sha256 / git blob id and writes the completion
  marker.

Reported, per case: the median wall time of each over ROUNDS rounds, MiB/s (model bytes /
median time) and the hydrator's time relative to `hf download` (the median of the rounds'
ratios); then the bytes the Hub served when each is run again on its finished directory.

Run: uv run python packages/modelfleet-hydrator/benchmarks/hydrator_speed.py [--write-docs]
(--write-docs replaces the section between the markers in docs/benchmarks.md with the output).
"""

import argparse
import hashlib
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    SectionError,
    check_sections,
    script_command,
    section_name,
    write_sections,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the tests' loopback API server

from fake_kube import FakeKube, JobRecord  # noqa: E402
from modelfleet_devtools.loopback.hub import FakeHub, Repo  # noqa: E402

REPO_ID = "bench/multi-shard"
SHARDS = 8
SHARD_MIB = 96
ROUNDS = 9
MIB = 1024 * 1024
# (what the case is, the link's rate in bytes/s or None for unpaced)
CASES = [("unpaced loopback (CPU-bound)", None), ("1 Gbit/s link (network-bound)", 1e9 / 8)]
SECTION = section_name(__file__)  # its section of docs/benchmarks.md


def model() -> dict[str, bytes]:
    rnd = random.Random(13)
    files = {
        f"model-{i + 1:05d}-of-{SHARDS:05d}.safetensors": rnd.randbytes(SHARD_MIB * MIB + i)
        for i in range(SHARDS)
    }
    files.update(
        {
            "config.json": b'{"model_type": "bench"}',
            "generation_config.json": b'{"temperature": 0.7}',
            "tokenizer.json": rnd.randbytes(7 * MIB).hex().encode()[: 7 * MIB],
            "tokenizer_config.json": b"{}",
        }
    )
    return files


def base_env(hub: FakeHub, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "HF_HOME": str(home / "hf-home"),
        "HF_ENDPOINT": hub.endpoint,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "NO_PROXY": "127.0.0.1",
    }


CPU: dict[str, list[float]] = {}  # CPU seconds (user + system) of each contender's process


def timed(name: str, argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one run of contender `name`; its CPU seconds go to CPU[name]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{proc.stdout}\n{proc.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    CPU.setdefault(name, []).append(cpu)
    return elapsed


def hashing_cost(files: dict[str, bytes]) -> float:
    """CPU seconds this machine spends on the digests the hydrator checks, for this model."""
    start = time.process_time()
    for name, data in files.items():
        if name.endswith(".safetensors"):
            hashlib.sha256(data).hexdigest()
        else:
            hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
    return time.process_time() - start


class Contenders:
    def __init__(self, hub: FakeHub, kube: FakeKube, work: Path, script: Path) -> None:
        self.hub, self.kube, self.work, self.script = hub, kube, work, script
        self.env = base_env(hub, work)
        account = kube.service_account(work / "sa")
        self.job_env = {
            **self.env,
            "MODELFLEET_KUBE_API": kube.endpoint,
            "MODELFLEET_SERVICEACCOUNT_DIR": str(account),
        }

    def hf_download(self, into: Path) -> float:
        hf = shutil.which("hf", path=str(Path(sys.executable).parent))
        argv = [hf or "hf", "download", REPO_ID, "--local-dir", str(into)]
        return timed("hf download", argv, self.env)

    def hydrator(self, into: Path) -> float:
        argv = [
            sys.executable,
            str(self.script),
            f"--cache-dir={into}",
            "--fingerprint=0123456789ab",
            f"--job={self.kube.job.name}",
            "--source=HuggingFace",
            f"--repo={REPO_ID}",
            "--revision=main",
        ]
        return timed("hydrator", argv, self.job_env)

    def fresh(self, name: str) -> Path:
        path = self.work / name
        shutil.rmtree(path, ignore_errors=True)
        return path


def run_rounds(c: Contenders) -> dict[str, list[float]]:
    """Wall seconds of each contender over ROUNDS rounds, alternating which goes first."""
    times: dict[str, list[float]] = {"hf download": [], "hydrator": []}
    for r in range(ROUNDS):
        order = ["hf download", "hydrator"] if r % 2 == 0 else ["hydrator", "hf download"]
        for name in order:
            into = c.fresh(name.replace(" ", "-"))
            run = c.hf_download if name == "hf download" else c.hydrator
            times[name].append(run(into))
    return times


def case_lines(case: str, size: int, times: dict[str, list[float]]) -> list[str]:
    """The table of one case and the hydrator's time relative to `hf download`'s."""
    cpu = {name: statistics.median(CPU.pop(name)) for name in times}
    lines = [
        f"**{case}**",
        "",
        "| | median wall time | MiB/s | median CPU time of its process | all runs (s) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name, runs in times.items():
        median = statistics.median(runs)
        lines.append(
            f"| {name} | {median:.2f} s | {size / MIB / median:.0f} | {cpu[name]:.2f} s "
            f"| {', '.join(f'{t:.2f}' for t in runs)} |"
        )
    # Each round's two runs are neighbours in time, so their ratio cancels the load this
    # shared machine drifts through; the verdict is the median of those ratios.
    pairs = zip(times["hydrator"], times["hf download"], strict=True)
    ratios = sorted(hyd / hf for hyd, hf in pairs)
    ratio = statistics.median(ratios)
    lines += [
        "",
        f"Hydrator time / `hf download` time, median of the rounds: **{ratio:.3f}** "
        f"({(ratio - 1) * 100:+.1f} %; target: within +5 %, "
        f"{'met' if ratio <= 1.05 else 'not met'}); rounds ranged from "
        f"{(ratios[0] - 1) * 100:+.1f} % to {(ratios[-1] - 1) * 100:+.1f} %.",
        "",
    ]
    return lines


def measure() -> list[str]:
    files = model()
    size = sum(len(d) for d in files.values())
    repo = Repo()
    repo.commit("main", files)
    lines = [
        f"Model: {SHARDS} shards of {SHARD_MIB} MiB and 4 small files, "
        f"{size / MIB:.1f} MiB in {len(files)} files, on the loopback Hub "
        f"(huggingface_hub {metadata.version('huggingface_hub')}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} before the runs). Median of {ROUNDS} rounds, run alternately.",
        "",
    ]
    with (
        tempfile.TemporaryDirectory(prefix="hydrator-bench-") as tmp,
        FakeHub({REPO_ID: repo}, lifetime=3600) as hub,
        FakeKube(JobRecord("modelfleet", "hydrate-bench"), lifetime=3600) as kube,
    ):
        work = Path(tmp)
        c = Contenders(hub, kube, work, HERE.parent / "image" / "hydrate.py")
        for case, link_rate in CASES:
            hub.link.rate = link_rate
            lines += case_lines(case, size, run_rounds(c))
        # Re-runs on the finished directories of the last round.
        rerun = {}
        for name, run in (("hf download", c.hf_download), ("hydrator", c.hydrator)):
            hub.reset_counts()
            run(work / name.replace(" ", "-"))
            files_asked = sum(1 for m, p, _ in hub.requests if m == "GET" and "/resolve/" in p)
            rerun[name] = (hub.total_file_bytes, files_asked, len(hub.requests))
        final = kube.job.annotations
    lines += [
        "The hydrator's time includes resolving the commit, listing the files, verifying every "
        "file and reporting progress on its Job. Hashing this model's files (sha256 of the "
        f"weights, git blob ids of the rest) costs {hashing_cost(files):.2f} CPU seconds on "
        f"this machine, measured alone (load average {os.getloadavg()[0]:.1f} after the runs).",
        "",
        "| re-run on the finished directory | file bytes served | files fetched | requests |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, (served, fetched, requests) in rerun.items():
        lines.append(f"| {name} | {served} | {fetched} | {requests} |")
    lines += [
        "",
        f"The Job's last report: {final.get('hydration.modelfleet.io/bytes-done')} of "
        f"{final.get('hydration.modelfleet.io/bytes-total')} bytes, "
        f"{final.get('hydration.modelfleet.io/files-done')}/"
        f"{final.get('hydration.modelfleet.io/files-total')} files.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    if args.write_docs:  # a missing marker must not cost a whole run
        try:
            check_sections(BENCHMARKS_DOC, [SECTION])
        except SectionError as err:
            raise SystemExit(f"--write-docs: {err}") from err
    lines = measure()
    print("\n".join(lines))
    if args.write_docs:
        produced = f"Produced by `{script_command(__file__)} --write-docs`."
        write_sections(BENCHMARKS_DOC, {SECTION: "\n".join([produced, "", *lines])})


if __name__ == "__main__":
    main()
