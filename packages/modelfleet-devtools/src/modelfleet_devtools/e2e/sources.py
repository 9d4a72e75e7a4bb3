"""What the workload clusters download models from in the end-to-end suite: a loopback Hub and
the loopback registry, each holding small models (a few MiB) under the names the examples use.

- The Hub (modelfleet_devtools.loopback.hub) serves the quickstart's Qwen/Qwen3-0.6B at every
  revision a scenario moves it to. Hydration containers reach it through HF_ENDPOINT, as a
  cluster whose egress goes through a Hub mirror or proxy would be configured.
- examples/oci names its team registry, `registry.internal.example:5000`, "mirrored inside the
  VPC": the loopback registry plays that mirror. `mirror_images` points a fleet's OCI caches at
  it (for the simulated run too, so both stage the same reference), and `push_models` puts the
  example's modelcar there, built as the hydrator's OCI tests build one.

`served_by` says whether a hydration Job's source is one of these (the kubelet stand-in runs
its pod as a container) or not (S3, and Hub repos no example here stages for real: the Job is
simulated).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..loopback import modelcar
from ..loopback.hub import FakeHub, Repo

Json = dict[str, Any]
MIB = 1024 * 1024
QUICKSTART_REPO = "Qwen/Qwen3-0.6B"
# The revisions the quickstart scenarios stage (tests/e2e/test_scenarios_real.py).
QUICKSTART_REVISIONS = ("main", "refs/pr/1", "refs/pr/2", "refs/pr/3", "refs/pr/4", "refs/pr/5")
TEAM_REGISTRY = "registry.internal.example:5000"  # examples/oci's registry
OCI_MODELS = {"models/qwen2.5-1.5b-instruct": ("v1",)}  # repository -> tags pushed
WEIGHTS = "model.safetensors"
HUB_LIFETIME = 24 * 3600.0  # seconds: outlives any session (it is stopped with the plane)


def small_model(name: str, revision: str, weights_mib: int = 4) -> dict[str, bytes]:
    """A model's files at one revision: weights of `weights_mib` MiB (deterministic bytes
    that differ per revision, so a re-hydration fetches new ones) and the small files the
    quickstart's include patterns select."""
    seed = hashlib.sha256(f"{name}@{revision}".encode()).digest()
    block = hashlib.sha256(seed + b"block").digest() * (MIB // 32)
    weights = b"".join(
        hashlib.sha256(seed + bytes([i])).digest() + block[32:] for i in range(weights_mib)
    )
    return {
        WEIGHTS: weights,
        "config.json": f'{{"model": "{name}", "revision": "{revision}"}}\n'.encode(),
        "tokenizer.json": b'{"version": "1.0"}\n',
        "merges.txt": b"#version: 0.2\n",
    }


def hub_repos() -> dict[str, Repo]:
    repo = Repo()
    for revision in QUICKSTART_REVISIONS:
        repo.commit(revision, small_model(QUICKSTART_REPO, revision))
    return {QUICKSTART_REPO: repo}


@dataclass(frozen=True)
class PushedModel:
    image: modelcar.Image
    files: dict[str, bytes]  # under the image's /models


def push_models(registry: str) -> dict[str, PushedModel]:
    """Push every OCI model the examples stage to `registry`; by reference."""
    pushed = {}
    for repository, tags in OCI_MODELS.items():
        for tag in tags:
            files = small_model(repository, tag)
            image = modelcar.image({f"models/{name}": data for name, data in files.items()})
            pushed[modelcar.push(registry, repository, tag, image)] = PushedModel(image, files)
    return pushed


def mirror_images(objects: list[Json], registry: str) -> list[str]:
    """Point the OCI caches of a fleet that name the team registry at `registry` (the mirror);
    the caches changed."""
    changed = []
    for obj in objects:
        oci = (obj.get("spec") or {}).get("oci") or {}
        if obj["kind"] == "ModelCache" and str(oci.get("image", "")).startswith(
            TEAM_REGISTRY + "/"
        ):
            oci["image"] = registry + oci["image"][len(TEAM_REGISTRY) :]
            changed.append(obj["metadata"]["name"])
    return changed


def flag(argv: list[str], name: str) -> str:
    """The value of `--name=VALUE` in a hydrator's command line ("" if absent)."""
    prefix = f"--{name}="
    return next((a[len(prefix) :] for a in argv if a.startswith(prefix)), "")


@dataclass
class LoopbackSources:
    """The Hub and the registry a hydration container stages from."""

    hub: FakeHub
    registry: str
    images: dict[str, PushedModel] = field(default_factory=dict)

    def served_by(self, argv: list[str]) -> str:
        """Why a hydrator command line cannot stage from here ("" when it can)."""
        source = flag(argv, "source")
        if source == "HuggingFace":
            repo = flag(argv, "repo")
            return "" if repo in self.hub.repos else f"no loopback Hub repo {repo!r}"
        if source == "OCI":
            image = flag(argv, "image")
            return "" if image in self.images else f"no loopback image {image!r}"
        return f"no loopback {source or 'unknown'} source"


def start_sources(registry: str) -> LoopbackSources:
    """Start the Hub and push the models to the loopback `registry`."""
    hub = FakeHub(hub_repos(), lifetime=HUB_LIFETIME)
    hub.__enter__()
    try:
        return LoopbackSources(hub, registry, push_models(registry))
    except BaseException:
        hub.stop()
        raise
