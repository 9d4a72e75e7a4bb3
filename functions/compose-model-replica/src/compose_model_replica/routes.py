"""The model's route on its cluster's Gateway (opt-in: the InferenceCluster's gatewayRef): an
HTTPRoute that sends `/<namespace>/<deployment>/...` to the replica's Service, or to its
InferencePool where the cluster runs the Inference Extension, the prefix rewritten to `/`;
and whether the Gateway accepted it."""

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
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.serving import gateway_address

CONDITION = "GatewayRouted"


def http_route_manifest(
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    gateway: GatewayView,
    prefix: str,
    backend: dict[str, Any],
) -> dict[str, Any]:
    """The HTTPRoute on `gateway` sending `prefix` to `backend` (`service_backend` or
    `pool_backend`)."""
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
                    "backendRefs": [backend],
                }
            ],
        },
    }


def service_backend(service: str, port: int) -> dict[str, Any]:
    # group and kind spelled out, as the API server defaults them.
    return {"group": "", "kind": "Service", "name": service, "port": port}


def pool_backend(pool: str) -> dict[str, Any]:
    """An InferencePool as a route's backend: no port (the pool's targetPorts say it)."""
    return {"group": INFERENCE_API_GROUP, "kind": INFERENCE_POOL_KIND, "name": pool}


def route_status(
    gateway: GatewayView, prefix: str, route: ObservedObject | None
) -> tuple[str | None, Status]:
    """(the address through the Gateway, or None; GatewayRouted). The address is reported
    only once the Gateway accepted the route and is Programmed with an address."""
    where = f"Gateway {gateway.namespace}/{gateway.name}"
    accepted = route.parent_condition("Accepted") if route is not None else None
    if accepted is None:
        refused = route.parent_condition("Accepted", "False") if route is not None else None
        if refused is not None:
            why = refused.message or refused.reason or "refused"
            return None, Status.false(
                CONDITION, "NotAccepted", f"{where} did not accept the route: {why}"
            )
        return None, Status.false(
            CONDITION, "Pending", f"waiting for {where} to accept the route {prefix}"
        )
    if not gateway.address:
        return None, Status.false(
            CONDITION, "GatewayNotReady", f"{where} accepted the route but reports no address yet"
        )
    address = gateway_address(gateway.address, prefix)
    return address, Status.true(CONDITION, "Accepted", f"routed through {where} at {address}")
