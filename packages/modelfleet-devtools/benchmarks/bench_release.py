"""What a release costs and how its containers start, measured on this machine:

- building everything from a clean state: `modelfleet-release` with an empty work folder and
  an empty uv cache (every wheel downloaded from PyPI, the Debian root filesystem made anew);
- each image's size: compressed (what a node pulls: its layers as pushed) and unpacked;
- each function container's cold start: from `podman run` (image already pulled, as on a
  node) to the function's "Serving" log line, the median of ROUNDS starts;
- the hydrator container staging a 1 GiB OCI model from the loopback registry into a fresh
  directory (the claim), against `crane pull` of the same image to a tarball, alternating
  which goes first, the median of ROUNDS rounds.

Run: uv run python packages/modelfleet-devtools/benchmarks/bench_release.py [--write-docs]
(--write-docs replaces the section between the markers in docs/benchmarks.md with the output).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from modelfleet_contracts.hydration import RELEASE_VERSION
from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    check_sections,
    script_command,
    section_name,
    write_sections,
)
from modelfleet_devtools.e2e.containers import Mount, Podman
from modelfleet_devtools.e2e.crossplane import start_registry
from modelfleet_devtools.e2e.processes import Processes, free_port
from modelfleet_devtools.paths import REPO_ROOT
from modelfleet_devtools.realcp import realcp_binary
from modelfleet_devtools.release.build import Artifact, release_functions

SECTION = section_name(__file__)
ROUNDS = 5
MIB = 1024 * 1024
MODEL_FILES = 4  # of 256 MiB each: 1 GiB
MODEL_FILE_MIB = 256


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(
        argv, env={**os.environ, **(env or {})}, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed:\n{done.stderr[-2000:]}")
    return time.monotonic() - started, done.stdout


def build_clean(registry: str, work: Path) -> tuple[float, dict[str, Artifact]]:
    """`modelfleet-release` with an empty work folder and uv cache; its time and artifacts."""
    env = {"UV_CACHE_DIR": str(work / "uv-cache")}
    seconds, out = timed(
        ["uv", "run", "modelfleet-release", "--registry", registry, "--output", "json",
         "--work-dir", str(work / "build")],
        env,
    )  # fmt: skip
    artifacts = {a["name"]: Artifact(a["name"], a["kind"], a["reference"], a["digest"])
                 for a in json.loads(out)}  # fmt: skip
    return seconds, artifacts


def compressed_mib(crane: Path, artifact: Artifact) -> float:
    manifest = json.loads(timed([str(crane), "manifest", artifact.pinned])[1])
    return sum(layer["size"] for layer in manifest["layers"]) / MIB


def cold_start(podman: Podman, image: str, name: str, work: Path) -> float:
    """Seconds from `podman run` to the function's "Serving" line."""
    log = work / f"{name}.log"
    argv = podman.run_argv(
        name, image, env={"ADDRESS": f"127.0.0.1:{free_port()}", "INSECURE": "true"}
    )
    with log.open("wb") as out:
        started = time.monotonic()
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, **podman.env})  # fmt: skip
        try:
            while '"msg": "Serving"' not in log.read_text():
                if process.poll() is not None or time.monotonic() - started > 120:
                    raise RuntimeError(f"{name} did not serve:\n{log.read_text()[-2000:]}")
                time.sleep(0.02)
            return time.monotonic() - started
        finally:
            process.terminate()
            process.wait(timeout=60)


def model_image(crane: Path, registry: str, work: Path) -> str:
    """A 1 GiB model as an OCI image (its files under /models), pushed; its reference."""
    files = work / "model" / "models"
    files.mkdir(parents=True)
    for index in range(MODEL_FILES):
        with (files / f"model-{index:05d}-of-{MODEL_FILES:05d}.safetensors").open("wb") as out:
            for _ in range(MODEL_FILE_MIB):
                out.write(os.urandom(MIB))
    layer = work / "model.tar"
    subprocess.run(["tar", "-C", str(work / "model"), "-cf", str(layer), "models"], check=True)
    reference = f"{registry}/bench/model:1gib"
    timed([str(crane), "append", "--oci-empty-base", "-f", str(layer), "-t", reference])
    return reference


def hydrate(podman: Podman, image: str, model: str, claim: Path) -> float:
    argv = podman.run_argv(
        "bench-hydrator", image, mounts=[Mount(claim, "/cache", read_only=False)],
        args=["--cache-dir", "/cache", "--fingerprint", "0123456789ab", "--source", "OCI",
              "--image", model, "--path", "/models"],
    )  # fmt: skip
    return timed(argv, podman.env)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    if args.write_docs:
        check_sections(BENCHMARKS_DOC, [SECTION])
    crane = realcp_binary("crane")
    load_at_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-release-") as scratch:
        work = Path(scratch)
        processes = Processes(work / "logs")
        bins = work / "bin"
        bins.mkdir()
        (bins / "crane").symlink_to(crane)
        podman = Podman.under(work / "podman")
        try:
            registry = start_registry(processes, bins, work).host
            build_s, artifacts = build_clean(registry, work)
            images = ["model-hydrator", *(f"{f}-runtime" for f in release_functions(REPO_ROOT))]
            sizes = {}
            for name in images:
                podman.pull(artifacts[name].pinned)
                unpacked = json.loads(podman.call("image", "inspect", artifacts[name].pinned))
                sizes[name] = (compressed_mib(crane, artifacts[name]), unpacked[0]["Size"] / MIB)
            starts = {
                f: statistics.median(
                    cold_start(podman, artifacts[f"{f}-runtime"].pinned, f"start-{f}", work)
                    for _ in range(ROUNDS)
                )
                for f in release_functions(REPO_ROOT)
            }
            model = model_image(crane, registry, work)
            hydrator = artifacts["model-hydrator"].pinned
            hydrations, pulls = [], []
            for round_ in range(ROUNDS):
                claim = work / f"claim-{round_}"
                claim.mkdir()
                pulled = work / "pulled.tar"

                def pull() -> float:
                    return timed([str(crane), "pull", model, str(pulled)])[0]  # noqa: B023

                first, second = (pull, None) if round_ % 2 else (None, pull)
                if first:
                    pulls.append(first())
                hydrations.append(hydrate(podman, hydrator, model, claim))
                if second:
                    pulls.append(second())
                pulled.unlink()
                shutil.rmtree(claim)
        finally:
            podman.remove_all()
            processes.stop_all()
    lines = [
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}"
        f"; release {RELEASE_VERSION}; load average {load_at_start:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end (other work on the machine stretches every time).",
        "",
        f"Everything built and pushed from a clean state (empty uv cache and work folder): "
        f"**{build_s:.0f} s**.",
        "",
        '| image | compressed (pulled by a node) | unpacked | cold start to "Serving" |',
        "|---|---|---|---|",
    ]
    for name in images:
        compressed, unpacked = sizes[name]
        function = name.removesuffix("-runtime")
        start = f"{starts[function]:.2f} s" if function in starts else "—"
        lines.append(f"| `{name}` | {compressed:.1f} MiB | {unpacked:.1f} MiB | {start} |")
    hydrate_s, pull_s = statistics.median(hydrations), statistics.median(pulls)
    gib = MODEL_FILES * MODEL_FILE_MIB / 1024
    lines += [
        "",
        f"The hydrator container staging a {gib:.0f} GiB OCI model from the loopback registry "
        f"(fetch, unpack under the claim, verify, completion marker): **{hydrate_s:.1f} s** "
        f"({gib * 1024 / hydrate_s:.0f} MiB/s), against **{pull_s:.1f} s** for `crane pull` "
        f"of the same image to a tarball ({hydrate_s / pull_s:.2f}x); medians of {ROUNDS} rounds.",
    ]
    print("\n".join(lines))
    if args.write_docs:
        produced = f"Produced by `{script_command(__file__)} --write-docs`."
        write_sections(BENCHMARKS_DOC, {SECTION: "\n".join([produced, "", *lines])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
