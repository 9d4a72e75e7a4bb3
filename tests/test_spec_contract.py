"""The API facts the product specification fixes (SPEC.md §2-4: group and version, scopes,
short names, Compositions, field names, defaults and enums), as the XRDs define them. A row
fails when an XRD drifts from a name users and acceptance tests rely on."""

from pathlib import Path
from typing import Any

import pytest
import yaml

APIS = Path(__file__).resolve().parents[1] / "apis"
PLURALS = ["inferenceclusters", "modelcaches", "modeldeployments", "modelreplicas"]


def xrd(plural: str) -> dict[str, Any]:
    return yaml.safe_load((APIS / plural / "definition.yaml").read_text())


def field(plural: str, path: str) -> dict[str, Any]:
    """The schema of `path` (dotted; `[]` steps into an array's items) in the served version."""
    node = xrd(plural)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for part in path.split("."):
        items = part.endswith("[]")
        node = node["properties"][part.removesuffix("[]")]
        if items:
            node = node["items"]
    return node


@pytest.mark.parametrize("plural", PLURALS)
def test_every_xrd_is_a_v2_xrd_of_modelfleet_io_v1alpha1(plural: str) -> None:
    definition = xrd(plural)
    assert definition["apiVersion"] == "apiextensions.crossplane.io/v2"
    assert definition["spec"]["group"] == "modelfleet.io"
    assert [v["name"] for v in definition["spec"]["versions"]] == ["v1alpha1"]


@pytest.mark.parametrize(
    ("plural", "kind", "scope", "short_name", "function"),
    [
        pytest.param(
            "inferenceclusters",
            "InferenceCluster",
            "Cluster",
            "ic",
            "compose-inference-cluster",
            id="InferenceCluster: cluster-scoped, ic",
        ),
        pytest.param(
            "modelcaches",
            "ModelCache",
            "Namespaced",
            "mc",
            "compose-model-cache",
            id="ModelCache: namespaced, mc",
        ),
    ],
)
def test_kind_scope_short_name_and_the_one_function_its_composition_calls(
    plural: str, kind: str, scope: str, short_name: str, function: str
) -> None:
    spec = xrd(plural)["spec"]
    assert (spec["names"]["kind"], spec["scope"]) == (kind, scope)
    assert short_name in spec["names"]["shortNames"]
    composition = yaml.safe_load((APIS / plural / "composition.yaml").read_text())
    assert composition["spec"]["compositeTypeRef"]["kind"] == kind
    assert composition["spec"]["mode"] == "Pipeline"
    assert [s["functionRef"]["name"] for s in composition["spec"]["pipeline"]] == [function]


IC, MC = "inferenceclusters", "modelcaches"
HF = "spec.huggingFace"


@pytest.mark.parametrize(
    ("plural", "path", "expected"),
    [
        pytest.param(IC, "spec.connection.providerConfigName", {"type": "string"}, id="IC pc"),
        *(
            pytest.param(IC, f"spec.connection.kubeconfigSecretRef.{f}", {"type": "string"}, id=f)
            for f in ("namespace", "name", "key")
        ),
        pytest.param(
            IC, "spec.workloadNamespace", {"default": "modelfleet"}, id="workloadNamespace default"
        ),
        pytest.param(IC, "spec.storage.storageClassName", {"type": "string"}, id="IC class"),
        pytest.param(
            IC,
            "spec.storage.managed.provisioner",
            {"enum": ["GCPFilestore", "AWSEFS", "AzureFiles", "NFS"]},
            id="provisioner enum",
        ),
        *(
            pytest.param(IC, f"spec.storage.managed.{f}", {"type": "string"}, id=f)
            for f in (
                "gcpFilestore.network",
                "gcpFilestore.tier",
                "awsEFS.fileSystemId",
                "azureFiles.skuName",
                "nfs.server",
                "nfs.share",
            )
        ),
        *(
            pytest.param(IC, f"spec.nodePools[].{f}", {"type": t}, id=f"nodePools {f}")
            for f, t in (
                ("name", "string"),
                ("nodeCount", "integer"),
                ("gpu.count", "integer"),
                ("gpu.memoryGiB", "integer"),
                ("gpu.product", "string"),
                ("nodeSelector", "object"),
                ("tolerations", "array"),
            )
        ),
        pytest.param(IC, "spec.leaderWorkerSet.install", {"type": "boolean"}, id="LWS install"),
        pytest.param(IC, "spec.leaderWorkerSet.version", {"type": "string"}, id="LWS version"),
        *(
            pytest.param(IC, f"status.{f}", {"type": t}, id=f"IC status {f}")
            for f, t in (
                ("providerConfigName", "string"),
                ("workloadNamespace", "string"),
                ("storage.storageClassName", "string"),
                ("storage.accessMode", "string"),
                ("storage.ready", "boolean"),
            )
        ),
        # SPEC.md's two sources, and OCI images (issue 21), which extends the enum.
        pytest.param(MC, "spec.source", {"enum": ["HuggingFace", "S3", "OCI"]}, id="source enum"),
        *(
            pytest.param(MC, f"{HF}.{f}", {"type": t}, id=f"huggingFace {f}")
            for f, t in (
                ("repo", "string"),
                ("revision", "string"),
                ("include", "array"),
                ("exclude", "array"),
                ("tokenSecretRef.name", "string"),
                ("tokenSecretRef.key", "string"),
            )
        ),
        *(
            pytest.param(MC, f"spec.s3.{f}", {"type": "string"}, id=f"s3 {f}")
            for f in ("uri", "endpoint", "region", "credentialsSecretRef.name")
        ),
        pytest.param(MC, "spec.oci.image", {"type": "string"}, id="oci image"),
        pytest.param(MC, "spec.oci.path", {"default": "/models"}, id="oci path, default /models"),
        pytest.param(MC, "spec.oci.pullSecretRef.name", {"type": "string"}, id="oci pull secret"),
        pytest.param(MC, "spec.sizeGiB", {"type": "integer"}, id="sizeGiB"),
        pytest.param(MC, "spec.clusterSelector.matchLabels", {"type": "object"}, id="selector"),
        pytest.param(MC, "spec.storage.storageClassName", {"type": "string"}, id="MC class"),
        pytest.param(MC, "spec.storage.existingClaimName", {"type": "string"}, id="BYO claim"),
        pytest.param(
            MC,
            "spec.storage.reclaimPolicy",
            {"enum": ["Delete", "Retain"], "default": "Delete"},
            id="reclaimPolicy enum, default Delete",
        ),
        pytest.param(MC, "spec.hydration.image", {"type": "string"}, id="hydration image"),
        pytest.param(MC, "spec.hydration.resources.requests", {"type": "object"}, id="requests"),
        pytest.param(MC, "spec.hydration.resources.limits", {"type": "object"}, id="limits"),
        pytest.param(MC, "spec.hydration.backoffLimit", {"type": "integer"}, id="backoffLimit"),
        pytest.param(
            MC, "spec.hydration.activeDeadlineSeconds", {"type": "integer"}, id="deadline"
        ),
        pytest.param(MC, "status.summary.ready", {"type": "string"}, id="summary.ready"),
        *(
            pytest.param(MC, f"status.clusters[].{f}", {"type": "string"}, id=f"row {f}")
            for f in ("name", "message", "claimName", "path", "fingerprint")
        ),
        pytest.param(
            MC,
            "status.clusters[].phase",
            {"enum": ["Pending", "Hydrating", "Ready", "Failed"]},
            id="row phase enum",
        ),
    ],
)
def test_spec_field_names_defaults_and_enums(
    plural: str, path: str, expected: dict[str, Any]
) -> None:
    schema = field(plural, path)
    assert {k: schema.get(k) for k in expected} == expected
