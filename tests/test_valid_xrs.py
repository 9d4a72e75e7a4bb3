"""Real names and shapes the XRDs must keep accepting: each case is a valid base XR with one
change (bases and case types in xr_cases.py)."""

import pytest
from modelfleet_devtools.validation import validate_xr
from xr_cases import BASES, DELETE, HF, Valid, apply_changes

SHA = "c1899de289a04d12100db370d81485cdf75e47ca"

VALID = [
    Valid("405B Llama repo", "ModelCache", {f"{HF}.repo": "meta-llama/Llama-3.1-405B-Instruct"}),
    Valid(
        "a CPU pool: no GPUs, no GPU memory",
        "InferenceCluster",
        {"spec.nodePools": [{"name": "cpu", "nodeCount": 2, "gpu": {"count": 0}}]},
    ),
    Valid("pods that claim no GPU", "ModelDeployment", {"spec.resources": {"gpusPerNode": 0}}),
    Valid("Ray on request", "ModelDeployment", {"spec.engine": {"multiNodeLauncher": "Ray"}}),
    Valid("vLLM's own launcher", "ModelReplica", {"spec.engine": {"multiNodeLauncher": "vLLM"}}),
    Valid("Qwen3 0.6B repo", "ModelCache", {f"{HF}.repo": "Qwen/Qwen3-0.6B"}),
    Valid(
        "repo with underscores",
        "ModelCache",
        {f"{HF}.repo": "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"},
    ),
    Valid("legacy single-segment repo", "ModelCache", {f"{HF}.repo": "gpt2"}),
    Valid("revision main", "ModelCache", {f"{HF}.revision": "main"}),
    Valid("revision v1.0", "ModelCache", {f"{HF}.revision": "v1.0"}),
    Valid("revision 40-hex commit", "ModelCache", {f"{HF}.revision": SHA}),
    Valid("revision refs/pr/12", "ModelCache", {f"{HF}.revision": "refs/pr/12"}),
    Valid("no revision (default branch)", "ModelCache", {f"{HF}.revision": DELETE}),
    Valid(
        "usual include and exclude globs",
        "ModelCache",
        {
            f"{HF}.include": ["*.safetensors", "*.json", "tokenizer*", "[0-9]*.bin"],
            f"{HF}.exclude": ["original/*", "*.pth"],
        },
    ),
    Valid(
        "gated model with a token",
        "ModelCache",
        {f"{HF}.tokenSecretRef": {"name": "hf-token", "key": "HF_TOKEN"}},
    ),
    *(
        Valid(
            f"OCI image {what}",
            "ModelCache",
            {"spec.source": "OCI", HF: DELETE, "spec.oci": {"image": image}},
        )
        for what, image in [
            ("by tag", "ghcr.io/acme/llama-3.1-8b-instruct:1.0"),
            ("by digest", f"ghcr.io/acme/llama@sha256:{'0a' * 32}"),
            ("by tag and digest", f"registry.example.com:5000/ml/qwen3_0.6b:v2@sha256:{'f' * 64}"),
            ("without a tag (latest)", "quay.io/acme/models/qwen"),
            ("on Docker Hub", "docker.io/kserve/modelcar-llama:v1"),
            ("on a loopback registry", "localhost:5000/tiny-llm:test"),
        ]
    ),
    Valid(
        "OCI image with its path and a pull secret",
        "ModelCache",
        {
            "spec.source": "OCI",
            HF: DELETE,
            "spec.oci": {
                "image": "ghcr.io/acme/llama:1.0",
                "path": "/opt/weights/llama_3.1",
                "pullSecretRef": {"name": "regcred"},
            },
        },
    ),
    Valid(
        "existing claim without sizeGiB",
        "ModelCache",
        {"spec.sizeGiB": DELETE, "spec.storage": {"existingClaimName": "shared-models"}},
    ),
    Valid(
        "S3 source with a MinIO endpoint",
        "ModelCache",
        {
            "spec.source": "S3",
            HF: DELETE,
            "spec.s3": {
                "uri": "s3://models/llama-3.1-8b/",
                "endpoint": "http://minio.lab:9000",
                "region": "us-east-1",
                "credentialsSecretRef": {"name": "s3-creds"},
            },
        },
    ),
    Valid(
        "kubeconfig connection",
        "InferenceCluster",
        {
            "spec.connection": {
                "kubeconfigSecretRef": {
                    "namespace": "crossplane-system",
                    "name": "gke-us-kubeconfig",
                }
            }
        },
    ),
    Valid("no storage", "InferenceCluster", {"spec.storage": DELETE}),
    Valid(
        "managed Filestore",
        "InferenceCluster",
        {
            "spec.storage": {
                "managed": {"provisioner": "GCPFilestore", "gcpFilestore": {"network": "default"}}
            }
        },
    ),
    Valid(
        "Azure Files on Premium_ZRS",
        "InferenceCluster",
        {
            "spec.storage": {
                "managed": {"provisioner": "AzureFiles", "azureFiles": {"skuName": "Premium_ZRS"}}
            }
        },
    ),
    Valid("zero replicas (scaled down)", "ModelDeployment", {"spec.replicas": 0}),
    Valid(
        "surge-only rollout",
        "ModelDeployment",
        {"spec.rollout": {"maxUnavailable": 0, "maxSurge": 1}},
    ),
    Valid(
        "Custom engine with a command",
        "ModelDeployment",
        {
            "spec.engine": {
                "framework": "Custom",
                "image": "lmsysorg/sglang:v0.5.2",
                "command": ["python3", "-m", "sglang.launch_server"],
                "args": ["--model-path=/mnt/models"],
            }
        },
    ),
    Valid(
        "vLLM args with $(LWS_LEADER_ADDRESS) (expanded by Kubernetes, no shell)",
        "ModelDeployment",
        {"spec.engine": {"args": ["--host=$(POD_IP)"]}},
    ),
]


@pytest.mark.parametrize("case", VALID, ids=[c.name for c in VALID])
def test_real_names_and_shapes_are_accepted(case: Valid) -> None:
    xr = apply_changes(BASES[case.kind](), case.changes)
    assert validate_xr(xr) == []
