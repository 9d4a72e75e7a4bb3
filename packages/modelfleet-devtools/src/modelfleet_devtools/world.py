"""Builders for the observed world in tests: InferenceClusters as compose-inference-cluster
reports them, and composed Objects as provider-kubernetes reports them."""

import copy
from typing import Any

from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER, OBJECT_KIND
from modelfleet_contracts.hydration import HYDRATOR_SERVICE_ACCOUNT

H100 = {
    "name": "h100",
    "nodeCount": 4,
    "gpu": {"count": 8, "memoryGiB": 80, "product": "NVIDIA-H100-80GB-HBM3"},
    "nodeSelector": {"cloud.google.com/gke-nodepool": "h100"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
}


def inference_cluster(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    connected: bool = True,
    storage_class: str | None = "filestore-rwx",
    storage_ready: bool = True,
    node_pools: list[dict[str, Any]] | None = None,
    workload_namespace: str = "modelfleet",
    hydrator_access: bool = True,
) -> dict[str, Any]:
    """An InferenceCluster with the status compose-inference-cluster writes once observed;
    `hydrator_access=False`: the hydrator's ServiceAccount not observed yet (or a cluster
    registered by a release before it was composed)."""
    status: dict[str, Any] = {
        "conditions": [
            {
                "type": "Connected",
                "status": "True" if connected else "False",
                "reason": "Available" if connected else "Unavailable",
            }
        ],
        "nodePools": copy.deepcopy(node_pools if node_pools is not None else [H100]),
    }
    if connected:
        status["providerConfigName"] = name
        status["workloadNamespace"] = workload_namespace
        if hydrator_access:
            status["hydratorServiceAccount"] = HYDRATOR_SERVICE_ACCOUNT
    if storage_class:
        status["storage"] = {
            "storageClassName": storage_class,
            "accessMode": "ReadWriteMany",
            "ready": storage_ready,
        }
    spec: dict[str, Any] = {"connection": {"providerConfigName": name}}
    if storage_class:
        spec["storage"] = {"storageClassName": storage_class}
    return {
        "apiVersion": API_VERSION,
        "kind": INFERENCE_CLUSTER,
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
        "status": status,
    }


def observed_object(
    desired: dict[str, Any],
    *,
    remote_status: dict[str, Any] | None = None,
    ready: bool | None = None,
    synced_error: str | None = None,
) -> dict[str, Any]:
    """A composed Object as observed: its remote manifest echoed in status.atProvider with
    the remote object's status, and the managed resource's Ready/Synced conditions."""
    obj = copy.deepcopy(desired)
    manifest = copy.deepcopy(obj.get("spec", {}).get("forProvider", {}).get("manifest", {}))
    if remote_status is not None:
        manifest["status"] = remote_status
    conditions = [
        {
            "type": "Synced",
            "status": "False" if synced_error else "True",
            "reason": "ReconcileError" if synced_error else "ReconcileSuccess",
            **({"message": synced_error} if synced_error else {}),
        }
    ]
    if ready is not None:
        conditions.append(
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "reason": "Available" if ready else "Unavailable",
            }
        )
    obj["status"] = {"atProvider": {"manifest": manifest}, "conditions": conditions}
    return obj


def ready_model_cache(
    clusters: list[str], *, name: str = "kimi-k2", namespace: str = "ml-team"
) -> dict[str, Any]:
    """A ModelCache whose weights are Ready on every one of `clusters`, with the status
    compose-model-cache writes (one row per cluster: claim, path and fingerprint)."""
    fingerprint = "5e6f7a8b9c0d"
    return {
        "apiVersion": API_VERSION,
        "kind": "ModelCache",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"source": "HuggingFace", "huggingFace": {"repo": "moonshotai/Kimi-K2-Instruct"}},
        "status": {
            "summary": {"ready": f"{len(clusters)}/{len(clusters)}"},
            "clusters": [
                {
                    "name": cluster,
                    "phase": "Ready",
                    "claimName": f"modelcache-{namespace}-{name}-1a2b3",
                    "path": fingerprint,
                    "fingerprint": fingerprint,
                }
                for cluster in clusters
            ],
        },
    }


def observed_as(desired: dict[str, Any], ready: bool | None) -> dict[str, Any]:
    """A desired composed resource as Crossplane observes it next: an Object with its remote
    manifest echoed, any other kind (a provider config, a Release, a Usage, a ModelReplica)
    as it is; with its own Ready condition True or False, or none yet when `ready` is None."""
    if desired.get("kind") == OBJECT_KIND:
        return observed_object(desired, ready=ready)
    obj = copy.deepcopy(desired)
    conditions = []
    if ready is not None:
        conditions.append(
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "reason": "Available" if ready else "Creating",
            }
        )
    obj["status"] = {"conditions": conditions}
    return obj


# A composed resource Crossplane has not observed (not created yet, or not read this time).
NOT_OBSERVED = "not observed"


def observed_in_states(
    composed: dict[str, dict[str, Any]],
    states: dict[str, bool | str | None],
    default: bool | str | None = True,
) -> dict[str, dict[str, Any]]:
    """`composed` (a response's desired resources) as observed next, each in its state from
    `states` (else `default`): Ready True/False, None (no Ready condition yet) or
    NOT_OBSERVED (left out)."""
    observed = {}
    for name, desired in composed.items():
        state = states.get(name, default)
        if state != NOT_OBSERVED:
            observed[name] = observed_as(desired, None if state is None else bool(state))
    return observed
