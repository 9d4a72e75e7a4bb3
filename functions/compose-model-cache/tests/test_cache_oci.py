"""A ModelCache of an OCI image: the Job it composes (the image reference and path as argv,
registry credentials only by provider-kubernetes' copy), and the tag's digest pinned for
every cluster as a branch's commit is."""

import pytest
from cache_world import EU, US, complete, desired_resources, model_cache, reconcile, rows
from modelfleet_contracts.hydration import (
    BYTES_DONE,
    BYTES_TOTAL,
    PINNED_REVISION,
    REVISION,
)
from modelfleet_devtools.requests import desired_status
from test_cache_progress import hydrating, manifest_of, reporting

DIGEST_A = "sha256:" + "a" * 64
DIGEST_B = "sha256:" + "b" * 64
TAGGED = "ghcr.io/acme/llama-3.1-8b:1.0"


def oci_cache(**oci):
    xr = model_cache(source="OCI", oci={"image": TAGGED, **oci})
    del xr["spec"]["huggingFace"]
    return xr


def container(rsp, cluster="gke-us"):
    fingerprint = rows(rsp)[cluster]["fingerprint"]
    job = manifest_of(desired_resources(rsp)[f"{cluster}-hydrate-{fingerprint}"])
    return job["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize(
    ("oci", "argv"),
    [
        pytest.param({}, [f"--image={TAGGED}", "--path=/models"], id="tag, default path"),
        pytest.param(
            {"image": f"ghcr.io/acme/llama@{DIGEST_A}", "path": "/opt/weights"},
            [f"--image=ghcr.io/acme/llama@{DIGEST_A}", "--path=/opt/weights"],
            id="digest, own path",
        ),
        pytest.param(
            {"include": ["*.safetensors", "*.json"], "exclude": ["original/*"]},
            [
                f"--image={TAGGED}",
                "--path=/models",
                "--include=*.safetensors",
                "--include=*.json",
                "--exclude=original/*",
            ],
            id="filters",
        ),
    ],
)
def test_the_job_pulls_the_image_with_its_reference_and_path_as_argv(oci, argv):
    command = container(reconcile(oci_cache(**oci), [US]))["command"]
    assert command[command.index("--source=OCI") :] == ["--source=OCI", *argv]


def test_a_pull_secret_reaches_the_job_only_through_provider_kubernetes():
    rsp = reconcile(oci_cache(pullSecretRef={"name": "regcred"}), [US])
    creds = desired_resources(rsp)["gke-us-creds"]["spec"]
    assert creds["references"] == [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": "regcred",
                "namespace": "ml-team",
                # brackets: the key's leading dot is no path separator
                "fieldPath": "data[.dockerconfigjson]",
            },
            "toFieldPath": "data.DOCKER_CONFIG_JSON",
        }
    ]
    secret_name = creds["forProvider"]["manifest"]["metadata"]["name"]
    env = {e["name"]: e for e in container(rsp)["env"]}
    assert env["DOCKER_CONFIG_JSON"] == {
        "name": "DOCKER_CONFIG_JSON",
        "valueFrom": {"secretKeyRef": {"name": secret_name, "key": "DOCKER_CONFIG_JSON"}},
    }
    public = reconcile(oci_cache(), [US])
    assert "gke-us-creds" not in desired_resources(public)
    assert "DOCKER_CONFIG_JSON" not in {e["name"] for e in container(public)["env"]}


@pytest.mark.parametrize(
    ("changed", "moves"),
    [
        pytest.param({"image": f"ghcr.io/acme/llama@{DIGEST_B}"}, True, id="new digest"),
        pytest.param({"image": "ghcr.io/acme/llama-3.1-8b:1.1"}, True, id="new tag"),
        pytest.param({"path": "/weights"}, True, id="another path in the image"),
        pytest.param({"exclude": ["original/*"]}, True, id="a filter"),
        pytest.param({"pullSecretRef": {"name": "regcred"}}, False, id="a pull secret"),
    ],
)
def test_what_selects_the_files_moves_the_weights_and_nothing_else_does(changed, moves):
    before = rows(reconcile(oci_cache(), [US]))["gke-us"]["fingerprint"]
    after = rows(reconcile(oci_cache(**changed), [US]))["gke-us"]["fingerprint"]
    assert (after != before) is moves


def test_the_tags_first_digest_is_pinned_for_every_cluster():
    xr, rsp, observed, composed = hydrating(
        oci_cache(),
        [US, EU],
        **{
            "gke-eu": {BYTES_DONE: "1", BYTES_TOTAL: "10", REVISION: DIGEST_A},
            "gke-us": {BYTES_DONE: "1", BYTES_TOTAL: "10", REVISION: DIGEST_B},
        },
    )
    assert desired_status(rsp)["pinnedRevision"]["commit"] == DIGEST_A
    for cluster in ("gke-us", "gke-eu"):
        key = f"{cluster}-hydrate-{rows(rsp)[cluster]['fingerprint']}"
        job = manifest_of(desired_resources(rsp)[key])
        assert job["metadata"]["annotations"] == {PINNED_REVISION: DIGEST_A}
    us = rows(rsp)["gke-us"]
    assert us["resolvedRevision"] == DIGEST_B
    assert f"fetching digest {DIGEST_B}" in us["message"]
    assert f"pinned to {DIGEST_A} (resolved first on gke-eu)" in us["message"]

    # The cluster that staged another digest is never Ready.
    job_us = f"gke-us-hydrate-{us['fingerprint']}"
    observed[job_us] = reporting(
        complete(composed[job_us]), **{BYTES_DONE: "10", BYTES_TOTAL: "10", REVISION: DIGEST_B}
    )
    us = rows(reconcile(xr, [US, EU], observed))["gke-us"]
    assert us["phase"] == "Failed" and f"staged digest {DIGEST_B}" in us["message"]
