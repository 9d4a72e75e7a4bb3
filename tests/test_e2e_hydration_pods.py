"""The parts of the end-to-end suite's real hydration that need no control plane: how a Job's
pod is given its image and env (modelfleet_devtools.e2e.pods), which sources are served
(e2e/sources.py), how a Job's status follows its container (e2e/kubelet.py) and how a staged
copy is checked (e2e/staged.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from modelfleet_devtools.e2e import kubelet, pods, sources, staged
from modelfleet_devtools.e2e.fleet import load_fleet
from modelfleet_devtools.e2e.sources import mirror_images
from modelfleet_devtools.loopback.hub import FakeHub, Repo
from modelfleet_devtools.loopback.s3 import Bucket, FakeS3
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]


def test_a_release_image_is_pulled_from_the_loopback_registry_and_nothing_else_is() -> None:
    assert pods.mirrored("ghcr.io/modelfleet/model-hydrator:v0.2.0", "127.0.0.1:5001") == (
        "127.0.0.1:5001/model-hydrator:v0.2.0"
    )
    assert pods.mirrored("docker.io/library/python:3.11", "127.0.0.1:5001") == ""


def test_the_oci_example_is_pointed_at_the_mirror_and_only_it() -> None:
    objects, _ = load_fleet(EXAMPLES_DIR / "oci")
    assert sources.mirror_images(objects, "127.0.0.1:5001") == ["qwen-2-5-1-5b"]
    cache = next(o for o in objects if o["kind"] == "ModelCache")
    assert cache["spec"]["oci"]["image"] == "127.0.0.1:5001/models/qwen2.5-1.5b-instruct:v1"
    quickstart, _ = load_fleet(EXAMPLES_DIR / "quickstart")
    assert sources.mirror_images(quickstart, "127.0.0.1:5001") == []


def test_only_loopback_sources_are_staged_for_real() -> None:
    loopback = sources.LoopbackSources(hub=_Hub(), registry="127.0.0.1:5001", s3=_S3())  # type: ignore[arg-type]
    loopback.images["127.0.0.1:5001/models/m:v1"] = None  # type: ignore[assignment]
    hf = ["--source=HuggingFace", f"--repo={sources.QUICKSTART_REPO}"]
    assert loopback.served_by(hf) == ""
    assert "no loopback Hub repo" in loopback.served_by(["--source=HuggingFace", "--repo=a/b"])
    assert loopback.served_by(["--source=OCI", "--image=127.0.0.1:5001/models/m:v1"]) == ""
    assert "no loopback image" in loopback.served_by(["--source=OCI", "--image=x.io/m:v1"])
    assert "no loopback S3 prefix" in loopback.served_by(["--source=S3", "--uri=s3://b/p/"])
    assert "no loopback Git source" in loopback.served_by(["--source=Git"])


def hydrator_argv(cache: Json) -> list[str]:
    """The source flags compose-model-cache gives a cache's hydrator."""
    spec = cache["spec"]
    hf, s3, oci = (spec.get(k) or {} for k in ("huggingFace", "s3", "oci"))
    return [
        f"--source={spec['source']}",
        *([f"--repo={hf['repo']}"] if hf else []),
        *([f"--uri={s3['uri']}"] if s3 else []),
        *([f"--image={oci['image']}"] if oci else []),
    ]


@pytest.mark.parametrize(
    "example", sorted({cache["metadata"]["name"]: cache for cache, _ in sources.example_caches()})
)
def test_every_example_cache_stages_for_real_from_a_loopback_source(example: str) -> None:
    cache = next(c for c, _ in sources.example_caches() if c["metadata"]["name"] == example)
    mirror_images([cache], "127.0.0.1:5001")
    loopback = sources.LoopbackSources(hub=_Hub(), registry="127.0.0.1:5001", s3=_S3())  # type: ignore[arg-type]
    for repository, tags in sources.OCI_MODELS.items():
        for tag in tags:
            loopback.images[f"127.0.0.1:5001/{repository}:{tag}"] = None  # type: ignore[assignment]
    assert loopback.served_by(hydrator_argv(cache)) == ""


def test_a_cache_with_a_token_secret_stages_from_a_gated_repo() -> None:
    gated = {name for name, repo in sources.hub_repos().items() if repo.gated}
    assert gated == {"meta-llama/Llama-3.1-8B-Instruct"}  # examples/gated-model


def request(url: str, headers: dict[str, str], method: str = "GET") -> tuple[int, Json, bytes]:
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers, method=method), timeout=10
        ) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_a_gated_repo_serves_its_files_only_with_a_token() -> None:
    repo = Repo(gated=True)
    repo.commit("main", {"config.json": b"{}"})
    with FakeHub({"org/gated": repo}) as hub:
        url = f"{hub.endpoint}/org/gated/resolve/main/config.json"
        status, headers, _ = request(url, {})
        assert (status, headers.get("X-Error-Code")) == (401, "GatedRepo")
        assert request(url, {"Authorization": "Bearer hf_abc"})[::2] == (200, b"{}")
        assert hub.refused == ["GET /org/gated/resolve/main/config.json"]


def test_a_repo_whose_access_is_revoked_is_refused_until_restored() -> None:
    repo = Repo()
    repo.commit("main", {"config.json": b"{}"})
    with FakeHub({"org/model": repo}) as hub:
        hub.faults.deny.add("org/model")
        for url in ("/api/models/org/model/revision/main", "/org/model/resolve/main/config.json"):
            assert request(hub.endpoint + url, {})[0] == 403
        hub.faults.deny.clear()
        assert request(f"{hub.endpoint}/org/model/resolve/main/config.json", {})[::2] == (
            200,
            b"{}",
        )


def signed_by(key: str) -> dict[str, str]:
    return {
        "Authorization": f"AWS4-HMAC-SHA256 Credential={key}/20260101/eu-west-1/s3/aws4_request"
    }


def test_s3_lists_a_prefix_and_serves_ranges_to_the_secrets_key_only() -> None:
    weights = bytes(range(256)) * 64
    bucket = Bucket(
        {"m/v1/model.safetensors": weights, "m/v1/config.json": b"{}", "x": b""}, "AKID"
    )
    with FakeS3({"models": bucket}) as s3:
        listing = f"{s3.endpoint}/models?list-type=2&prefix=m/v1/&encoding-type=url"
        status, _, body = request(listing, signed_by("AKID"))
        keys = re.findall(r"<Key>([^<]+)</Key>", body.decode())
        assert status == 200 and keys == ["m/v1/config.json", "m/v1/model.safetensors"]
        etags = re.findall(r"<ETag>([^<]+)</ETag>", body.decode())
        assert etags[1] == f'"{hashlib.md5(weights).hexdigest()}"'
        status, headers, part = request(
            f"{s3.endpoint}/models/m/v1/model.safetensors",
            {**signed_by("AKID"), "Range": "bytes=256-511"},
        )
        assert (status, part, headers["Content-Range"]) == (
            206,
            weights[256:512],
            f"bytes 256-511/{len(weights)}",
        )
        assert request(listing, signed_by("OTHER"))[0] == 403
        assert request(listing, {})[0] == 403
        assert request(f"{s3.endpoint}/models/m/v1/absent", signed_by("AKID"))[0] == 404
        assert len(s3.refused) == 2


def test_each_revision_is_a_different_small_model() -> None:
    main = sources.small_model(sources.QUICKSTART_REPO, "main")
    assert main == sources.small_model(sources.QUICKSTART_REPO, "main")
    assert (
        main[sources.WEIGHTS]
        != sources.small_model(sources.QUICKSTART_REPO, "refs/pr/1")[sources.WEIGHTS]
    )
    assert len(main[sources.WEIGHTS]) == 4 * sources.MIB


class _Hub:
    repos = sources.hub_repos()


class _S3:
    buckets = sources.s3_buckets()


class FakeClient:
    """The calls the stand-in and the pod runner make, on a dict of objects by path."""

    def __init__(self, objects: dict[str, Json]) -> None:
        self.objects = objects
        self.patches: list[tuple[str, Json, bool]] = []

    def get(self, path: str) -> Json | None:
        return self.objects.get(path)

    def merge_patch(self, path: str, patch: Json, *, status: bool = False) -> Json:
        self.patches.append((path, patch, status))
        target = self.objects[path]
        for key, value in patch.items():
            target[key] = {**(target.get(key) or {}), **value}
        return target


def test_env_reads_secret_keys_as_a_kubelet_does() -> None:
    secret = {"data": {"HF_TOKEN": base64.b64encode(b"hf_abc").decode()}}
    client = FakeClient({"/api/v1/namespaces/modelfleet/secrets/creds": secret})
    runner = pods.PodRunner(podman=None, work=Path("/nonexistent"), registry="r")  # type: ignore[arg-type]
    ref = {"secretKeyRef": {"name": "creds", "key": "HF_TOKEN"}}
    env = runner._env(
        client,  # type: ignore[arg-type]
        "modelfleet",
        [{"name": "A", "value": "1"}, {"name": "HF_TOKEN", "valueFrom": ref}],
    )
    assert env == {"A": "1", "HF_TOKEN": "hf_abc"}
    missing = {"secretKeyRef": {"name": "other", "key": "K"}}
    with pytest.raises(pods.NotReady):
        runner._env(client, "modelfleet", [{"name": "K", "valueFrom": missing}])  # type: ignore[arg-type]


class FakePod:
    def __init__(self, code: int | None) -> None:
        self.code = code

    def exit_code(self) -> int | None:
        return self.code


class FakeRunner:
    """Starts nothing: each started pod exits with the next of `codes` once asked."""

    def __init__(self, codes: list[int]) -> None:
        self.codes = codes
        self.running: dict[str, FakePod] = {}
        self.started: list[str] = []

    def start(self, cluster: str, client: object, pod: Json, namespace: str, name: str) -> None:
        self.started.append(name)
        self.running[name] = FakePod(None)

    def end(self) -> None:
        for pod in self.running.values():
            pod.code = self.codes.pop(0)


JOB_PATH = "/apis/batch/v1/namespaces/modelfleet/jobs/hydrate"


def job(backoff_limit: int) -> Json:
    return {
        "metadata": {"name": "hydrate", "namespace": "modelfleet", "uid": "0123456789ab"},
        "spec": {"backoffLimit": backoff_limit, "template": {"spec": {"containers": [{}]}}},
        "status": {"startTime": "2026-01-01T00:00:00Z"},
    }


def run_attempts(codes: list[int], backoff_limit: int) -> tuple[Json, list[str]]:
    client = FakeClient({JOB_PATH: job(backoff_limit)})
    runner = FakeRunner(codes)
    stand_in = kubelet.KubeletStandIn("gke-dev", client, pods=runner)  # type: ignore[arg-type]
    for _ in range(2 * len(codes)):
        current = client.objects[JOB_PATH]
        conditions = {c["type"] for c in current["status"].get("conditions") or []}
        if {"Complete", "Failed"} & conditions:
            break
        stand_in._run_pod(json.loads(json.dumps(current)), JOB_PATH, dict(current["status"]))
        runner.end()
    return client.objects[JOB_PATH]["status"], runner.started


def test_the_job_completes_when_its_container_exits_0() -> None:
    status, started = run_attempts([0], backoff_limit=3)
    assert started == ["hydrate-gke-dev-01234567-1"]
    assert status["succeeded"] == 1 and status["completionTime"]
    assert "Complete" in {c["type"] for c in status["conditions"]}


def test_a_failed_container_is_an_attempt_and_the_next_pod_runs() -> None:
    status, started = run_attempts([137, 0], backoff_limit=3)
    assert started == ["hydrate-gke-dev-01234567-1", "hydrate-gke-dev-01234567-2"]
    assert (status["failed"], status["succeeded"]) == (1, 1)


def test_past_the_backoff_limit_the_job_is_failed() -> None:
    status, started = run_attempts([1, 1, 1], backoff_limit=1)
    assert len(started) == 2
    assert status["failed"] == 2 and status["active"] == 0
    assert {c["type"] for c in status["conditions"]} == {"FailureTarget", "Failed"}


def test_a_staged_copy_is_checked_byte_for_byte(tmp_path: Path) -> None:
    files = {"model.safetensors": b"weights", "config.json": b"{}"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    marker = {"fingerprint": "abc123", "files": 2, "bytes": 9}
    assert staged.copy_problems(tmp_path, files, marker, "abc123") == []
    (tmp_path / "config.json").write_bytes(b"[]")
    assert staged.copy_problems(tmp_path, files, marker, "abc123") == [
        f"{tmp_path}/config.json differs from the source's config.json"
    ]
    (tmp_path / "extra").write_bytes(b"")
    assert len(staged.copy_problems(tmp_path, files, {**marker, "files": 3}, "abc123")) == 3
