"""Deciding what an InferenceCluster composes and reports, from plain data.

Status is written only from what was observed: the provider config name once the config
exists, the workload namespace once the Namespace is Active on the cluster, the hydrator's
ServiceAccount once it, its Role and its RoleBinding exist there, storage `ready`
once the class is there (before that, the class it waits for with `ready: false`, which every
consumer reads as no shared storage yet), a declared Gateway's address once it is
Programmed. Consumers (cache, scheduler, replica) act on the status, so reporting ahead of
reality would send them to a cluster that cannot take work yet.
"""

from datetime import datetime
from typing import Any

from modelfleet_contracts.clusters import RWX
from modelfleet_contracts.conditions import Status, previous_condition
from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.hydration import HYDRATOR_SERVICE_ACCOUNT
from modelfleet_contracts.models.inferencecluster import (
    InferenceClusterSpec,
    LeaderWorkerSet,
    Storage,
)
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.provider_errors import provider_config_absent, remote_absent
from modelfleet_contracts.recheck import RESPONSIVE, breaker_holds_events
from modelfleet_contracts.spec import InvalidSpec, filled, parse_spec

from compose_inference_cluster import manifests as m
from compose_inference_cluster.gateway import GATEWAY, gateway_object, gateway_status
from compose_inference_cluster.hydrator_access import HYDRATOR_ACCESS, hydrator_access_objects
from compose_inference_cluster.reconnect import RETRY_ANNOTATION, retry_mark, retry_pace

PROVIDER_CONFIG = "provider-config"
HELM_PROVIDER_CONFIG = "helm-provider-config"
NAMESPACE = "workload-namespace"
STORAGE = "storage-class"
LWS = "leaderworkerset"

# Connected False while what the function composed comes up (a Normal event, see status.py).
CONNECTING = "Connecting"
# Connected False on the provider's error: the cluster cannot be reached, or refuses.
UNAVAILABLE = "Unavailable"


def spec_problem(spec: InferenceClusterSpec) -> str | None:
    """What the schema alone does not catch (its CEL rules), in words; None when valid."""
    connection = spec.connection
    if bool(connection.providerConfigName) == bool(connection.kubeconfigSecretRef):
        return "set exactly one of connection.providerConfigName and kubeconfigSecretRef"
    names = [p.name for p in spec.nodePools or []]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        return f"nodePools names must be unique; repeated: {', '.join(duplicates)}"
    unsized = [p.name for p in spec.nodePools or [] if p.gpu.count and not p.gpu.memoryGiB]
    if unsized:
        return f"gpu.memoryGiB is required when gpu.count is above 0 (node pool {unsized[0]})"
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
    now: datetime,
) -> Outcome:
    """`named_provider_config`: the ClusterProviderConfig named by
    connection.providerConfigName as Crossplane resolved it (None: not resolved yet). `now`
    paces the retries of a cluster that cannot be reached (reconnect.py)."""
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

    ns_obj = observed.get(NAMESPACE)
    connected = pc_exists and ns_obj is not None and ns_obj.ready
    connected_cond = _connected(spec, pc_name, pc_exists, namespace, ns_obj)
    out.conditions.append(connected_cond)
    check_interval = filled(connection.checkInterval)
    namespace_obj = m.namespace_object(name, pc_name, namespace, check_interval)
    if connected_cond.reason == UNAVAILABLE:
        # The provider retries a failing Object only as its error backoff allows (up to a
        # minute): ask it again once per check interval instead (reconnect.py).
        out.recheck_in = retry_pace(check_interval)
        namespace_obj["metadata"]["annotations"][RETRY_ANNOTATION] = retry_mark(out.recheck_in, now)
    elif breaker_holds_events(previous_condition(xr, RESPONSIVE), now):
        # Crossplane drops the XR's events while its circuit breaker is open (minutes after a
        # burst, such as its creation), the Namespace Object failing among them: look at it
        # once per check rather than at the minute, so a loss shows within the same bound.
        out.recheck_in = retry_pace(check_interval)
    out.desired[NAMESPACE] = namespace_obj
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
    if connected or any(key in observed for key in HYDRATOR_ACCESS):
        # Not before the Namespace is Active: provider-kubernetes would try to create them in a
        # namespace the cluster does not have yet (`namespaces "..." not found`, Warning events
        # and error backoff). Once composed, always composed: Crossplane deletes what a
        # function leaves out, so a cluster that loses its connection keeps them.
        out.desired.update(hydrator_access_objects(name, pc_name, namespace))
    hydrator_ready = connected and all(
        (obj := observed.get(key)) is not None and obj.ready for key in HYDRATOR_ACCESS
    )
    if hydrator_ready:
        # Caches start hydration Jobs under it only once it is there: a Job whose account
        # does not exist gets no pod, and one whose Role is missing cannot report progress.
        status["hydratorServiceAccount"] = HYDRATOR_SERVICE_ACCOUNT

    storage_cond = _compose_storage(spec, name, pc_name, observed, out, status)
    out.conditions.append(storage_cond)
    lws_ready = _compose_lws(spec, name, pc_name, observed, out)
    gateway_ready = True
    if spec.gatewayRef:
        gateway_namespace = spec.gatewayRef.namespace or namespace
        out.desired[GATEWAY] = gateway_object(name, pc_name, spec.gatewayRef, gateway_namespace)
        status["gateway"], gateway_cond = gateway_status(
            spec.gatewayRef, gateway_namespace, observed.get(GATEWAY), spec.inferenceExtension
        )
        out.conditions.append(gateway_cond)
        gateway_ready = gateway_cond.status
    out.status = status
    out.ready = connected and hydrator_ready and storage_cond.status and lws_ready and gateway_ready
    # A named ClusterProviderConfig is read, not watched: look again soon until it exists.
    out.recheck_soon = not pc_exists and not connection.kubeconfigSecretRef
    out.settled = out.ready and not out.recheck_soon
    return out


def _provider_error(obj: ObservedObject | None, pc_name: str) -> str:
    """The provider's error on a composed Object, unless it only says that the provider config
    did not exist when it last tried: it retries once it does, and `Connected` says whether it
    does (waiting for the function's own composition is progress, not a fault)."""
    failing = obj.failure_message if obj is not None else ""
    return "" if provider_config_absent(failing, pc_name) else failing


def _connected(
    spec: InferenceClusterSpec,
    pc_name: str,
    pc_exists: bool,
    namespace: str,
    ns_obj: ObservedObject | None,
) -> Status:
    failing = _provider_error(ns_obj, pc_name) if pc_exists else ""
    if pc_exists and ns_obj is not None and ns_obj.ready and not failing:
        return Status.true(
            "Connected", "Available", f"namespace {namespace} is Active via {pc_name}"
        )
    secret_ref = spec.connection.kubeconfigSecretRef
    if not pc_exists and secret_ref:
        # Composed in this very call from the kubeconfig Secret: Crossplane creates it next.
        return Status.false(
            "Connected",
            CONNECTING,
            f"creating ClusterProviderConfig {pc_name} from Secret "
            f"{secret_ref.namespace}/{secret_ref.name}",
        )
    if not pc_exists:
        # The user named it: only they can create it.
        return Status.false(
            "Connected",
            "ProviderConfigNotFound",
            f"ClusterProviderConfig {pc_name} does not exist: create it, or check "
            "spec.connection.providerConfigName",
        )
    where = f"namespace {namespace} via {pc_name}"
    if failing:
        # provider-kubernetes leaves the Object Ready as last observed when it cannot reach
        # the cluster (only Synced turns False): its error is what says the connection is lost.
        seen = " (last seen Active)" if ns_obj is not None and ns_obj.ready else ""
        return Status.false("Connected", UNAVAILABLE, f"{where}{seen}: {failing}")
    stale = ns_obj.failure_message if ns_obj is not None else ""
    waiting = f"{where}: waiting for it to become Active"
    if stale:
        waiting += f" (provider-kubernetes last tried before {pc_name} existed: {stale})"
    return Status.false("Connected", CONNECTING, waiting)


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
    failing = _provider_error(obj, pc_name)
    if storage.storageClassName:
        # Observe-only: the class exists once the provider has read it from the cluster, and
        # is missing only on the cluster's word; any other error is the provider's, said as is.
        exists = obj is not None and bool(obj.remote_provisioner)
        if not exists and remote_absent(failing, class_name):
            status["storage"] = rwx_status(class_name, ready=False)
            return Status.false(
                "StorageReady",
                "StorageClassNotFound",
                f"StorageClass {class_name} not found on the cluster: {failing}",
            )
        cannot = f"cannot read StorageClass {class_name} from the cluster"
    else:
        exists = obj is not None and obj.ready
        cannot = f"cannot create StorageClass {class_name} on the cluster"
    status["storage"] = rwx_status(class_name, ready=exists)
    if exists:
        return Status.true(
            "StorageReady", "Available", f"StorageClass {class_name} (ReadWriteMany)"
        )
    if failing:
        return Status.false("StorageReady", "Unavailable", f"{cannot}: {failing}")
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
    # provider-helm's error is the install's failure, unless it only predates the provider
    # config this very function composes from the kubeconfig Secret (Crossplane creates it
    # next): that is progress. A user-named one that is missing is theirs to create.
    failing = release.failure_message if release is not None else ""
    if secret_ref:
        failing = _provider_error(release, pc_name)
    if failing:
        out.conditions.append(
            Status.false(
                "LeaderWorkerSetReady",
                "Unavailable",
                f"cannot install the LeaderWorkerSet chart {version}: {failing}",
            )
        )
    else:
        out.conditions.append(
            Status.false(
                "LeaderWorkerSetReady",
                "Installing",
                f"installing the LeaderWorkerSet chart {version}",
            )
        )
    return False
