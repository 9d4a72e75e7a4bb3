"""The model's weighted route on one cluster's Gateway: an HTTPRoute that sends
`/models/<model name>/...` to the Services of the deployments routed there, each at its
weight, the prefix rewritten to `/` (modelfleet_contracts.routes)."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.clusters import GatewayView
from modelfleet_contracts.routes import prefix_route, service_backend


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
    return prefix_route(
        name=name,
        namespace=namespace,
        labels=labels,
        gateway=gateway,
        prefix=prefix,
        backends=[service_backend(b.service, b.port, b.weight) for b in backends],
    )
