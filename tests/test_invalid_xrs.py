"""What the API server refuses before any function runs: invalid XRs against our XRDs.

Each scenario starts from a small valid XR, changes one thing a user might get wrong (or an
attacker might try), and expects the XRD's OpenAPI schema or CEL rules to reject it with a
message that says what is wrong. The ModelCache cases are in test_invalid_model_caches.py,
the real names that must keep working in test_valid_xrs.py, the bases and case types in
xr_cases.py.
"""

import pytest
from modelfleet_devtools.validation import validate_xr
from xr_cases import BASES, DELETE, NO_MATCH, Invalid, assert_rejected, case_params

INVALID = [
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
        "pool with a negative GPU count",
        "InferenceCluster",
        {
            "spec.nodePools": [
                {"name": "h100", "nodeCount": 2, "gpu": {"count": -1, "memoryGiB": 80}}
            ]
        },
        "less than the minimum of 0",
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
        "gpu.memoryGiB is required when gpu.count is above 0",
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
        "Ray asked for a Custom engine",
        "ModelDeployment",
        {"spec.engine": {"framework": "Custom", "command": ["/serve"], "multiNodeLauncher": "Ray"}},
        "engine.multiNodeLauncher Ray applies to framework vLLM only",
    ),
    Invalid(
        "unknown multi-node launcher",
        "ModelDeployment",
        {"spec.engine": {"multiNodeLauncher": "MPI"}},
        "is not one of",
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
        "spec.engine.args[0]",
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


@pytest.mark.parametrize("case", case_params(INVALID))
def test_invalid_xr_is_rejected_with_its_message(case: Invalid) -> None:
    assert_rejected(case)


@pytest.mark.parametrize("kind", sorted(BASES))
def test_each_base_xr_is_valid(kind: str) -> None:
    """Every invalid case differs from a valid XR by exactly its change."""
    assert validate_xr(BASES[kind]()) == []
