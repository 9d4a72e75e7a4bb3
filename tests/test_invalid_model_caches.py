"""What the API server refuses of a ModelCache before compose-model-cache runs: user strings
that would reach the downloader, and the source and sizing rules (cases as in
test_invalid_xrs.py)."""

import pytest
from xr_cases import DELETE, HF, NO_MATCH, Invalid, assert_rejected, case_params

OCI = "spec.oci"

INVALID = [
    # --- ModelCache: user strings that would reach the downloader -------------------------
    Invalid(
        "repo with a shell ;",
        "ModelCache",
        {f"{HF}.repo": "Qwen/Qwen3;rm -rf /"},
        NO_MATCH,
        f"{HF}.repo",
    ),
    Invalid(
        "repo with a newline",
        "ModelCache",
        {f"{HF}.repo": "Qwen/Qwen3-0.6B\nevil"},
        NO_MATCH,
        f"{HF}.repo",
    ),
    Invalid(
        "repo with a space", "ModelCache", {f"{HF}.repo": "Qwen/Qwen3 0.6B"}, NO_MATCH, f"{HF}.repo"
    ),
    Invalid("repo with $( )", "ModelCache", {f"{HF}.repo": "Qwen/$(id)"}, NO_MATCH, f"{HF}.repo"),
    Invalid(
        "repo with three segments", "ModelCache", {f"{HF}.repo": "a/b/c"}, NO_MATCH, f"{HF}.repo"
    ),
    Invalid(
        "repo starting with a dash (an option)",
        "ModelCache",
        {f"{HF}.repo": "--help"},
        NO_MATCH,
        f"{HF}.repo",
    ),
    Invalid(
        "repo with ..", "ModelCache", {f"{HF}.repo": "Qwen/a..b"}, "repo must not contain '..'"
    ),
    Invalid("repo empty", "ModelCache", {f"{HF}.repo": ""}, NO_MATCH, f"{HF}.repo"),
    Invalid("repo missing", "ModelCache", {f"{HF}.repo": DELETE}, "'repo' is a required property"),
    Invalid(
        "revision with whitespace",
        "ModelCache",
        {f"{HF}.revision": "main branch"},
        NO_MATCH,
        f"{HF}.revision",
    ),
    Invalid(
        "revision with a tab",
        "ModelCache",
        {f"{HF}.revision": "main\t"},
        NO_MATCH,
        f"{HF}.revision",
    ),
    Invalid(
        "revision with $(",
        "ModelCache",
        {f"{HF}.revision": "$(reboot)"},
        NO_MATCH,
        f"{HF}.revision",
    ),
    Invalid(
        "revision with a backtick",
        "ModelCache",
        {f"{HF}.revision": "v1`id`"},
        NO_MATCH,
        f"{HF}.revision",
    ),
    Invalid(
        "revision starting with a dash",
        "ModelCache",
        {f"{HF}.revision": "-rf"},
        NO_MATCH,
        f"{HF}.revision",
    ),
    Invalid(
        "revision climbing with ..",
        "ModelCache",
        {f"{HF}.revision": "refs/pr/../../x"},
        "revision must not contain '..'",
    ),
    Invalid(
        "revision with an empty segment",
        "ModelCache",
        {f"{HF}.revision": "refs//pr"},
        "empty path segments",
    ),
    Invalid(
        "revision ending in /", "ModelCache", {f"{HF}.revision": "refs/pr/"}, "empty path segments"
    ),
    Invalid(
        "include glob with a backtick",
        "ModelCache",
        {f"{HF}.include": ["`id`.safetensors"]},
        NO_MATCH,
        f"{HF}.include[0]",
    ),
    Invalid(
        "include glob with ;",
        "ModelCache",
        {f"{HF}.include": ["*.json;ls"]},
        NO_MATCH,
        f"{HF}.include[0]",
    ),
    Invalid(
        "include glob starting with a dash",
        "ModelCache",
        {f"{HF}.include": ["--all"]},
        NO_MATCH,
        f"{HF}.include[0]",
    ),
    Invalid(
        "exclude glob with a newline",
        "ModelCache",
        {f"{HF}.exclude": ["original/*\n*.bin"]},
        NO_MATCH,
        f"{HF}.exclude[0]",
    ),
    Invalid(
        "exclude glob with a trailing newline",
        "ModelCache",
        {f"{HF}.exclude": ["original/*\n"]},
        NO_MATCH,
        f"{HF}.exclude[0]",
    ),
    Invalid(
        "token secret without a name",
        "ModelCache",
        {f"{HF}.tokenSecretRef": {"key": "T"}},
        "'name' is a required property",
    ),
    Invalid(
        "token secret name not a DNS name",
        "ModelCache",
        {f"{HF}.tokenSecretRef": {"name": "HF Token"}},
        NO_MATCH,
    ),
    # --- ModelCache: source discriminator and required-unless rules -------------------------
    Invalid(
        "source HuggingFace without the huggingFace block",
        "ModelCache",
        {HF: DELETE},
        "source HuggingFace requires spec.huggingFace",
    ),
    Invalid(
        "source S3 without the s3 block",
        "ModelCache",
        {"spec.source": "S3", HF: DELETE},
        "source S3 requires spec.s3",
    ),
    Invalid(
        "both source blocks",
        "ModelCache",
        {"spec.s3": {"uri": "s3://models/qwen/"}},
        "set only the block for the chosen source",
    ),
    Invalid("unknown source", "ModelCache", {"spec.source": "GCS"}, "is not one of"),
    Invalid(
        "source missing", "ModelCache", {"spec.source": DELETE}, "'source' is a required property"
    ),
    Invalid(
        "S3 uri that is not s3://",
        "ModelCache",
        {"spec.source": "S3", HF: DELETE, "spec.s3": {"uri": "https://models/qwen"}},
        NO_MATCH,
        "spec.s3.uri",
    ),
    Invalid(
        "S3 uri with ..",
        "ModelCache",
        {"spec.source": "S3", HF: DELETE, "spec.s3": {"uri": "s3://models/../secrets/"}},
        "uri must not contain '..'",
    ),
    Invalid(
        "S3 endpoint with shell text",
        "ModelCache",
        {
            "spec.source": "S3",
            HF: DELETE,
            "spec.s3": {"uri": "s3://models/q/", "endpoint": "https://minio;id"},
        },
        NO_MATCH,
        "spec.s3.endpoint",
    ),
    Invalid(
        "source OCI without the oci block",
        "ModelCache",
        {"spec.source": "OCI", HF: DELETE},
        "source OCI requires spec.oci",
    ),
    Invalid(
        "oci block beside huggingFace",
        "ModelCache",
        {"spec.oci": {"image": "ghcr.io/acme/llama:1.0"}},
        "set only the block for the chosen source",
    ),
    *(
        Invalid(
            f"OCI image {what}",
            "ModelCache",
            {"spec.source": "OCI", HF: DELETE, OCI: {"image": image}},
            "image must be a reference registry/repository[:tag][@sha256:<64 hex>]",
        )
        for what, image in [
            ("with a shell ;", "ghcr.io/acme/llama;id"),
            ("with $( )", "ghcr.io/acme/$(id):1"),
            ("with a space", "ghcr.io/acme/llama 1.0"),
            ("with a newline", "ghcr.io/acme/llama\n:1.0"),
            ("starting with a dash (an option)", "--insecure"),
            ("with an upper-case repository", "ghcr.io/Acme/Llama:1.0"),
            ("with a short digest", "ghcr.io/acme/llama@sha256:abc123"),
            ("with a non-sha256 digest", f"ghcr.io/acme/llama@md5:{'a' * 32}"),
            ("with a scheme", "https://ghcr.io/acme/llama:1.0"),
            ("with ..", "ghcr.io/acme/../llama:1.0"),
            ("with a tag over 128 characters", f"ghcr.io/acme/llama:{'v' * 129}"),
        ]
    ),
    Invalid(
        "OCI image without its registry",
        "ModelCache",
        {"spec.source": "OCI", HF: DELETE, OCI: {"image": "acme/llama:1.0"}},
        "image must name its registry",
    ),
    Invalid(
        "OCI path with ..",
        "ModelCache",
        {
            "spec.source": "OCI",
            HF: DELETE,
            OCI: {"image": "ghcr.io/a/b:1", "path": "/models/../etc"},
        },
        NO_MATCH,
        f"{OCI}.path",
    ),
    Invalid(
        "OCI path not absolute",
        "ModelCache",
        {"spec.source": "OCI", HF: DELETE, OCI: {"image": "ghcr.io/a/b:1", "path": "models"}},
        NO_MATCH,
        f"{OCI}.path",
    ),
    Invalid(
        "OCI pull secret with shell text",
        "ModelCache",
        {
            "spec.source": "OCI",
            HF: DELETE,
            OCI: {"image": "ghcr.io/a/b:1", "pullSecretRef": {"name": "regcred;id"}},
        },
        NO_MATCH,
        f"{OCI}.pullSecretRef.name",
    ),
    Invalid(
        "sizeGiB missing without an existing claim",
        "ModelCache",
        {"spec.sizeGiB": DELETE},
        "sizeGiB is required unless storage.existingClaimName is set",
    ),
    Invalid("sizeGiB zero", "ModelCache", {"spec.sizeGiB": 0}, "less than the minimum of 1"),
    Invalid(
        "existing claim and a storage class",
        "ModelCache",
        {"spec.storage": {"existingClaimName": "shared", "storageClassName": "nfs"}},
        "storageClassName does not apply to an existing claim",
    ),
    Invalid(
        "unknown reclaim policy",
        "ModelCache",
        {"spec.storage": {"reclaimPolicy": "Keep"}},
        "is not one of",
    ),
    Invalid(
        "downloader image with a space",
        "ModelCache",
        {"spec.hydration": {"image": "python:3.12 sh"}},
        NO_MATCH,
        "spec.hydration.image",
    ),
    Invalid(
        "download deadline under a minute",
        "ModelCache",
        {"spec.hydration": {"activeDeadlineSeconds": 5}},
        "less than the minimum of 60",
    ),
    Invalid(
        "selector In without values",
        "ModelCache",
        {"spec.clusterSelector": {"matchExpressions": [{"key": "r", "operator": "In"}]}},
        "values must be set for In and NotIn",
    ),
    Invalid(
        "selector Exists with values",
        "ModelCache",
        {
            "spec.clusterSelector": {
                "matchExpressions": [{"key": "r", "operator": "Exists", "values": ["us"]}]
            }
        },
        "empty for Exists and DoesNotExist",
    ),
    Invalid(
        "misspelt field (sizeGB)",
        "ModelCache",
        {"spec.sizeGB": 5},
        "Additional properties are not allowed ('sizeGB' was unexpected)",
    ),
]


@pytest.mark.parametrize("case", case_params(INVALID))
def test_invalid_model_cache_is_rejected_with_its_message(case: Invalid) -> None:
    assert_rejected(case)
