"""What the API server refuses before any function runs: invalid XRs against our XRDs.

Each scenario starts from a small valid XR, changes one thing a user might get wrong (or an
attacker might try), and expects the XRD's OpenAPI schema or CEL rules to reject it with a
message that says what is wrong. A second table holds real names that must keep working.
"""

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest
from modelfleet_devtools.validation import validate_xr

DELETE = object()  # marks a field to remove


def inference_cluster() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "gke-us"},
        "spec": {
            "connection": {"providerConfigName": "gke-us"},
            "storage": {"storageClassName": "filestore-rwx"},
            "nodePools": [
                {"name": "h100", "nodeCount": 2, "gpu": {"count": 8, "memoryGiB": 80}},
            ],
        },
    }


def model_cache() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {
            "source": "HuggingFace",
            "huggingFace": {"repo": "Qwen/Qwen3-0.6B", "revision": "main"},
            "sizeGiB": 5,
        },
    }


def model_deployment() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {"replicas": 1, "modelCacheRef": {"name": "qwen"}},
    }


def model_replica() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "qwen-gke-us", "namespace": "ml-team"},
        "spec": {"clusterName": "gke-us", "replicas": 1, "nodes": 1, "gpusPerNode": 1},
    }


BASES = {
    "InferenceCluster": inference_cluster,
    "ModelCache": model_cache,
    "ModelDeployment": model_deployment,
    "ModelReplica": model_replica,
}


def _apply(xr: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Set (or with DELETE remove) dotted paths such as `spec.huggingFace.repo`."""
    xr = copy.deepcopy(xr)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        node = xr
        for key in parents:
            node = node.setdefault(key, {})
        if value is DELETE:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return xr


@dataclass(frozen=True)
class Invalid:
    name: str
    kind: str
    changes: dict[str, Any]
    error: str  # a meaningful part of the message the user sees
    where: str = ""  # the field the error is reported at, when it matters


@dataclass(frozen=True)
class Valid:
    name: str
    kind: str
    changes: dict[str, Any] = field(default_factory=dict)


HF = "spec.huggingFace"
NO_MATCH = "does not match"

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
        f"{HF}.include.0",
    ),
    Invalid(
        "include glob with ;",
        "ModelCache",
        {f"{HF}.include": ["*.json;ls"]},
        NO_MATCH,
        f"{HF}.include.0",
    ),
    Invalid(
        "include glob starting with a dash",
        "ModelCache",
        {f"{HF}.include": ["--all"]},
        NO_MATCH,
        f"{HF}.include.0",
    ),
    Invalid(
        "exclude glob with a newline",
        "ModelCache",
        {f"{HF}.exclude": ["original/*\n*.bin"]},
        NO_MATCH,
        f"{HF}.exclude.0",
    ),
    Invalid(
        "exclude glob with a trailing newline",
        "ModelCache",
        {f"{HF}.exclude": ["original/*\n"]},
        NO_MATCH,
        f"{HF}.exclude.0",
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
    # --- InferenceCluster -----------------------------------------------------------------
    Invalid(
        "both connection fields",
        "InferenceCluster",
        {
            "spec.connection.kubeconfigSecretRef": {
                "namespace": "crossplane-system",
                "name": "gke-us-kubeconfig",
            }
        },
        "connection needs exactly one of providerConfigName or kubeconfigSecretRef",
    ),
    Invalid(
        "neither connection field",
        "InferenceCluster",
        {"spec.connection": {}},
        "connection needs exactly one of providerConfigName or kubeconfigSecretRef",
    ),
    Invalid(
        "no connection at all",
        "InferenceCluster",
        {"spec.connection": DELETE},
        "'connection' is a required property",
    ),
    Invalid(
        "kubeconfig secret without namespace",
        "InferenceCluster",
        {"spec.connection": {"kubeconfigSecretRef": {"name": "gke-us-kubeconfig"}}},
        "'namespace' is a required property",
    ),
    Invalid(
        "both storageClassName and managed",
        "InferenceCluster",
        {
            "spec.storage.managed": {
                "provisioner": "NFS",
                "nfs": {"server": "10.0.0.2", "share": "/exports"},
            }
        },
        "storage needs exactly one of storageClassName or managed",
    ),
    Invalid(
        "empty storage block",
        "InferenceCluster",
        {"spec.storage": {}},
        "storage needs exactly one of storageClassName or managed",
    ),
    Invalid(
        "managed GCPFilestore without gcpFilestore",
        "InferenceCluster",
        {"spec.storage": {"managed": {"provisioner": "GCPFilestore"}}},
        "provisioner GCPFilestore requires gcpFilestore",
    ),
    Invalid(
        "managed AWSEFS without awsEFS",
        "InferenceCluster",
        {"spec.storage": {"managed": {"provisioner": "AWSEFS"}}},
        "provisioner AWSEFS requires awsEFS",
    ),
    Invalid(
        "managed AzureFiles without azureFiles",
        "InferenceCluster",
        {"spec.storage": {"managed": {"provisioner": "AzureFiles"}}},
        "provisioner AzureFiles requires azureFiles",
    ),
    Invalid(
        "managed NFS without nfs",
        "InferenceCluster",
        {"spec.storage": {"managed": {"provisioner": "NFS"}}},
        "provisioner NFS requires nfs",
    ),
    Invalid(
        "unsupported provisioner",
        "InferenceCluster",
        {"spec.storage": {"managed": {"provisioner": "CephFS"}}},
        "is not one of",
    ),
    Invalid(
        "EFS id that is not fs-<hex>",
        "InferenceCluster",
        {
            "spec.storage": {
                "managed": {"provisioner": "AWSEFS", "awsEFS": {"fileSystemId": "fs-12;34"}}
            }
        },
        NO_MATCH,
        "fileSystemId",
    ),
    Invalid(
        "NFS share that is not an absolute path",
        "InferenceCluster",
        {
            "spec.storage": {
                "managed": {"provisioner": "NFS", "nfs": {"server": "10.0.0.2", "share": "exports"}}
            }
        },
        NO_MATCH,
        "share",
    ),
    Invalid(
        "NFS server with a space",
        "InferenceCluster",
        {
            "spec.storage": {
                "managed": {"provisioner": "NFS", "nfs": {"server": "nfs 1", "share": "/exports"}}
            }
        },
        NO_MATCH,
        "server",
    ),
    Invalid(
        "Azure Files NFS share on a Standard SKU",
        "InferenceCluster",
        {
            "spec.storage": {
                "managed": {"provisioner": "AzureFiles", "azureFiles": {"skuName": "Standard_LRS"}}
            }
        },
        "is not one of",
    ),
    Invalid(
        "workload namespace not a DNS label",
        "InferenceCluster",
        {"spec.workloadNamespace": "Model_Fleet"},
        NO_MATCH,
        "spec.workloadNamespace",
    ),
    Invalid(
        "GPU pool with zero GPUs per node",
        "InferenceCluster",
        {
            "spec.nodePools": [
                {"name": "h100", "nodeCount": 2, "gpu": {"count": 0, "memoryGiB": 80}}
            ]
        },
        "less than the minimum of 1",
    ),
    Invalid(
        "GPU pool with negative nodes",
        "InferenceCluster",
        {
            "spec.nodePools": [
                {"name": "h100", "nodeCount": -1, "gpu": {"count": 8, "memoryGiB": 80}}
            ]
        },
        "less than the minimum of 0",
    ),
    Invalid(
        "GPU pool without GPU memory",
        "InferenceCluster",
        {"spec.nodePools": [{"name": "h100", "nodeCount": 2, "gpu": {"count": 8}}]},
        "'memoryGiB' is a required property",
    ),
    Invalid(
        "LeaderWorkerSet version that is not semver",
        "InferenceCluster",
        {"spec.leaderWorkerSet": {"install": True, "version": "latest"}},
        NO_MATCH,
        "spec.leaderWorkerSet.version",
    ),
    # --- ModelDeployment ------------------------------------------------------------------
    Invalid(
        "negative replicas",
        "ModelDeployment",
        {"spec.replicas": -1},
        "less than the minimum of 0",
        "spec.replicas",
    ),
    Invalid(
        "zero nodes per group", "ModelDeployment", {"spec.nodes": 0}, "less than the minimum of 1"
    ),
    Invalid(
        "zero GiB of VRAM",
        "ModelDeployment",
        {"spec.resources": {"vramGiB": 0}},
        "less than the minimum of 1",
    ),
    Invalid(
        "more GPUs per node than any node has",
        "ModelDeployment",
        {"spec.resources": {"gpusPerNode": 65}},
        "greater than the maximum of 64",
    ),
    Invalid(
        "Custom engine without a command",
        "ModelDeployment",
        {"spec.engine": {"framework": "Custom"}},
        "framework Custom requires engine.command",
    ),
    Invalid(
        "unknown engine framework",
        "ModelDeployment",
        {"spec.engine": {"framework": "TGI"}},
        "is not one of",
    ),
    Invalid(
        "engine arg with a newline",
        "ModelDeployment",
        {"spec.engine": {"args": ["--max-model-len=8192\n--evil"]}},
        NO_MATCH,
        "spec.engine.args.0",
    ),
    Invalid(
        "engine image with a space",
        "ModelDeployment",
        {"spec.engine": {"image": "vllm/vllm-openai latest"}},
        NO_MATCH,
        "spec.engine.image",
    ),
    Invalid(
        "env var with value and valueFrom",
        "ModelDeployment",
        {
            "spec.engine": {
                "env": [
                    {
                        "name": "A",
                        "value": "1",
                        "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}},
                    }
                ]
            }
        },
        "set value or valueFrom, not both",
    ),
    Invalid(
        "env var name with a dash",
        "ModelDeployment",
        {"spec.engine": {"env": [{"name": "MY-VAR", "value": "1"}]}},
        NO_MATCH,
    ),
    Invalid(
        "port out of range",
        "ModelDeployment",
        {"spec.engine": {"port": 70000}},
        "greater than the maximum of 65535",
    ),
    Invalid(
        "rollout that can never progress",
        "ModelDeployment",
        {"spec.rollout": {"maxUnavailable": 0, "maxSurge": 0}},
        "maxUnavailable and rollout.maxSurge cannot both be 0",
    ),
    Invalid(
        "rollout maxUnavailable 0 with the default maxSurge 0",
        "ModelDeployment",
        {"spec.rollout": {"maxUnavailable": 0}},
        "maxUnavailable and rollout.maxSurge cannot both be 0",
    ),
    Invalid(
        "unknown gang startup policy",
        "ModelDeployment",
        {"spec.gang": {"startupPolicy": "AllAtOnce"}},
        "is not one of",
    ),
    Invalid(
        "exclusive topology key with a space",
        "ModelDeployment",
        {"spec.placement": {"exclusiveTopology": "gke nodepool"}},
        NO_MATCH,
    ),
    Invalid(
        "cache reference without a name",
        "ModelDeployment",
        {"spec.modelCacheRef": {}},
        "'name' is a required property",
    ),
    # --- ModelReplica ---------------------------------------------------------------------
    Invalid(
        "replica without a cluster",
        "ModelReplica",
        {"spec.clusterName": DELETE},
        "'clusterName' is a required property",
    ),
    Invalid(
        "replica with negative replicas",
        "ModelReplica",
        {"spec.replicas": -3},
        "less than the minimum of 0",
    ),
    Invalid(
        "replica with zero nodes", "ModelReplica", {"spec.nodes": 0}, "less than the minimum of 1"
    ),
    Invalid(
        "replica Custom engine without a command",
        "ModelReplica",
        {"spec.engine": {"framework": "Custom"}},
        "framework Custom requires engine.command",
    ),
    Invalid(
        "replica rollout that can never progress",
        "ModelReplica",
        {"spec.rollout": {"maxUnavailable": 0, "maxSurge": 0}},
        "maxUnavailable and rollout.maxSurge cannot both be 0",
    ),
]

SHA = "c1899de289a04d12100db370d81485cdf75e47ca"

VALID = [
    Valid("405B Llama repo", "ModelCache", {f"{HF}.repo": "meta-llama/Llama-3.1-405B-Instruct"}),
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


def _params(cases: list[Invalid]) -> list[Any]:
    return [pytest.param(c, id=c.name) for c in cases]


@pytest.mark.parametrize("case", _params(INVALID))
def test_invalid_xr_is_rejected_with_its_message(case: Invalid) -> None:
    xr = _apply(BASES[case.kind](), case.changes)
    errors = validate_xr(xr)
    matching = [e for e in errors if case.error in e and case.where in e]
    assert matching, f"expected an error containing {case.error!r} at {case.where!r}, got {errors}"


@pytest.mark.parametrize("case", VALID, ids=[c.name for c in VALID])
def test_real_names_and_shapes_are_accepted(case: Valid) -> None:
    xr = _apply(BASES[case.kind](), case.changes)
    assert validate_xr(xr) == []


@pytest.mark.parametrize("kind", sorted(BASES))
def test_each_base_xr_is_valid(kind: str) -> None:
    """Every invalid case differs from a valid XR by exactly its change."""
    assert validate_xr(BASES[kind]()) == []
