"""What the workload clusters download models from in the end-to-end suite: a loopback Hub, a
loopback S3 and the loopback registry, each holding small models (a few MiB) under the names
the examples use (read from examples/, so a new example is served without listing it here).

- The Hub (modelfleet_devtools.loopback.hub) serves every Hub repo an example stages, at the
  revision it names, and the quickstart's at every revision a scenario moves it to. A repo
  whose cache names a token Secret is gated: its files are served only with a token.
  Hydration containers reach it through HF_ENDPOINT, as a cluster whose egress goes through a
  Hub mirror or proxy would be configured.
- S3 (modelfleet_devtools.loopback.s3) holds every prefix an example stages, in a bucket that
  answers only the access key of the example's credentials Secret. Hydration containers reach
  it through AWS_ENDPOINT_URL, as a cluster with a VPC endpoint for S3 is configured; a cache
  that names its own endpoint keeps it.
- examples/oci names its team registry, `registry.internal.example:5000`, "mirrored inside the
  VPC": the loopback registry plays that mirror. `mirror_images` points a fleet's OCI caches at
  it (for the simulated run too, so both stage the same reference), and `push_models` puts the
  example's modelcar there, built as the hydrator's OCI tests build one.

`served_by` says whether a hydration Job's source is one of these (the kubelet stand-in runs
its pod as a container) or not (the Job is simulated, and the stand-in records why).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..loopback import modelcar
from ..loopback.hub import FakeHub, Repo
from ..loopback.s3 import Bucket, FakeS3
from ..paths import EXAMPLES_DIR

Json = dict[str, Any]
MIB = 1024 * 1024
QUICKSTART_REPO = "Qwen/Qwen3-0.6B"
# The revisions the quickstart scenarios stage (tests/e2e/test_scenarios_real.py).
QUICKSTART_REVISIONS = (
    "main",
    "refs/pr/1",
    "refs/pr/2",
    "refs/pr/3",
    "refs/pr/4",
    "refs/pr/5",
    "refs/pr/6",
    "refs/pr/7",
)
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


def example_caches(examples: Path = EXAMPLES_DIR) -> list[tuple[Json, list[Json]]]:
    """Every example's ModelCaches, each with the objects of its example (its Secrets)."""
    found = []
    for folder in sorted(p for p in examples.iterdir() if p.is_dir()):
        objects = [
            doc
            for path in sorted(folder.glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text())
            if isinstance(doc, dict) and "kind" in doc
        ]
        found += [(o, objects) for o in objects if o["kind"] == "ModelCache"]
    return found


def hub_repos(examples: Path = EXAMPLES_DIR) -> dict[str, Repo]:
    """A repo for every Hub source an example stages, committed at the revision it names (the
    quickstart's at every scenario's too)."""
    revisions: dict[str, set[str]] = {QUICKSTART_REPO: set(QUICKSTART_REVISIONS)}
    gated: set[str] = set()
    for cache, _ in example_caches(examples):
        hf = (cache.get("spec") or {}).get("huggingFace") or {}
        if hf.get("repo"):
            revisions.setdefault(hf["repo"], set()).add(hf.get("revision") or "main")
            if hf.get("tokenSecretRef"):
                gated.add(hf["repo"])
    repos = {}
    for name, refs in sorted(revisions.items()):
        repo = repos[name] = Repo(gated=name in gated)
        for revision in sorted(refs):
            repo.commit(revision, small_model(name, revision))
    return repos


def s3_buckets(examples: Path = EXAMPLES_DIR) -> dict[str, Bucket]:
    """A bucket for every S3 source an example stages: the prefix holds a small model, and the
    bucket answers only the access key of the example's credentials Secret."""
    buckets: dict[str, Bucket] = {}
    for cache, objects in example_caches(examples):
        s3 = (cache.get("spec") or {}).get("s3") or {}
        if not str(s3.get("uri", "")).startswith("s3://"):
            continue
        name, _, prefix = s3["uri"][len("s3://") :].partition("/")
        secret_name = (s3.get("credentialsSecretRef") or {}).get("name")
        secret = next(
            (o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"] == secret_name),
            {},
        )
        bucket = buckets.setdefault(
            name, Bucket(access_key=(secret.get("stringData") or {}).get("AWS_ACCESS_KEY_ID", ""))
        )
        for file, data in small_model(s3["uri"], "main").items():
            bucket.objects[prefix.rstrip("/") + "/" + file] = data
    return buckets


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


def s3_location(uri: str) -> tuple[str, str]:
    """(bucket, prefix ending in "/") of an `s3://bucket/prefix` URI."""
    bucket, _, prefix = uri[len("s3://") :].partition("/")
    return bucket, prefix.rstrip("/") + "/"


@dataclass
class LoopbackSources:
    """The Hub, S3 and the registry a hydration container stages from."""

    hub: FakeHub
    registry: str
    images: dict[str, PushedModel] = field(default_factory=dict)
    s3: FakeS3 | None = None

    def node_env(self) -> dict[str, str]:
        """What a node's configuration gives every pod to reach these sources."""
        return {
            "HF_ENDPOINT": self.hub.endpoint,
            **({"AWS_ENDPOINT_URL": self.s3.endpoint} if self.s3 else {}),
        }

    def s3_files(self, uri: str) -> dict[str, bytes]:
        """The objects under an S3 URI's prefix, by name relative to it ({} if none)."""
        bucket_name, prefix = s3_location(uri)
        bucket = self.s3.buckets.get(bucket_name) if self.s3 else None
        objects = bucket.objects if bucket else {}
        return {k[len(prefix) :]: v for k, v in objects.items() if k.startswith(prefix)}

    def stop(self) -> None:
        self.hub.stop()
        if self.s3:
            self.s3.stop()

    def served_by(self, argv: list[str]) -> str:
        """Why a hydrator command line cannot stage from here ("" when it can)."""
        source = flag(argv, "source")
        if source == "HuggingFace":
            repo = flag(argv, "repo")
            return "" if repo in self.hub.repos else f"no loopback Hub repo {repo!r}"
        if source == "OCI":
            image = flag(argv, "image")
            return "" if image in self.images else f"no loopback image {image!r}"
        if source == "S3":
            uri = flag(argv, "uri")
            return "" if self.s3_files(uri) else f"no loopback S3 prefix {uri!r}"
        return f"no loopback {source or 'unknown'} source"


def start_sources(registry: str) -> LoopbackSources:
    """Start the Hub and S3, and push the models to the loopback `registry`."""
    sources = LoopbackSources(FakeHub(hub_repos(), lifetime=HUB_LIFETIME), registry)
    sources.hub.__enter__()
    try:
        sources.s3 = FakeS3(s3_buckets(), lifetime=HUB_LIFETIME).__enter__()
        sources.images = push_models(registry)
        return sources
    except BaseException:
        sources.stop()
        raise
