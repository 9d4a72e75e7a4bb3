"""The real thing for OCI: a composed hydration Job's exact command, run against a real
registry on 127.0.0.1 (oci_world.py) holding a modelcar image built here, directly or through
a gateway that damages a blob in transit or demands credentials."""

import base64
import json
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cache_world import desired_resources, model_cache, reconcile, rows
from fake_kube import FakeKube, JobRecord
from hydrator_world import CLUSTER, MARKER, MIB, RUN_TIMEOUT, local_argv, model_files
from modelfleet_devtools.loopback.modelcar import Image, image
from modelfleet_hydrator import job_report
from oci_world import TOKEN, Registry, gateway, registry

__all__ = ["gateway", "registry"]  # the fixtures, used by name

weights = random.Random(11).randbytes
# A base layer with an OS beside the weights, then the weights, then a layer that links one
# file and whites another out: what `docker build` makes of a modelcar's Dockerfile.
BASE = {
    "etc/os-release": b"ID=busybox\n",
    "bin/sh": b"\x7fELF not really",
    "models/config.json": b'{"model_type": "tiny"}',
    "models/stale.bin": b"removed by a later layer",
    "models/.modelfleet-layers": b"named like the hydrator's own record",
}
WEIGHTS = {
    "models/model-00001-of-00002.safetensors": weights(3 * MIB + 5),
    "models/model-00002-of-00002.safetensors": weights(MIB + 17),
    "./models/tokenizer/tokenizer.json": b'{"vocab": ["a", "b"]}',
    "models/../etc/passwd": b"root::0:0::/:/bin/sh",  # climbs out of the model path
}
LINKS = {
    "models/.wh.stale.bin": b"",
    "models/tokenizer.json": ("symlink", "tokenizer/tokenizer.json"),
    "models/weights.safetensors": ("hardlink", "models/model-00002-of-00002.safetensors"),
    "models/escape": ("symlink", "/etc/os-release"),
}
STAGED = {
    "config.json": BASE["models/config.json"],
    "model-00001-of-00002.safetensors": WEIGHTS["models/model-00001-of-00002.safetensors"],
    "model-00002-of-00002.safetensors": WEIGHTS["models/model-00002-of-00002.safetensors"],
    "tokenizer/tokenizer.json": WEIGHTS["./models/tokenizer/tokenizer.json"],
    "tokenizer.json": WEIGHTS["./models/tokenizer/tokenizer.json"],
    "weights.safetensors": WEIGHTS["models/model-00002-of-00002.safetensors"],
}
MODELCAR = image(BASE, WEIGHTS, LINKS)


def composed(reference: str, **oci: object) -> tuple[dict[str, Any], str]:
    """The hydration Job's manifest the function composes for a cache of `reference`, and
    the fingerprint it reports."""
    xr = model_cache(source="OCI", oci={"image": reference, **oci})
    del xr["spec"]["huggingFace"]
    rsp = reconcile(xr, [CLUSTER])
    fingerprint = rows(rsp)["gke-us"]["fingerprint"]
    job = desired_resources(rsp)[f"gke-us-hydrate-{fingerprint}"]
    return job["spec"]["forProvider"]["manifest"], fingerprint


def oci_job(reference: str, **oci: object) -> tuple[list[str], dict[str, str], str]:
    """The composed Job's command, its literal env and the fingerprint it reports."""
    job, fingerprint = composed(reference, **oci)
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    return list(container["command"]), env, fingerprint


def pull(
    reference: str, tmp_path: Path, env: dict[str, str] | None = None, **oci: object
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run the composed Job's command to completion; the process and the copy's directory."""
    command, job_env, fingerprint = oci_job(reference, **oci)
    proc = subprocess.run(
        local_argv(command, tmp_path / "claim"),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **job_env, **(env or {})},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    return proc, tmp_path / "claim" / fingerprint


def pushed(server: Registry, built: Image = MODELCAR, tag: str = "v1") -> str:
    return server.push("acme/tiny-llm", tag, built)


def test_the_files_under_the_model_path_land_under_the_fingerprint(registry, tmp_path):
    proc, staged = pull(pushed(registry), tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert model_files(staged) == STAGED, "the model path only, links as copies, whiteouts applied"
    marker = json.loads((staged / MARKER).read_text())
    assert marker["revision"] == MODELCAR.digest, "the tag is recorded as the digest it named"
    assert not (tmp_path / "claim" / "etc").exists() and not (staged / "escape").exists()
    assert sorted(p.name for p in staged.parent.iterdir()) == [staged.name], "no staging left"
    assert sorted(registry.blob_fetches()) == sorted(MODELCAR.layer_digests), "each layer once"
    assert f"is {MODELCAR.digest}" in proc.stdout


def test_a_second_run_fetches_nothing_and_does_not_even_ask_the_registry(registry, tmp_path):
    reference = pushed(registry)
    first, staged = pull(reference, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    registry.stop()  # the registry is gone: a run that asked it anything would fail
    second, again = pull(reference, tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert again == staged and model_files(staged) == STAGED
    assert "complete already; nothing to download" in second.stdout


def through(gateway, reference: str) -> str:
    return reference.replace(gateway.upstream.host, gateway.host, 1)


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        pytest.param("corrupt", "model-00001-of-00002.safetensors", id="a flipped byte"),
        pytest.param("grow", "model-00001-of-00002.safetensors", id="more bytes than published"),
        pytest.param("head", "no model file read yet", id="an unreadable archive"),
    ],
)
def test_a_corrupted_layer_fails_the_attempt_by_name_and_the_retry_repairs_it(
    registry, gateway, tmp_path, damage, named
):
    reference = through(gateway, pushed(registry))
    weights_layer = MODELCAR.layer_digests[1]
    getattr(gateway, damage).add(weights_layer)  # in transit, once

    failed, staged = pull(reference, tmp_path)
    assert failed.returncode != 0
    assert f"layer {weights_layer} (carrying " in failed.stdout
    assert named in failed.stdout, "the files it carried are named"
    assert not staged.exists() and not list((tmp_path / "claim").rglob(MARKER))
    staging = tmp_path / "claim" / f".staging-{staged.name}"
    assert not (staging / "model-00001-of-00002.safetensors").exists(), "unverified bytes go"

    before = len(registry.blob_fetches())
    retried, staged = pull(reference, tmp_path)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert model_files(staged) == STAGED
    assert registry.blob_fetches()[before:] == MODELCAR.layer_digests[1:], (
        "the verified base layer is kept; the damaged one and those after it are fetched again"
    )


def test_a_damaged_file_on_the_claim_is_named_and_its_layer_fetched_again(
    registry, gateway, tmp_path
):
    """The copy is checked file by file against the sizes and digests its layers carried."""
    reference = through(gateway, pushed(registry))
    base_layer = MODELCAR.layer_digests[0]
    gateway.corrupt.add(MODELCAR.layer_digests[2])  # the last layer fails: the copy stays staged
    failed, staged = pull(reference, tmp_path)
    assert failed.returncode != 0
    staging = tmp_path / "claim" / f".staging-{staged.name}"
    config = staging / "config.json"
    config.write_bytes(config.read_bytes().upper())  # same size, other bytes

    again, staged = pull(reference, tmp_path)
    assert again.returncode != 0
    assert "integrity check failed: config.json: sha256" in again.stdout
    before = len(registry.blob_fetches())
    repaired, staged = pull(reference, tmp_path)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert model_files(staged) == STAGED
    assert registry.blob_fetches()[before] == base_layer, "the layer that carried it"


def test_an_interrupted_attempt_finishes_the_digest_it_started_when_the_tag_moved(
    registry, gateway, tmp_path
):
    reference = through(gateway, pushed(registry))
    gateway.corrupt.add(MODELCAR.layer_digests[2])
    failed, staged = pull(reference, tmp_path)
    assert failed.returncode != 0
    newer = image(BASE, {**WEIGHTS, "models/config.json": b'{"model_type": "newer"}'})
    pushed(registry, newer)  # the tag moves to another image meanwhile
    retried, staged = pull(reference, tmp_path)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert json.loads((staged / MARKER).read_text())["revision"] == MODELCAR.digest
    assert model_files(staged) == STAGED, "one image's files, never a mix"


def test_a_run_killed_mid_file_resumes_without_fetching_a_verified_layer_again(
    registry, gateway, tmp_path
):
    """The pod is evicted while a weights file streams in (cut inside a member the tar reader
    is handing to the file, a piece at a time): nothing it left looks complete, and the retry
    fetches only the layer it was cut off in and those after it."""
    reference = through(gateway, pushed(registry))
    weights_layer = MODELCAR.layer_digests[1]
    gateway.stall[weights_layer] = 2 * MIB  # then the connection hangs
    command, env, fingerprint = oci_job(reference)
    staging = tmp_path / "claim" / f".staging-{fingerprint}"
    proc = subprocess.Popen(
        local_argv(command, tmp_path / "claim"),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not (
            gateway.stalled.is_set() and any(p.stat().st_size for p in partial_files(staging))
        ):
            assert proc.poll() is None, "the run ended before it could be cut off"
            assert time.monotonic() < deadline, "the download never reached the cut"
            time.sleep(0.05)
        proc.kill()  # the pod is evicted mid-file
    finally:
        proc.kill()
        proc.wait(timeout=10)
        gateway.release.set()
    assert not (tmp_path / "claim" / fingerprint).exists(), "nothing half-done is served"
    left = {
        path: data
        for path, data in model_files(staging).items()
        if not path.endswith(".modelfleet-partial") and not path.startswith(".modelfleet-")
    }
    assert left, "the base layer's files were staged before the cut"
    whole = {**{k.removeprefix("models/"): v for k, v in BASE.items()}, **STAGED}
    for path, data in left.items():  # under a model file's name is that file, whole
        assert data == whole[path], f"{path} looks complete but is not"

    before = len(registry.blob_fetches())
    retried, staged = pull(reference, tmp_path)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "1 of 3 layer(s) staged by an earlier attempt" in retried.stdout
    assert registry.blob_fetches()[before:] == MODELCAR.layer_digests[1:], (
        "the verified base layer is not fetched again"
    )
    assert model_files(staged) == STAGED
    assert not partial_files(tmp_path / "claim"), "no partial file left behind"


def partial_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.modelfleet-partial") if p.is_file()]


@pytest.mark.parametrize(
    ("oci", "expected"),
    [
        pytest.param({"path": "/models/tokenizer"}, {"tokenizer.json"}, id="a sub-directory"),
        pytest.param({"path": "/etc"}, {"os-release"}, id="another directory of the image"),
        pytest.param(
            {"include": ["*.safetensors", "tokenizer/"]},
            {
                "model-00001-of-00002.safetensors",
                "model-00002-of-00002.safetensors",
                "weights.safetensors",
                "tokenizer/tokenizer.json",
            },
            id="include, a folder too",
        ),
        pytest.param(
            {"exclude": ["model-*", "tokenizer/*"]},
            {"config.json"},
            id="exclude (a link to a file left out is left out)",
        ),
    ],
)
def test_the_path_and_filters_choose_the_files_staged(registry, tmp_path, oci, expected):
    proc, staged = pull(pushed(registry), tmp_path, **oci)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(model_files(staged)) == expected


def test_an_image_with_nothing_under_the_path_fails_instead_of_staging_nothing(registry, tmp_path):
    proc, staged = pull(pushed(registry), tmp_path, path="/opt/weights")
    assert proc.returncode != 0
    assert "the image holds no file under /opt/weights" in proc.stdout
    assert not staged.exists()


def test_a_missing_image_fails_with_the_registrys_word(registry, tmp_path):
    proc, staged = pull(f"{registry.host}/acme/absent:v1", tmp_path)
    assert proc.returncode != 0
    assert "acme/absent manifest v1: not found" in proc.stdout
    assert not staged.exists()


def docker_config(host: str, user: str, password: str) -> str:
    """A .dockerconfigjson as `kubectl create secret docker-registry` writes it."""
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    return json.dumps({"auths": {host: {"username": user, "password": password, "auth": auth}}})


def test_a_private_registry_is_pulled_with_the_pull_secrets_credentials(
    registry, gateway, tmp_path
):
    gateway.credentials = ("robot", "pull-only")
    gateway.redirect_blobs = True  # blobs come from "object storage" on another host name
    reference = through(gateway, pushed(registry))
    secret = {"DOCKER_CONFIG_JSON": docker_config(gateway.host, "robot", "pull-only")}
    proc, staged = pull(reference, tmp_path, env=secret, pullSecretRef={"name": "regcred"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert model_files(staged) == STAGED
    assert len(gateway.storage_authorization) == len(MODELCAR.layers)
    assert set(gateway.storage_authorization) == {""}, "the token never follows a redirect"
    assert TOKEN not in proc.stdout + proc.stderr and "pull-only" not in proc.stdout


@pytest.mark.parametrize(
    ("config", "realm", "said"),
    [
        pytest.param(None, "", "a private image needs spec.oci.pullSecretRef", id="no pull secret"),
        pytest.param(
            ("robot", "wrong"), "", "token service refused: HTTP 401", id="wrong password"
        ),
        pytest.param(
            ("robot", "pull-only"),
            "http://token.example/token",
            "refusing the token service 'http://token.example/token': not HTTPS",
            id="a token service in clear text",
        ),
    ],
)
def test_a_private_registry_without_its_credentials_fails_saying_so(
    registry, gateway, tmp_path, config, realm, said
):
    gateway.credentials, gateway.realm = ("robot", "pull-only"), realm
    reference = through(gateway, pushed(registry))
    env = {"DOCKER_CONFIG_JSON": docker_config(gateway.host, *config)} if config else {}
    proc, staged = pull(reference, tmp_path, env=env)
    assert proc.returncode != 0
    assert said in proc.stdout
    assert not staged.exists()


def test_the_pinned_digest_is_staged_and_reported_although_the_tag_moved(registry, tmp_path):
    """The function pins the digest a cluster resolved first and hands it to every Job (an
    annotation); a Job started after the tag moved stages the pinned image."""
    reference = pushed(registry)
    pushed(registry, image(BASE, {**WEIGHTS, "models/config.json": b"{}"}))  # the tag moves
    metadata = composed(reference)[0]["metadata"]
    with FakeKube(JobRecord(metadata["namespace"], metadata["name"])) as kube:
        kube.job.annotations[job_report.PINNED_REVISION] = MODELCAR.digest
        env = {
            "MODELFLEET_KUBE_API": kube.endpoint,
            "MODELFLEET_SERVICEACCOUNT_DIR": str(kube.service_account(tmp_path / "sa")),
        }
        proc, staged = pull(reference, tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((staged / MARKER).read_text())["revision"] == MODELCAR.digest
    assert model_files(staged) == STAGED, "the pinned image's files, not the tag's"
    total = str(sum(len(layer) for layer in MODELCAR.layers))
    reported = kube.job.annotations
    assert reported[job_report.REVISION] == MODELCAR.digest
    assert (reported[job_report.BYTES_DONE], reported[job_report.BYTES_TOTAL]) == (total, total)
