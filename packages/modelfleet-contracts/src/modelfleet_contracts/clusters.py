"""Reading what compose-inference-cluster reports about a workload cluster.

Consumers (the cache, the scheduler, the replica) read an InferenceCluster only through
this module, and only from its observed `status` — never ahead of what was observed.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from modelfleet_contracts.conditions import condition_in
from modelfleet_contracts.fields import as_int, list_at, mapping_at

DEFAULT_WORKLOAD_NAMESPACE = "modelfleet"
RWX = "ReadWriteMany"
# What a cache or deployment waits for while Crossplane has not resolved its clusters.
SELECTED_CLUSTERS = "the InferenceClusters matching spec.clusterSelector"


@dataclass(frozen=True)
class NodePool:
    name: str
    node_count: int
    gpu_count: int
    gpu_memory_gib: int
    gpu_product: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class EndpointPicker:
    """The endpoint picker every model's InferencePool names on a cluster that runs the
    Gateway API Inference Extension: the Service `<pool name>-epp` on `port`."""

    port: int
    failure_mode: str  # FailClose or FailOpen


ENDPOINT_PICKER_SUFFIX = "-epp"
FAILURE_MODES = ("FailClose", "FailOpen")


def endpoint_picker_service(pool: str) -> str:
    """The Service a pool's endpoint picker answers behind, which the user runs."""
    return f"{pool}{ENDPOINT_PICKER_SUFFIX}"


@dataclass(frozen=True)
class GatewayView:
    """The Gateway an InferenceCluster declares (`spec.gatewayRef`), as it reports it in
    `status.gateway`: where it is, and its address once observed Programmed."""

    name: str
    namespace: str
    section_name: str | None = None
    address: str | None = None  # set only while the Gateway is Programmed with an address
    # Set where the cluster runs the Inference Extension: models route to an InferencePool.
    inference_pool: EndpointPicker | None = None
    inference_pool_declared: bool = False  # the row has `inferencePool`, readable or not


def gateway_view(raw: Any) -> GatewayView | None:
    """`status.gateway`, or None when absent or without a name and namespace."""
    if not isinstance(raw, dict):
        return None
    name, namespace = _text(raw.get("name")), _text(raw.get("namespace"))
    if not name or not namespace:
        return None
    ready = raw.get("ready") is True
    return GatewayView(
        name=name,
        namespace=namespace,
        section_name=_text(raw.get("sectionName")),
        address=_text(raw.get("address")) if ready else None,
        inference_pool=_endpoint_picker(raw.get("inferencePool")),
        inference_pool_declared=raw.get("inferencePool") is not None,
    )


def _endpoint_picker(raw: Any) -> EndpointPicker | None:
    """`status.gateway.inferencePool`, or None when absent or unreadable (a port out of
    range, an unknown failure mode)."""
    if not isinstance(raw, dict):
        return None
    port, mode = as_int(raw.get("endpointPickerPort")), raw.get("failureMode")
    if not 0 < port < 65536:
        return None
    if mode not in FAILURE_MODES:
        return None
    return EndpointPicker(port=port, failure_mode=mode)


@dataclass(frozen=True)
class ClusterView:
    """The facts about one InferenceCluster that other functions act on."""

    name: str
    labels: dict[str, str]
    provider_config_name: str | None
    workload_namespace: str | None
    connected: bool
    storage_class_name: str | None
    shared_storage_ready: bool
    node_pools: tuple[NodePool, ...] = ()
    # The ServiceAccount hydration Jobs run under there, once the cluster observed it (and
    # its Role and RoleBinding); None before.
    hydrator_service_account: str | None = None
    # The Gateway model routes are composed on (None: the cluster declares none, or reports
    # one `gateway_declared` that cannot be read).
    gateway: GatewayView | None = None
    gateway_declared: bool = False  # its status has a `gateway` row, readable or not

    @property
    def reachable(self) -> bool:
        """Objects can be composed on it: connected, with a provider config and namespace."""
        return self.connected and bool(self.provider_config_name and self.workload_namespace)

    @property
    def has_shared_storage(self) -> bool:
        """It offers ReadWriteMany storage that is ready for model caches."""
        return self.shared_storage_ready and bool(self.storage_class_name)


def _text(value: Any) -> str | None:
    """A non-empty string, or None: a status value of another type is as good as absent
    (the API server would never store it, so it must not reach a composed manifest)."""
    return value if isinstance(value, str) and value else None


def node_pool(raw: Any) -> NodePool | None:
    """One row of `status.nodePools`, or None when it has no name or is no mapping."""
    if not isinstance(raw, dict) or not _text(raw.get("name")):
        return None
    gpu = mapping_at(raw, "gpu")
    selector = mapping_at(raw, "nodeSelector")
    tolerations = list_at(raw, "tolerations")
    return NodePool(
        name=str(raw["name"]),
        node_count=as_int(raw.get("nodeCount")),
        gpu_count=as_int(gpu.get("count")),
        gpu_memory_gib=as_int(gpu.get("memoryGiB")),
        gpu_product=str(gpu.get("product") or ""),
        node_selector={str(k): v for k, v in selector.items() if isinstance(v, str)},
        tolerations=[t for t in tolerations if isinstance(t, dict)],
    )


# The reason Crossplane gives every condition a function set when the function could not be
# run (its pipeline failed: a function being upgraded, its server down), status Unknown.
CROSSPLANE_FATAL_ERROR = "FatalError"


def connected_as_reported(
    condition_status: Any, condition_reason: Any, workload_namespace: str | None
) -> bool:
    """Whether the cluster is connected, from its `Connected` condition. A condition Crossplane
    marked Unknown because compose-inference-cluster could not run says nothing new: the last
    report stands, and `status.workloadNamespace` is written only while the namespace was seen
    Active. (Read as not connected, every consumer would stop staging, report Pending and start
    moving replicas whenever the cluster's own function is briefly down, as during an upgrade.)"""
    if condition_status == "Unknown" and condition_reason == CROSSPLANE_FATAL_ERROR:
        return workload_namespace is not None
    return condition_status == "True"


def read_cluster(ic: dict[str, Any]) -> ClusterView:
    """A ClusterView from an InferenceCluster as Crossplane returns it; tolerant of any shape.

    Node pools come from `status.nodePools` (validated and reported by
    compose-inference-cluster); a pool that is malformed there is skipped.
    """
    metadata = mapping_at(ic, "metadata")
    status = mapping_at(ic, "status")
    storage = mapping_at(status, "storage")
    pools_raw = list_at(status, "nodePools")
    pools = tuple(p for p in (node_pool(r) for r in pools_raw) if p is not None)
    labels = mapping_at(metadata, "labels")
    workload_namespace = _text(status.get("workloadNamespace"))
    connection = condition_in(status, "Connected")
    return ClusterView(
        name=str(metadata.get("name") or ""),
        labels={str(k): str(v) for k, v in labels.items()},
        provider_config_name=_text(status.get("providerConfigName")),
        workload_namespace=workload_namespace,
        connected=connected_as_reported(
            connection.get("status"), connection.get("reason"), workload_namespace
        ),
        storage_class_name=_text(storage.get("storageClassName")),
        shared_storage_ready=bool(storage.get("ready")) and storage.get("accessMode") == RWX,
        node_pools=pools,
        hydrator_service_account=_text(status.get("hydratorServiceAccount")),
        gateway=gateway_view(status.get("gateway")),
        gateway_declared=status.get("gateway") is not None,
    )


def matches_selector(labels: dict[str, str], selector: dict[str, Any] | None) -> bool:
    """Kubernetes label-selector semantics (matchLabels and matchExpressions).

    An absent or empty selector matches everything: every InferenceCluster (docs/modelcache.md,
    Fields: `clusterSelector`).
    """
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key"), expr.get("operator")
        values = expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def select(clusters: Iterable[ClusterView], selector: Any) -> list[ClusterView]:
    """The named clusters `selector` matches, sorted by name.

    `selector` is an XR's `spec.clusterSelector`: a generated pydantic model, its plain
    mapping, or None. None or empty selects every cluster (`matches_selector`).
    """
    if isinstance(selector, BaseModel):
        selector = selector.model_dump(mode="json", exclude_none=True, warnings=False)
    return sorted(
        (v for v in clusters if v.name and matches_selector(v.labels, selector)),
        key=lambda v: v.name,
    )
