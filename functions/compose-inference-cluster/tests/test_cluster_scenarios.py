"""InferenceCluster scenarios: one example per storage choice, as the observed state evolves."""

from datetime import timedelta
from typing import Any

import pytest
from compose_inference_cluster.core import LWS, NAMESPACE, PROVIDER_CONFIG, STORAGE
from compose_inference_cluster.fn import NAMED_PROVIDER_CONFIG, run_function
from compose_inference_cluster.hydrator_access import HYDRATOR_ACCESS
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.clusters import read_cluster
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import (
    conditions,
    desired_resources,
    desired_status,
    events,
    run_function_request,
)
from modelfleet_devtools.validation import assert_valid, require_shared_schemas, validate_manifest
from modelfleet_devtools.world import observed_object

RUNNER = SafeRunner(run_function, "compose-inference-cluster")
KUBECONFIG = {"namespace": "crossplane-system", "name": "gke-us-kubeconfig", "key": "kubeconfig"}
POOLS = [
    {
        "name": "h100",
        "nodeCount": 4,
        "gpu": {"count": 8, "memoryGiB": 80, "product": "NVIDIA-H100-80GB-HBM3"},
        "nodeSelector": {"cloud.google.com/gke-nodepool": "h100"},
    }
]


def cluster(storage: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"connection": {"kubeconfigSecretRef": KUBECONFIG}, "nodePools": POOLS}
    if storage is not None:
        spec["storage"] = storage
    spec.update(extra)
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "gke-us"},
        "spec": spec,
    }


def run(xr, observed=None, required=None):
    return RUNNER.run(run_function_request(xr, observed=observed, required=required))


def observed_done(composed: dict[str, Any]) -> dict[str, Any]:
    """Everything composed as observed once done: each Object Ready, the Namespace Active."""
    return {
        key: observed_object(
            obj, remote_status={"phase": "Active"} if key == NAMESPACE else None, ready=True
        )
        if "forProvider" in obj.get("spec", {})
        else obj
        for key, obj in composed.items()
    }


def composed_once_connected(xr, required=None) -> dict[str, Any]:
    """Everything the cluster composes: the first reconcile composes all but the hydrator's
    access, which follows once its Namespace is observed Active."""
    first = desired_resources(run(xr, required=required))
    return desired_resources(run(xr, observed_done(first), required=required))


def manifest(rsp, key):
    return desired_resources(rsp)[key]["spec"]["forProvider"]["manifest"]


def cond(rsp, typ):
    c = conditions(rsp)[typ]
    return (c.status == fnv1.STATUS_CONDITION_TRUE, c.reason)


PROVISIONERS = [
    (
        "GCP Filestore",
        {
            "provisioner": "GCPFilestore",
            "gcpFilestore": {"network": "my-vpc", "tier": "ENTERPRISE"},
        },
        "filestore.csi.storage.gke.io",
        {"network": "my-vpc", "tier": "ENTERPRISE"},
    ),
    (
        "AWS EFS",
        {"provisioner": "AWSEFS", "awsEFS": {"fileSystemId": "fs-0123"}},
        "efs.csi.aws.com",
        {"provisioningMode": "efs-ap", "fileSystemId": "fs-0123", "directoryPerms": "775"},
    ),
    (
        "Azure Files",
        {"provisioner": "AzureFiles", "azureFiles": {"skuName": "Premium_LRS"}},
        "file.csi.azure.com",
        {"skuName": "Premium_LRS", "protocol": "nfs"},
    ),
    (
        "NFS",
        {"provisioner": "NFS", "nfs": {"server": "10.0.0.2", "share": "/exports"}},
        "nfs.csi.k8s.io",
        {"server": "10.0.0.2", "share": "/exports"},
    ),
]


@pytest.mark.parametrize(
    ("managed", "driver", "parameters"),
    [p[1:] for p in PROVISIONERS],
    ids=[p[0] for p in PROVISIONERS],
)
def test_managed_storage_class_per_provisioner(managed, driver, parameters):
    xr = cluster({"managed": managed})
    rsp = run(xr)
    sc = manifest(rsp, STORAGE)
    assert (sc["kind"], sc["provisioner"], sc["parameters"]) == ("StorageClass", driver, parameters)
    # Nothing observed yet: no status ahead of reality.
    status = desired_status(rsp)
    assert "providerConfigName" not in status and "workloadNamespace" not in status
    assert status["storage"]["ready"] is False
    # Its own provider config is being created: progress, not a missing one.
    assert cond(rsp, "Connected") == (False, "Connecting")
    assert cond(rsp, "StorageReady") == (False, "Creating")

    # The provider config exists, the namespace is Active and the class was created.
    composed = composed_once_connected(xr)
    observed = {
        PROVIDER_CONFIG: composed[PROVIDER_CONFIG],
        NAMESPACE: observed_object(
            composed[NAMESPACE], remote_status={"phase": "Active"}, ready=True
        ),
        STORAGE: observed_object(composed[STORAGE], ready=True),
    } | {key: observed_object(composed[key], ready=True) for key in HYDRATOR_ACCESS}
    rsp = run(xr, observed)
    status = desired_status(rsp)
    assert status["providerConfigName"] == "gke-us"
    assert status["workloadNamespace"] == "modelfleet"
    assert status["hydratorServiceAccount"] == "modelfleet-hydrator"
    assert status["storage"] == {
        "storageClassName": "modelfleet-rwx",
        "accessMode": "ReadWriteMany",
        "ready": True,
    }
    assert cond(rsp, "Connected") == (True, "Available")
    assert cond(rsp, "StorageReady") == (True, "Available")
    assert rsp.desired.composite.ready == fnv1.READY_TRUE
    view = read_cluster(
        {
            "metadata": {"name": "gke-us"},
            "status": status | {"conditions": [{"type": "Connected", "status": "True"}]},
        }
    )
    assert view.reachable and view.has_shared_storage
    assert [p.gpu_count for p in view.node_pools] == [8]


def test_existing_class_is_observed_only_and_reported_missing():
    xr = cluster({"storageClassName": "filestore-rwx"})
    rsp = run(xr)
    obj = desired_resources(rsp)[STORAGE]
    assert obj["spec"]["managementPolicies"] == ["Observe"]
    missing = observed_object(
        obj, synced_error='storageclasses.storage.k8s.io "filestore-rwx" not found'
    )
    missing["status"]["atProvider"] = {}
    rsp = run(xr, {STORAGE: missing})
    assert cond(rsp, "StorageReady") == (False, "StorageClassNotFound")
    assert "filestore-rwx" in conditions(rsp)["StorageReady"].message

    found = observed_object(obj, ready=True)
    found["status"]["atProvider"]["manifest"]["provisioner"] = "filestore.csi.storage.gke.io"
    rsp = run(xr, {STORAGE: found})
    assert cond(rsp, "StorageReady") == (True, "Available")
    assert desired_status(rsp)["storage"]["storageClassName"] == "filestore-rwx"


def test_no_storage_is_valid_and_said_so():
    rsp = run(cluster(None))
    assert STORAGE not in desired_resources(rsp)
    assert cond(rsp, "StorageReady") == (True, "NotConfigured")
    assert "storage" not in desired_status(rsp)


def test_named_provider_config_is_reported_only_once_it_exists():
    xr = cluster(None, connection={"providerConfigName": "gke-us-pc"})
    first = run(xr)
    assert set(first.requirements.resources) == {NAMED_PROVIDER_CONFIG}
    assert PROVIDER_CONFIG not in desired_resources(first)
    absent = run(xr, required={NAMED_PROVIDER_CONFIG: []})
    assert "providerConfigName" not in desired_status(absent)
    assert cond(absent, "Connected") == (False, "ProviderConfigNotFound")
    # Crossplane reads the provider config, not watches it: look again within seconds.
    assert absent.meta.ttl.ToTimedelta() < timedelta(minutes=1)
    present = run(xr, required={NAMED_PROVIDER_CONFIG: [{"metadata": {"name": "gke-us-pc"}}]})
    assert desired_status(present)["providerConfigName"] == "gke-us-pc"
    assert manifest(present, NAMESPACE)["kind"] == "Namespace"
    assert present.meta.ttl.ToTimedelta() == timedelta(minutes=1)


def test_leaderworkerset_release_and_condition():
    xr = cluster(None, leaderWorkerSet={"install": True, "version": "0.10.0"})
    rsp = run(xr)
    release = desired_resources(rsp)[LWS]
    assert release["spec"]["forProvider"]["chart"]["version"] == "0.10.0"
    assert cond(rsp, "LeaderWorkerSetReady") == (False, "Installing")
    rsp = run(xr, {LWS: observed_object(release, ready=True)})
    assert cond(rsp, "LeaderWorkerSetReady") == (True, "Installed")


def test_namespaced_objects_live_in_crossplane_system():
    xr = cluster({"managed": PROVISIONERS[0][1]}, leaderWorkerSet={"install": True})
    for key, obj in composed_once_connected(xr).items():
        if key != PROVIDER_CONFIG and obj["kind"] != "ClusterProviderConfig":
            assert obj["metadata"]["namespace"] == "crossplane-system", key


@pytest.mark.parametrize(
    ("name", "mutate", "why"),
    [
        (
            "both connection fields",
            lambda s: s["connection"].update(providerConfigName="x"),
            "exactly one",
        ),
        ("duplicate pool names", lambda s: s["nodePools"].append(dict(POOLS[0])), "unique"),
        ("negative node count", lambda s: s["nodePools"][0].update(nodeCount=-1), "nodeCount"),
    ],
)
def test_bad_spec_keeps_what_was_composed_and_says_why(name, mutate, why):
    good = cluster({"managed": PROVISIONERS[0][1]})
    composed = composed_once_connected(good)
    bad = cluster({"managed": PROVISIONERS[0][1]})
    bad["spec"]["nodePools"] = [dict(p) for p in POOLS]
    mutate(bad["spec"])
    rsp = run(bad, composed)
    assert set(desired_resources(rsp)) == set(composed)
    c = conditions(rsp)["Connected"]
    assert c.reason == "InvalidSpec" and why in c.message
    assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_every_composed_manifest_is_valid():
    require_shared_schemas()
    for _, managed, _, _ in PROVISIONERS:
        xr = cluster({"managed": managed}, leaderWorkerSet={"install": True})
        for obj in composed_once_connected(xr).values():
            meta = {"name": "x", **obj.get("metadata", {})}
            assert_valid(obj | {"metadata": meta})


def test_observe_only_class_and_named_connection_are_valid():
    """With a named provider config and an existing class, every composed object validates;
    the Observe-only StorageClass carries only its identity, by design (the provider reads
    the class, it never writes one), which is all an Observe-only manifest is held to."""
    require_shared_schemas()
    xr = cluster(
        {"storageClassName": "filestore-rwx"},
        connection={"providerConfigName": "gke-us-pc"},
        leaderWorkerSet={"install": True},
    )
    composed = composed_once_connected(
        xr, required={NAMED_PROVIDER_CONFIG: [{"metadata": {"name": "gke-us-pc"}}]}
    )
    assert set(composed) == {NAMESPACE, STORAGE, LWS, *HYDRATOR_ACCESS}
    for key, obj in composed.items():
        errors = validate_manifest(obj | {"metadata": {"name": "x", **obj["metadata"]}})
        assert errors == [], key
        if key == STORAGE:
            assert obj["spec"]["managementPolicies"] == ["Observe"]
            assert "provisioner" not in obj["spec"]["forProvider"]["manifest"]
            nameless = obj["spec"]["forProvider"]["manifest"] | {"metadata": {}}
            broken = obj | {"spec": obj["spec"] | {"forProvider": {"manifest": nameless}}}
            assert ["metadata.name" in e for e in validate_manifest(broken)] == [True]
    # provider-helm is reached through its own ClusterProviderConfig of the same name.
    assert composed[LWS]["spec"]["providerConfigRef"]["name"] == "gke-us-pc"


@pytest.mark.parametrize(
    ("connected_before", "connected_now"),
    [
        pytest.param("True", True, id="connected: consumers keep acting on it"),
        pytest.param("False", False, id="not connected yet"),
        pytest.param(None, False, id="first call: nothing reported yet"),
    ],
)
def test_unresolved_provider_config_keeps_everything_and_says_what_is_awaited(
    connected_before, connected_now
):
    xr = cluster({"managed": PROVISIONERS[3][1]}, connection={"providerConfigName": "gke-us-pc"})
    found = {NAMED_PROVIDER_CONFIG: [{"metadata": {"name": "gke-us-pc"}}]}
    composed = desired_resources(run(xr, required=found)) if connected_before else {}
    if connected_before:
        xr["status"] = {
            "providerConfigName": "gke-us-pc",
            "workloadNamespace": "modelfleet",
            "conditions": [
                {"type": "Connected", "status": connected_before, "reason": "Available"}
            ],
        }
    rsp = run(xr, composed)  # Crossplane has not resolved the requirement in this call
    assert set(desired_resources(rsp)) == set(composed)
    assert desired_status(rsp).get("workloadNamespace") == (
        "modelfleet" if connected_before else None
    )
    assert rsp.desired.composite.ready == fnv1.READY_FALSE
    assert cond(rsp, "Connected") == (connected_now, "Resolving")
    message = conditions(rsp)["Connected"].message
    assert message == (
        "waiting for Crossplane to resolve ClusterProviderConfig gke-us-pc; "
        "everything composed before is kept as it is"
    )
    assert events(rsp) == [("Normal", f"Connected Resolving: {message}")]


def test_leaderworkerset_default_version_is_named_in_the_condition():
    xr = cluster(None, leaderWorkerSet={"install": True})
    rsp = run(xr)
    release = desired_resources(rsp)[LWS]
    chart = release["spec"]["forProvider"]["chart"]
    assert (chart["name"], chart["version"]) == ("lws", "0.10.0")
    assert release["spec"]["forProvider"]["namespace"] == "lws-system"
    rsp = run(xr, {LWS: observed_object(release, ready=True)})
    assert "0.10.0" in conditions(rsp)["LeaderWorkerSetReady"].message
    failing = observed_object(release, ready=False, synced_error="chart not found")
    rsp = run(xr, {LWS: failing})
    assert cond(rsp, "LeaderWorkerSetReady") == (False, "Unavailable")
    assert "0.10.0: chart not found" in conditions(rsp)["LeaderWorkerSetReady"].message
    assert LWS in desired_resources(rsp)


def test_node_pools_are_reported_for_the_scheduler():
    rsp = run(cluster(None))
    pools = desired_status(rsp)["nodePools"]
    assert [
        (p["name"], p["nodeCount"], p["gpu"]["count"], p["gpu"]["memoryGiB"]) for p in pools
    ] == [("h100", 4, 8, 80)]
    assert pools[0]["nodeSelector"] == {"cloud.google.com/gke-nodepool": "h100"}


@pytest.mark.parametrize(
    ("xr", "required", "provider_config"),
    [
        pytest.param(
            cluster({"managed": PROVISIONERS[0][1]}, leaderWorkerSet={"install": True}),
            None,
            "gke-us",
            id="kubeconfig Secret, managed class, LWS",
        ),
        pytest.param(
            cluster(
                {"storageClassName": "filestore-rwx"},
                connection={"providerConfigName": "gke-us-pc"},
                leaderWorkerSet={"install": True},
            ),
            {NAMED_PROVIDER_CONFIG: [{"metadata": {"name": "gke-us-pc"}}]},
            "gke-us-pc",
            id="named provider config, existing class, LWS",
        ),
    ],
)
def test_every_composed_object_is_labelled_and_objects_reach_the_cluster_by_its_config(
    xr, required, provider_config
):
    """SPEC §2: `modelfleet.io/inferencecluster: <name>` on everything composed (no namespace
    label: the XR is cluster-scoped); workload-cluster resources are provider-kubernetes
    Objects through the cluster's ClusterProviderConfig, the Namespace ready once Active."""
    composed = composed_once_connected(xr, required=required)
    assert set(HYDRATOR_ACCESS) <= set(composed)
    for key, obj in composed.items():
        assert obj["metadata"]["labels"] == {"modelfleet.io/inferencecluster": "gke-us"}, key
        if obj["kind"] != "Object":
            continue
        assert obj["apiVersion"] == "kubernetes.m.crossplane.io/v1alpha1", key
        assert obj["spec"]["providerConfigRef"] == {
            "kind": "ClusterProviderConfig",
            "name": provider_config,
        }, key
        remote = obj["spec"]["forProvider"]["manifest"]
        if obj["spec"].get("managementPolicies") != ["Observe"]:
            assert remote["metadata"]["labels"] == obj["metadata"]["labels"], key
    assert composed[NAMESPACE]["spec"]["readiness"] == {
        "policy": "DeriveFromCelQuery",
        "celQuery": "object.status.phase == 'Active'",
    }
