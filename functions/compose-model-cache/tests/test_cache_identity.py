"""A ModelCache's identity on a cluster: its source fingerprint and the names and paths
derived from it. These are stable across releases: a changed value would put the same
weights in a new directory, orphan the old one and download them again on every cluster. So
the values are pinned literally, as the release that introduced them composed them."""

import pytest
from cache_world import US, desired_resources, keys, model_cache, reconcile, rows

CLAIM, SECRET, _ = keys(US["metadata"]["name"])
GATED_LLAMA = {
    "repo": "meta-llama/Llama-3.1-8B-Instruct",
    "revision": "main",
    "include": ["*.safetensors", "*.json", "tokenizer*"],  # unsorted on purpose
    "exclude": ["original/*", "*.pth"],
    "tokenSecretRef": {"name": "hf-token"},
}
COMMIT = "0123456789abcdef0123456789abcdef01234567"
DIGEST = "sha256:" + "0a" * 32

# namespace, spec overrides -> fingerprint, claimName, path, Job name, Secret name, the
# hydrator's argv after --job (the source it fetches).
CASES = {
    "public model, default branch": (
        "ml-team",
        {"huggingFace": {"repo": "Qwen/Qwen3-0.6B"}},
        ("825eacf63f5b", "modelcache-ml-team-qwen-c515c", "825eacf63f5b"),
        ("hydrate-ml-team-qwen-825eacf63f5b-38bcf", None),
        ["--source=HuggingFace", "--repo=Qwen/Qwen3-0.6B"],
    ),
    "gated, branch, filters": (
        "ml-team",
        {"huggingFace": GATED_LLAMA},
        ("f1dfd6a5bef1", "modelcache-ml-team-qwen-c515c", "f1dfd6a5bef1"),
        ("hydrate-ml-team-qwen-f1dfd6a5bef1-87c38", "modelcache-creds-ml-team-qwen-a1bff"),
        [
            "--source=HuggingFace",
            "--repo=meta-llama/Llama-3.1-8B-Instruct",
            "--revision=main",
            "--include=*.safetensors",
            "--include=*.json",
            "--include=tokenizer*",
            "--exclude=original/*",
            "--exclude=*.pth",
        ],
    ),
    "commit, own claim": (
        "ml-team",
        {
            "huggingFace": {"repo": "Qwen/Qwen3-0.6B", "revision": COMMIT},
            "storage": {"existingClaimName": "shared-models"},
            "sizeGiB": None,
        },
        ("fdb27bf6227c", "shared-models", "modelcache-ml-team-qwen-c515c/fdb27bf6227c"),
        ("hydrate-ml-team-qwen-fdb27bf6227c-52c02", None),
        ["--source=HuggingFace", "--repo=Qwen/Qwen3-0.6B", f"--revision={COMMIT}"],
    ),
    "S3 on AWS, credentials": (
        "ml-team",
        {
            "source": "S3",
            "huggingFace": None,
            "s3": {
                "uri": "s3://models/qwen/",
                "region": "us-east-1",
                "credentialsSecretRef": {"name": "s3"},
            },
        },
        ("745249ecbf76", "modelcache-ml-team-qwen-c515c", "745249ecbf76"),
        ("hydrate-ml-team-qwen-745249ecbf76-76b1b", "modelcache-creds-ml-team-qwen-a1bff"),
        ["--source=S3", "--uri=s3://models/qwen/"],
    ),
    "S3-compatible endpoint, another namespace": (
        "research",
        {
            "source": "S3",
            "huggingFace": None,
            "s3": {"uri": "s3://models/llama-3.1-8b/", "endpoint": "http://minio.storage:9000"},
        },
        ("f0a88c3d9e03", "modelcache-research-qwen-4ff26", "f0a88c3d9e03"),
        ("hydrate-research-qwen-f0a88c3d9e03-4821a", None),
        ["--source=S3", "--uri=s3://models/llama-3.1-8b/"],
    ),
    "OCI by tag, pull secret": (
        "ml-team",
        {
            "source": "OCI",
            "huggingFace": None,
            "oci": {"image": "ghcr.io/acme/llama-3.1-8b:1.0", "pullSecretRef": {"name": "regcred"}},
        },
        ("c6e42ea88e42", "modelcache-ml-team-qwen-c515c", "c6e42ea88e42"),
        ("hydrate-ml-team-qwen-c6e42ea88e42-2a940", "modelcache-creds-ml-team-qwen-a1bff"),
        ["--source=OCI", "--image=ghcr.io/acme/llama-3.1-8b:1.0", "--path=/models"],
    ),
    "OCI by digest, own path, another namespace": (
        "research",
        {
            "source": "OCI",
            "huggingFace": None,
            "oci": {"image": f"ghcr.io/acme/llama@{DIGEST}", "path": "/opt/weights"},
        },
        ("19a50a915d09", "modelcache-research-qwen-4ff26", "19a50a915d09"),
        ("hydrate-research-qwen-19a50a915d09-47c80", None),
        ["--source=OCI", f"--image=ghcr.io/acme/llama@{DIGEST}", "--path=/opt/weights"],
    ),
}


def _manifest(obj):
    return obj["spec"]["forProvider"]["manifest"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_fingerprint_and_composed_names_are_stable(case):
    namespace, overrides, (fingerprint, claim, path), (job, secret), source_argv = CASES[case]
    xr = model_cache(namespace=namespace, **overrides)
    xr["spec"] = {k: v for k, v in xr["spec"].items() if v is not None}
    rsp = reconcile(xr, [US])
    row = rows(rsp)[US["metadata"]["name"]]
    assert (row["fingerprint"], row["claimName"], row["path"]) == (fingerprint, claim, path)
    composed = desired_resources(rsp)
    # The Job's composition-resource-name carries the fingerprint as its name does, so a new
    # source is a new Object (core.resource_keys); the claim's and Secret's do not.
    assert (CLAIM, SECRET) == ("gke-us-claim", "gke-us-creds")
    job_manifest = _manifest(composed[f"gke-us-hydrate-{fingerprint}"])
    assert job_manifest["metadata"]["name"] == job
    secret_manifest = _manifest(composed[SECRET]) if SECRET in composed else None
    assert (secret_manifest["metadata"]["name"] if secret_manifest else None) == secret
    cache_dir = "/".join(p for p in ("/mnt/models", path.rpartition("/")[0]) if p)
    assert job_manifest["spec"]["template"]["spec"]["containers"][0]["command"][2:] == [
        f"--cache-dir={cache_dir}",
        f"--fingerprint={fingerprint}",
        f"--job={job}",
        *source_argv,
    ]


def test_credentials_and_sizing_do_not_move_the_weights():
    """Only what selects the files is in the fingerprint: a token, a size, a storage class or
    a Job setting changes no name or path."""
    base = model_cache(huggingFace={"repo": "Qwen/Qwen3-0.6B"})
    tuned = model_cache(
        huggingFace={"repo": "Qwen/Qwen3-0.6B", "tokenSecretRef": {"name": "t", "key": "k"}},
        sizeGiB=500,
        storage={"storageClassName": "nfs", "reclaimPolicy": "Retain"},
        hydration={"backoffLimit": 7, "image": "example.com/hydrate:1.0.0"},
    )
    before, after = rows(reconcile(base, [US])), rows(reconcile(tuned, [US]))
    keys = ("fingerprint", "claimName", "path")
    assert [before["gke-us"][k] for k in keys] == [after["gke-us"][k] for k in keys]
    assert before["gke-us"]["fingerprint"] == CASES["public model, default branch"][2][0]
