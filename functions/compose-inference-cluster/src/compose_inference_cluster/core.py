"""Deciding what an InferenceCluster composes and reports, from plain data.

Status is written only from what was observed: the provider config name once the config
exists, the workload namespace once the Namespace is Active on the cluster, storage once the
class is there. Consumers (cache, scheduler, replica) act on the status, so reporting ahead
of reality would send them to a cluster that cannot take work yet.
"""

from typing import Any

from modelfleet_contracts.clusters import RWX
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.models.inferencecluster import (
    InferenceClusterSpec,
    LeaderWorkerSet,
    Storage,
)
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.spec import InvalidSpec, filled, parse_spec

from compose_inference_cluster import manifests as m

PROVIDER_CONFIG = "provider-config"
HELM_PROVIDER_CONFIG = "helm-provider-config"
NAMESPACE = "workload-namespace"
STORAGE = "storage-class"
LWS = "leaderworkerset"


def spec_problem(spec: InferenceClusterSpec) -> str | None:
    """What the schema alone does not catch (its CEL rules), in words; None when valid."""
    connection = spec.connection
    if bool(connection.providerConfigName) == bool(connection.kubeconfigSecretRef):
        return "set exactly one of connection.providerConfigName and kubeconfigSecretRef"
    names = [p.name for p in spec.nodePools or []]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        return f"nodePools names must be unique; repeated: {', '.join(duplicates)}"
    storage = _configured_storage(spec)
    if storage is not None and not storage.storageClassName and storage.managed is not None:
        return m.missing_csi_block(storage.managed)
    return None


def _configured_storage(spec: InferenceClusterSpec) -> Storage | None:
    """The storage block when it names a class or a managed one (an empty block: none)."""
    storage = spec.storage
    if storage is None or not (storage.storageClassName or storage.managed):
        return None
    return storage


def rwx_status(class_name: str, *, ready: bool) -> dict[str, Any]:
    return {"storageClassName": class_name, "accessMode": RWX, "ready": ready}


def compose_cluster(
    xr: dict[str, Any],
    observed: dict[str, ObservedObject],
    named_provider_config: list[dict[str, Any]] | None,
) -> Outcome:
    """`named_provider_config`: the ClusterProviderConfig named by
    connection.providerConfigName as Crossplane resolved it (None: not resolved yet)."""
    spec = parse_spec(InferenceClusterSpec, mapping_at(xr, "spec"), spec_problem)
    if isinstance(spec, InvalidSpec):
        return Outcome.held(Status.false("Connected", "InvalidSpec", spec.message))
    name = str(mapping_at(xr, "metadata").get("name", ""))
    connection = spec.connection
    namespace = filled(spec.workloadNamespace)
    out = Outcome()

    if connection.kubeconfigSecretRef:
        pc_name = name
        out.desired[PROVIDER_CONFIG] = m.kubernetes_provider_config(
            name, connection.kubeconfigSecretRef
        )
        pc_exists = PROVIDER_CONFIG in observed
    else:
        pc_name = connection.providerConfigName or ""
        if named_provider_config is None:
            # Crossplane has not looked the provider config up yet: keep everything, and
            # Connected's status (consumers act on it), rather than guess.
            return Outcome.resolving(xr, "Connected", f"ClusterProviderConfig {pc_name}")
        pc_exists = bool(named_provider_config)

    out.desired[NAMESPACE] = m.namespace_object(name, pc_name, namespace)
    ns_obj = observed.get(NAMESPACE)
    connected = pc_exists and ns_obj is not None and ns_obj.ready
    status: dict[str, Any] = {
        "nodePools": [
            p.model_dump(mode="json", exclude_none=True, warnings=False)
            for p in spec.nodePools or []
        ]
    }
    if pc_exists:
        status["providerConfigName"] = pc_name
    if connected:
        status["workloadNamespace"] = namespace
        connected_cond = Status.true(
            "Connected", "Available", f"namespace {namespace} is Active via {pc_name}"
        )
    elif not pc_exists:
        connected_cond = Status.false(
            "Connected",
            "ProviderConfigNotFound",
            f"ClusterProviderConfig {pc_name} does not exist yet",
        )
    else:
        failing = ns_obj.failure_message if ns_obj is not None else ""
        detail = failing or "waiting for it to become Active"
        connected_cond = Status.false(
            "Connected", "Unavailable", f"namespace {namespace} via {pc_name}: {detail}"
        )
    out.conditions.append(connected_cond)

    storage_cond = _compose_storage(spec, name, pc_name, observed, out, status)
    out.conditions.append(storage_cond)
    lws_ready = _compose_lws(spec, name, pc_name, observed, out)
    out.status = status
    out.ready = connected and storage_cond.status and lws_ready
    return out


def _compose_storage(
    spec: InferenceClusterSpec,
    name: str,
    pc_name: str,
    observed: dict[str, ObservedObject],
    out: Outcome,
    status: dict[str, Any],
) -> Status:
    storage = _configured_storage(spec)
    if storage is None:
        return Status.true(
            "StorageReady",
            "NotConfigured",
            "no shared storage: single-node serving only; no model caches or multi-node groups",
        )
    class_name = m.storage_class_name(name, storage)
    out.desired[STORAGE] = m.storage_object(name, pc_name, storage)
    obj = observed.get(STORAGE)
    if storage.storageClassName:
        # Observe-only: the class exists once the provider has read it from the cluster.
        exists = obj is not None and bool(obj.remote_provisioner)
        if obj is not None and not exists and obj.failure_message:
            status["storage"] = rwx_status(class_name, ready=False)
            return Status.false(
                "StorageReady",
                "StorageClassNotFound",
                f"StorageClass {class_name} not found on the cluster: {obj.failure_message}",
            )
    else:
        exists = obj is not None and obj.ready
    status["storage"] = rwx_status(class_name, ready=exists)
    if exists:
        return Status.true(
            "StorageReady", "Available", f"StorageClass {class_name} (ReadWriteMany)"
        )
    return Status.false("StorageReady", "Creating", f"waiting for StorageClass {class_name}")


def _compose_lws(
    spec: InferenceClusterSpec,
    name: str,
    pc_name: str,
    observed: dict[str, ObservedObject],
    out: Outcome,
) -> bool:
    lws = spec.leaderWorkerSet or LeaderWorkerSet()
    if not lws.install:
        return True
    secret_ref = spec.connection.kubeconfigSecretRef
    if secret_ref:
        out.desired[HELM_PROVIDER_CONFIG] = m.helm_provider_config(name, secret_ref)
    version = filled(lws.version)
    out.desired[LWS] = m.lws_release(name, pc_name, version)
    release = observed.get(LWS)
    if release is not None and release.ready:
        out.conditions.append(
            Status.true("LeaderWorkerSetReady", "Installed", f"LeaderWorkerSet chart {version}")
        )
        return True
    failing = release.failure_message if release is not None else ""
    detail = failing or f"installing the LeaderWorkerSet chart {version}"
    out.conditions.append(Status.false("LeaderWorkerSetReady", "Installing", detail))
    return False
