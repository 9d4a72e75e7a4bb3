"""The InferenceCluster examples of docs/inferencecluster.md compose what the page says."""

import re
from pathlib import Path

import pytest
import yaml
from compose_inference_cluster.core import NAMESPACE, PROVIDER_CONFIG, STORAGE
from compose_inference_cluster.fn import NAMED_PROVIDER_CONFIG
from modelfleet_devtools.requests import desired_resources, desired_status
from modelfleet_devtools.validation import assert_valid_xr
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import cond, run

PAGE = Path(__file__).resolve().parents[3] / "docs" / "inferencecluster.md"
DRIVERS = {
    "GCPFilestore": "filestore.csi.storage.gke.io",
    "AWSEFS": "efs.csi.aws.com",
    "AzureFiles": "file.csi.azure.com",
    "NFS": "nfs.csi.k8s.io",
}


def documented_clusters() -> list[dict]:
    blocks = re.findall(r"^```yaml\n(.*?)^```", PAGE.read_text(), re.MULTILINE | re.DOTALL)
    docs = [d for b in blocks for d in yaml.safe_load_all(b)]
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == "InferenceCluster"]


def storage_kind(xr: dict) -> str:
    storage = xr["spec"].get("storage")
    if not storage:
        return "none"
    return storage.get("managed", {}).get("provisioner") or "existing class"


CLUSTERS = documented_clusters()


def test_the_page_has_one_example_per_storage_option() -> None:
    kinds = {storage_kind(xr) for xr in CLUSTERS}
    assert kinds >= {*DRIVERS, "existing class", "none"}


@pytest.mark.parametrize("xr", CLUSTERS, ids=[x["metadata"]["name"] for x in CLUSTERS])
def test_documented_cluster_composes_and_becomes_ready(xr: dict) -> None:
    assert_valid_xr(xr)
    named = xr["spec"]["connection"].get("providerConfigName")
    required = {NAMED_PROVIDER_CONFIG: [{"metadata": {"name": named}}]} if named else None
    composed = desired_resources(run(xr, required=required))
    kind = storage_kind(xr)
    if kind in DRIVERS:
        manifest = composed[STORAGE]["spec"]["forProvider"]["manifest"]
        assert manifest["provisioner"] == DRIVERS[kind]
    elif kind == "existing class":
        assert composed[STORAGE]["spec"]["managementPolicies"] == ["Observe"]
    else:
        assert STORAGE not in composed

    observed = {
        NAMESPACE: observed_object(
            composed[NAMESPACE], remote_status={"phase": "Active"}, ready=True
        )
    }
    if PROVIDER_CONFIG in composed:
        observed[PROVIDER_CONFIG] = composed[PROVIDER_CONFIG]
    if STORAGE in composed:
        observed[STORAGE] = observed_object(composed[STORAGE], ready=True)
        observed[STORAGE]["status"]["atProvider"]["manifest"].setdefault("provisioner", "seen")
    rsp = run(xr, observed, required)
    assert cond(rsp, "Connected") == (True, "Available")
    assert cond(rsp, "StorageReady")[0] is True
    assert desired_status(rsp)["workloadNamespace"] == xr["spec"].get(
        "workloadNamespace", "modelfleet"
    )
