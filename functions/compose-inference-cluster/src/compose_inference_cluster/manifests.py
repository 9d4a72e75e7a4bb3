"""What an InferenceCluster composes: provider configs, the workload Namespace, the
StorageClass (or proof that a named one exists) and the LeaderWorkerSet Helm release (and
the hydrator's access in the namespace: hydrator_access.py).

The InferenceCluster is cluster-scoped, but Crossplane v2's provider-kubernetes Objects and
provider-helm Releases are namespaced, so they need a control-plane namespace of their own:
`crossplane-system` (CONTROL_PLANE_NAMESPACE). That is where the providers run and where
platform teams keep kubeconfig Secrets, it exists on every Crossplane install, and ordinary
users (who own namespaces such as ml-team) cannot touch a cluster's plumbing from there.
The ClusterProviderConfigs are cluster-scoped and carry no namespace.
"""

from typing import Any

from modelfleet_contracts.api import (
    CONTROL_PLANE_NAMESPACE,
    HELM_PROVIDER_CONFIG_API_VERSION,
    INFERENCE_CLUSTER,
    OBJECT_API_VERSION,
    PROVIDER_CONFIG_KIND,
    RELEASE_API_VERSION,
    RELEASE_KIND,
)
from modelfleet_contracts.labels import owner_labels
from modelfleet_contracts.models.inferencecluster import (
    AzureFiles,
    GcpFilestore,
    KubeconfigSecretRef,
    Managed,
    Storage,
)
from modelfleet_contracts.objects import NAMESPACE_ACTIVE, OBSERVE_ONLY, kubernetes_object
from modelfleet_contracts.spec import filled
from modelfleet_contracts.storage import CSI_DRIVERS

LWS_CHART = {
    "name": "lws",
    "repository": "oci://registry.k8s.io/lws/charts",
}
LWS_NAMESPACE = "lws-system"


def storage_class_name(cluster: str, storage: Storage) -> str:
    """The class caches use: the named one, or `modelfleet-rwx` for a managed one."""
    return storage.storageClassName or "modelfleet-rwx"


def missing_csi_block(managed: Managed) -> str | None:
    """Why `managed` cannot be composed: a provisioner whose required block is absent."""
    if managed.provisioner == "AWSEFS" and managed.awsEFS is None:
        return "provisioner AWSEFS requires awsEFS"
    if managed.provisioner == "NFS" and managed.nfs is None:
        return "provisioner NFS requires nfs"
    return None


def csi_parameters(managed: Managed) -> dict[str, str]:
    """The StorageClass parameters of a managed class (`missing_csi_block` is None).
    Enum values are written as the plain strings they stand for."""
    provisioner = managed.provisioner
    if provisioner == "GCPFilestore":
        gcp = managed.gcpFilestore or GcpFilestore()
        params = {"tier": str(filled(gcp.tier)), "network": gcp.network or ""}
        return {k: v for k, v in params.items() if v}
    if provisioner == "AWSEFS" and managed.awsEFS is not None:
        # Access-point provisioning: one directory per PVC on an existing file system.
        return {
            "provisioningMode": "efs-ap",
            "fileSystemId": managed.awsEFS.fileSystemId,
            "directoryPerms": "775",
        }
    if provisioner == "AzureFiles":
        azure = managed.azureFiles or AzureFiles()
        # NFS shares need a Premium SKU; NFS avoids SMB's permission mapping for model files.
        return {"skuName": str(filled(azure.skuName)), "protocol": "nfs"}
    if provisioner == "NFS" and managed.nfs is not None:
        return {"server": managed.nfs.server, "share": managed.nfs.share}
    raise ValueError(missing_csi_block(managed) or f"unknown provisioner {provisioner}")


def provider_config(name: str, secret_ref: KubeconfigSecretRef, api_version: str) -> dict[str, Any]:
    """A ClusterProviderConfig whose credentials are the kubeconfig Secret (read by the
    provider on the control plane, never by this function)."""
    return {
        "apiVersion": api_version,
        "kind": PROVIDER_CONFIG_KIND,
        "metadata": {"name": name, "labels": owner_labels(INFERENCE_CLUSTER, name)},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "namespace": secret_ref.namespace,
                    "name": secret_ref.name,
                    "key": filled(secret_ref.key),
                },
            }
        },
    }


def kubernetes_provider_config(name: str, secret_ref: KubeconfigSecretRef) -> dict[str, Any]:
    return provider_config(name, secret_ref, OBJECT_API_VERSION)


def helm_provider_config(name: str, secret_ref: KubeconfigSecretRef) -> dict[str, Any]:
    return provider_config(name, secret_ref, HELM_PROVIDER_CONFIG_API_VERSION)


def namespace_object(
    cluster: str, provider_config_name: str, namespace: str, check_interval: str
) -> dict[str, Any]:
    """The workload Namespace, and the one Object of a cluster that is observed often
    (`check_interval`): provider-kubernetes notices a cluster it cannot reach only when it next
    observes one of its Objects, and the Namespace is the one every other composed object needs,
    so its Object failing is what `Connected` reads."""
    labels = owner_labels(INFERENCE_CLUSTER, cluster)
    manifest = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": namespace, "labels": labels},
    }
    return kubernetes_object(
        manifest,
        provider_config_name,
        labels=labels,
        readiness_query=NAMESPACE_ACTIVE,
        namespace=CONTROL_PLANE_NAMESPACE,
        poll_interval=check_interval,
    )


def storage_object(cluster: str, provider_config_name: str, storage: Storage) -> dict[str, Any]:
    """A managed StorageClass, or an Observe-only Object proving the named one exists."""
    labels = owner_labels(INFERENCE_CLUSTER, cluster)
    name = storage_class_name(cluster, storage)
    manifest: dict[str, Any]
    if storage.storageClassName or storage.managed is None:
        manifest = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
        }
        return kubernetes_object(
            manifest,
            provider_config_name,
            labels=labels,
            management_policies=OBSERVE_ONLY,
            namespace=CONTROL_PLANE_NAMESPACE,
        )
    managed = storage.managed
    manifest = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "labels": labels},
        "provisioner": CSI_DRIVERS[managed.provisioner],
        "parameters": csi_parameters(managed),
        # Weights are expensive to fetch again: a deleted claim keeps its volume.
        "reclaimPolicy": "Retain",
        "allowVolumeExpansion": True,
        "volumeBindingMode": "Immediate",
    }
    return kubernetes_object(
        manifest, provider_config_name, labels=labels, namespace=CONTROL_PLANE_NAMESPACE
    )


def lws_release(cluster: str, provider_config_name: str, version: str) -> dict[str, Any]:
    return {
        "apiVersion": RELEASE_API_VERSION,
        "kind": RELEASE_KIND,
        "metadata": {
            "namespace": CONTROL_PLANE_NAMESPACE,
            "labels": owner_labels(INFERENCE_CLUSTER, cluster),
        },
        "spec": {
            "providerConfigRef": {"kind": PROVIDER_CONFIG_KIND, "name": provider_config_name},
            "forProvider": {
                "chart": {**LWS_CHART, "version": version},
                "namespace": LWS_NAMESPACE,
                "wait": True,
            },
        },
    }
