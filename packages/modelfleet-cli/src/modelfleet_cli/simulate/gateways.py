"""The Gateway API on a simulated workload cluster: the Gateway a cluster declares, Programmed
at an address of its own, and its controller, which admits the HTTPRoutes attached to it."""

from typing import Any

from modelfleet_contracts.api import GATEWAY_API_VERSION, GATEWAY_KIND
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.fields import list_at, mapping_at

# (kind, namespace, name) -> object, as WorkloadCluster.objects keys them.
Objects = dict[tuple[str, str, str], dict[str, Any]]


def gateway_address(index: int) -> str:
    """The address of the `index`-th cluster's Gateway: 10.<high>.<low>.1, one per cluster."""
    return f"10.{(index >> 8) & 255}.{index & 255}.1"


def programmed_gateway(name: str, namespace: str, address: str) -> dict[str, Any]:
    """A Gateway as its controller reports it once Programmed at `address`."""
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": GATEWAY_KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "gatewayClassName": "simulated",
            "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}],
        },
        "status": {
            "addresses": [{"type": "IPAddress", "value": address}],
            "conditions": [
                {"type": "Accepted", "status": "True", "reason": "Accepted"},
                {"type": "Programmed", "status": "True", "reason": "Programmed"},
            ],
        },
    }


def admit_route(objects: Objects, route: dict[str, Any]) -> None:
    """The Gateway's controller: each parent Gateway that exists and is Programmed accepts
    the route; one that does not exist does not (NoMatchingParent)."""
    parents = []
    for ref in list_at(mapping_at(route, "spec"), "parentRefs"):
        if not isinstance(ref, dict) or ref.get("kind", GATEWAY_KIND) != GATEWAY_KIND:
            continue
        namespace = ref.get("namespace") or mapping_at(route, "metadata").get("namespace")
        gateway = objects.get((GATEWAY_KIND, str(namespace), str(ref.get("name"))))
        found = gateway is not None and condition_true(mapping_at(gateway, "status"), "Programmed")
        condition = {
            "type": "Accepted",
            "status": "True" if found else "False",
            "reason": "Accepted" if found else "NoMatchingParent",
        }
        if not found:
            condition["message"] = f"Gateway {namespace}/{ref.get('name')} not found"
        parents.append(
            {
                "parentRef": dict(ref),
                "controllerName": "simulated.modelfleet.io/gateway",
                "conditions": [condition],
            }
        )
    route["status"] = {"parents": parents}
