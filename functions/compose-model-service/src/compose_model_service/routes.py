"""The model's weighted route on one cluster's Gateway: an HTTPRoute that sends
`/models/<model name>/...` to the Services of the deployments routed there, each at its
weight, the prefix rewritten to `/`; and what the Gateway says of it."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.api import (
    GATEWAY_API_GROUP,
    GATEWAY_API_VERSION,
    GATEWAY_KIND,
    HTTP_ROUTE_KIND,
)
from modelfleet_contracts.clusters import GatewayView
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.serving import gateway_address


@dataclass(frozen=True)
class WeightedBackend:
    """A Service the route sends traffic to, at `weight` (relative to the others')."""

    service: str
    port: int
    weight: int


def weighted_route_manifest(
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    gateway: GatewayView,
    prefix: str,
    backends: list[WeightedBackend],
) -> dict[str, Any]:
    parent: dict[str, Any] = {
        "group": GATEWAY_API_GROUP,
        "kind": GATEWAY_KIND,
        "name": gateway.name,
        "namespace": gateway.namespace,
    }
    if gateway.section_name:
        parent["sectionName"] = gateway.section_name
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": HTTP_ROUTE_KIND,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "parentRefs": [parent],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": prefix}}],
                    "filters": [
                        {
                            "type": "URLRewrite",
                            "urlRewrite": {
                                "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}
                            },
                        }
                    ],
                    # group and kind spelled out, as the API server defaults them.
                    "backendRefs": [
                        {
                            "group": "",
                            "kind": "Service",
                            "name": b.service,
                            "port": b.port,
                            "weight": b.weight,
                        }
                        for b in backends
                    ],
                }
            ],
        },
    }


@dataclass(frozen=True)
class Admission:
    """What the Gateway says of the route: `reason` Accepted, NotAccepted or Pending, in
    words, and the model's base URL through the Gateway once accepted with an address."""

    reason: str
    message: str
    address: str | None = None


def route_admission(gateway: GatewayView, prefix: str, route: ObservedObject | None) -> Admission:
    where = f"Gateway {gateway.namespace}/{gateway.name}"
    if route is not None and route.parent_condition("Accepted") is not None:
        if not gateway.address:
            return Admission("Accepted", f"accepted by {where}, which reports no address yet")
        address = gateway_address(gateway.address, prefix)
        return Admission("Accepted", f"routed through {where} at {address}", address)
    refused = route.parent_condition("Accepted", "False") if route is not None else None
    if refused is not None:
        why = refused.message or refused.reason or "refused"
        return Admission("NotAccepted", f"{where} did not accept the route: {why}")
    return Admission("Pending", f"waiting for {where} to accept the route {prefix}")
