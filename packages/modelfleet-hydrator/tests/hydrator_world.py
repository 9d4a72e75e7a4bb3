"""The hydrator's test world: a model on a loopback Hub, the hydration Job the function
composes for it, and that Job's exact command run as a local process.

Each run composes a ModelCache through the function, takes the Job's container `command` as
composed, swaps only the interpreter, the script path (the image's path for the launcher the
image bakes, image/hydrate.py) and the cache directory (the claim's mount for a temporary
directory), and runs it as a process with HF_ENDPOINT pointing at the fake Hub
(modelfleet_devtools.loopback.hub).
"""

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cache_world import desired_resources, keys, model_cache, reconcile, rows
from modelfleet_contracts.hydration import PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE
from modelfleet_contracts.mounts import MODEL_MOUNT_PATH
from modelfleet_devtools.loopback.hub import FakeHub, Repo
from modelfleet_devtools.world import inference_cluster

CLUSTER = inference_cluster("gke-us")
PACKAGE_DIR = Path(__file__).resolve().parents[1]
SCRIPT = PACKAGE_DIR / "image" / "hydrate.py"  # the launcher, as baked at SCRIPT_PATH_IN_IMAGE
REPO_ID = "acme/tiny-llm"
MARKER = ".modelfleet-complete"
RUN_TIMEOUT = 90  # seconds per hydrate run: every run is bounded
# How long huggingface_hub waits on the loopback Hub (a HEAD, or a download with no byte
# coming) before it gives up or resumes: generous, so that no healthy request times out on a
# loaded machine, and within RUN_TIMEOUT. A stalled download (Faults.stall_after) is resumed
# by the client only after that long.
HUB_TIMEOUT = 45
MIB = 1024 * 1024
weights = random.Random(7).randbytes

MAIN_FILES = {
    "config.json": b'{"model_type": "tiny"}',
    "tokenizer.json": b'{"vocab": ["a", "b"]}',
    "tokenizer_config.json": b"{}",
    # Larger than two of huggingface_hub's 10 MiB download chunks, so a cut can fall after
    # a whole chunk was written.
    "model-00001-of-00002.safetensors": weights(24 * MIB + 5),
    "model-00002-of-00002.safetensors": weights(2 * MIB + 17),
    "original/consolidated.pth": weights(64 * 1024),
    "original/params.json": b'{"dim": 8}',
    "README.md": b"# tiny",
}
V2_FILES = {
    **MAIN_FILES,
    "model-00001-of-00002.safetensors": weights(3 * MIB),
    "generation_config.json": b'{"temperature": 0.6}',
}
V3_FILES = {**V2_FILES, "generation_config.json": b'{"temperature": 0.7}'}
FILTERS = {"include": ["*.safetensors", "*.json", "tokenizer*"], "exclude": ["original/*"]}
EXPECTED_MAIN = {
    name: data
    for name, data in MAIN_FILES.items()
    if not name.startswith("original/") and name != "README.md"
}


@pytest.fixture
def hub():
    repo = Repo()
    repo.commit("main", MAIN_FILES)
    repo.commit("v2", V2_FILES)
    repo.commit("v3", V3_FILES)
    with FakeHub({REPO_ID: repo}) as server:
        yield server


def composed_job(**hf: Any) -> tuple[list[str], dict[str, str], str]:
    """The hydration Job the function composes for a cache of REPO_ID: its container command,
    its literal env and the fingerprint it reports."""
    xr = model_cache(huggingFace={"repo": REPO_ID, **hf})
    rsp = reconcile(xr, [CLUSTER])
    job = desired_resources(rsp)[keys("gke-us", xr)[2]]
    container = job["spec"]["forProvider"]["manifest"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    return list(container["command"]), env, rows(rsp)["gke-us"]["fingerprint"]


def local_argv(command: list[str], mount: Path) -> list[str]:
    """The Job's command with the interpreter, script and claim mount made local; nothing
    else changes."""
    assert command[:2] == [PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE]
    (cache_arg,) = [a for a in command if a.startswith("--cache-dir=")]
    local_dir = str(mount) + cache_arg[len("--cache-dir=") + len(MODEL_MOUNT_PATH) :]
    return [
        sys.executable,
        str(SCRIPT),
        *(f"--cache-dir={local_dir}" if a == cache_arg else a for a in command[2:]),
    ]


def job_env(env: dict[str, str], hub: FakeHub, home: Path) -> dict[str, str]:
    """The Job's env plus what the image sets, pointed at the loopback Hub. Nothing is
    inherited (no proxy, no token) except PATH."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "HF_HOME": str(home / "hf-home"),
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_ETAG_TIMEOUT": str(HUB_TIMEOUT),
        "HF_HUB_DOWNLOAD_TIMEOUT": str(HUB_TIMEOUT),
        "NO_PROXY": "127.0.0.1",
        **env,
        "HF_ENDPOINT": hub.endpoint,
    }


def hydrate(
    hub: FakeHub,
    tmp_path: Path,
    *,
    extra_argv: tuple[str, ...] = (),
    extra_env: dict[str, str] | None = None,
    **hf: Any,
) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the composed Job's command to completion; return the process and the cache dir."""
    command, env, fingerprint = composed_job(**hf)
    argv = local_argv(command, tmp_path / "claim") + list(extra_argv)
    proc = subprocess.run(
        argv,
        env={**job_env(env, hub, tmp_path), **(extra_env or {})},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    cache_dir = Path(next(a for a in argv if a.startswith("--cache-dir=")).split("=", 1)[1])
    return proc, cache_dir / fingerprint


def model_files(directory: Path) -> dict[str, bytes]:
    """What a consumer sees in a staged directory: every file except our marker."""
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in directory.rglob("*")
        if p.is_file() and p.name != MARKER
    }
