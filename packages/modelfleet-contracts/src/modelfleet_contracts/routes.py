"""A model's HTTPRoute on a cluster's Gateway (Gateway API), as both the per-replica route
(compose-model-replica) and a ModelService's weighted route (compose-model-service) compose
it: a path prefix sent to its backends with the prefix rewritten to `/`; and what the Gateway
says of it."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.api import (
    GATEWAY_API_GROUP,
    GATEWAY_API_VERSION,
    GATEWAY_KIND,
    HTTP_ROUTE_KIND,
    INFERENCE_API_GROUP,
    INFERENCE_POOL_KIND,
)
from modelfleet_contracts.clusters import GatewayView
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.serving import gateway_address


def prefix_route(
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    gateway: GatewayView,
    prefix: str,
    backends: list[dict[str, Any]],
) -> dict[str, Any]:
    """The HTTPRoute on `gateway` sending `prefix` to `backends` (`service_backend`,
    `pool_backend`), the prefix rewritten to `/`."""
    parent: dict[str, Any] = {
        "group": GATEWAY_API_GROUP,
        "kind": GATEWAY_KIND,
        "name": gateway.name,
        "namespace": gateway.namespace,
    }
    if gateway.section_name:
        parent["sectionName"] = gateway.section_name
    rewrite = {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": HTTP_ROUTE_KIND,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "parentRefs": [parent],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": prefix}}],
                    "filters": [{"type": "URLRewrite", "urlRewrite": rewrite}],
                    "backendRefs": backends,
                }
            ],
        },
    }


def service_backend(service: str, port: int, weight: int | None = None) -> dict[str, Any]:
    # group and kind spelled out, as the API server defaults them.
    backend: dict[str, Any] = {"group": "", "kind": "Service", "name": service, "port": port}
    if weight is not None:
        backend["weight"] = weight
    return backend


def pool_backend(pool: str) -> dict[str, Any]:
    """An InferencePool as a route's backend: no port (the pool's targetPorts say it)."""
    return {"group": INFERENCE_API_GROUP, "kind": INFERENCE_POOL_KIND, "name": pool}


@dataclass(frozen=True)
class Admission:
    """What the Gateway says of the route, `reason` in CamelCase (Accepted, GatewayNotReady:
    accepted but no address yet, NotAccepted, Pending) and in words; `address`: the model's
    base URL through the Gateway, once accepted with an address."""

    reason: str
    message: str
    address: str | None = None


def route_admission(gateway: GatewayView, prefix: str, route: ObservedObject | None) -> Admission:
    where = f"Gateway {gateway.namespace}/{gateway.name}"
    if route is not None and route.parent_condition("Accepted") is not None:
        if not gateway.address:
            return Admission(
                "GatewayNotReady", f"{where} accepted the route but reports no address yet"
            )
        address = gateway_address(gateway.address, prefix)
        return Admission("Accepted", f"routed through {where} at {address}", address)
    refused = route.parent_condition("Accepted", "False") if route is not None else None
    if refused is not None:
        why = refused.message or refused.reason or "refused"
        return Admission("NotAccepted", f"{where} did not accept the route: {why}")
    return Admission("Pending", f"waiting for {where} to accept the route {prefix}")
