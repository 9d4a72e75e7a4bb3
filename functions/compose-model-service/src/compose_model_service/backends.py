"""Which backends a cluster's route sends traffic to, at what weight, and why any is held out.

A backend is routed on a cluster only while its serving group there is Ready with an address
and its ModelCache is Ready there; a weight of 0, a deployment serving another model name, or
a Service outside the cluster's workload namespace holds it out too. Each decision is read
from what the deployment and the cache report, never guessed ahead of them."""

from dataclasses import dataclass

from modelfleet_contracts.observed import StagedCache
from modelfleet_contracts.serving import parse_service_address

from compose_model_service.routes import WeightedBackend
from compose_model_service.views import DeploymentView

ROUTED = "Routed"
WEIGHT_ZERO = "WeightZero"
SERVED_NAME_MISMATCH = "ServedNameMismatch"
CACHE_NOT_FOUND = "CacheNotFound"
CACHE_NOT_READY = "CacheNotReady"
NOT_AVAILABLE = "NotAvailable"
NO_ADDRESS = "NoAddress"


@dataclass(frozen=True)
class BackendDecision:
    """One backend on one cluster: routed (`target` set) or held out, and why."""

    deployment: str
    weight: int
    reason: str
    message: str
    target: WeightedBackend | None = None

    def as_row(self) -> dict[str, object]:
        return {
            "modelDeployment": self.deployment,
            "weight": self.weight if self.target is not None else 0,
            "reason": self.reason,
            "message": self.message,
        }


def decide_backend(
    deployment: DeploymentView,
    weight: int,
    *,
    cluster: str,
    model_name: str,
    workload_namespace: str,
    caches: dict[str, StagedCache | None],
) -> BackendDecision:
    """`caches`: each referenced cache by name, None when it does not exist."""
    name = deployment.name

    def held(reason: str, message: str) -> BackendDecision:
        return BackendDecision(name, weight, reason, message)

    if weight == 0:
        return held(WEIGHT_ZERO, f"ModelDeployment {name} has weight 0")
    if deployment.served_model_name != model_name:
        served = deployment.served_model_name or "no name it reports"
        return held(
            SERVED_NAME_MISMATCH,
            f"ModelDeployment {name} serves {served!r}, not {model_name!r}: set its "
            f"spec.servedModelName to {model_name!r}",
        )
    if deployment.cache_name:
        cache = caches.get(deployment.cache_name)
        if cache is None:
            return held(CACHE_NOT_FOUND, f"ModelCache {deployment.cache_name} not found")
        phase = cache.phases.get(cluster) or "Pending"
        if phase != "Ready":
            return held(
                CACHE_NOT_READY, f"ModelCache {deployment.cache_name} is {phase} on {cluster}"
            )
    row = deployment.row(cluster)
    if row is None or row.phase != "Ready" or not row.address:
        phase = (row.phase if row else "") or "not reported"
        detail = f": {row.message}" if row and row.message else ""
        return held(NOT_AVAILABLE, f"ModelDeployment {name} is {phase} on {cluster}{detail}")
    service = parse_service_address(row.address)
    if service is None or service.namespace != workload_namespace:
        return held(
            NO_ADDRESS,
            f"ModelDeployment {name} reports an address on {cluster} that names no Service "
            f"in the workload namespace {workload_namespace}: {row.address!r}",
        )
    target = WeightedBackend(service.service, service.port, weight)
    return BackendDecision(name, weight, ROUTED, f"routed at weight {weight}", target)
