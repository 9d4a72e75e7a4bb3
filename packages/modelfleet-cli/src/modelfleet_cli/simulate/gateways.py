"""The Gateway API on a simulated workload cluster: the Gateway a cluster declares (its
InferenceCluster's `gatewayRef`, clusters.py) or a simulation seeds (`clusters.<name>.objects`
in simulation.yaml), and the cluster's gateway controller. Each round the controller
Programs every Gateway at its address, and every HTTPRoute naming an existing Gateway as its
parent is Accepted by it. A route naming a Gateway that does not exist gets no status, as
with a real controller.

The address is the one the Gateway reports (`status.addresses`), else the one it asks for
(`spec.addresses`), else STAND_IN_ADDRESS."""

from typing import Any

from modelfleet_contracts.api import GATEWAY_API_GROUP, GATEWAY_API_VERSION, GATEWAY_KIND
from modelfleet_contracts.fields import list_at, mapping_at

STAND_IN_ADDRESS = "10.96.0.80"
CONTROLLER = "simulated.modelfleet.io/gateway"
_TIME = "1970-01-01T00:00:00Z"

Key = tuple[str, str, str]


def gateway_address(index: int) -> str:
    """The address of the `index`-th cluster's Gateway: 10.<high>.<low>.1, one per cluster."""
    return f"10.{(index >> 8) & 255}.{index & 255}.1"


def programmed_gateway(name: str, namespace: str, address: str) -> dict[str, Any]:
    """A Gateway as its controller reports it once Programmed at `address`."""
    gateway: dict[str, Any] = {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": GATEWAY_KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "gatewayClassName": "simulated",
            "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}],
        },
        "status": {"addresses": [{"type": "IPAddress", "value": address}]},
    }
    program(gateway)
    return gateway


def _true(kind: str, generation: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": kind,
        "message": "simulated gateway controller",
        "observedGeneration": generation or 1,
        "lastTransitionTime": _TIME,
    }


def _address(gateway: dict[str, Any]) -> str:
    for source in (mapping_at(gateway, "status"), mapping_at(gateway, "spec")):
        for entry in list_at(source, "addresses"):
            if isinstance(entry, dict) and isinstance(entry.get("value"), str) and entry["value"]:
                return entry["value"]
    return STAND_IN_ADDRESS


def program(gateway: dict[str, Any]) -> None:
    """The Gateway Accepted and Programmed at its address."""
    generation = mapping_at(gateway, "metadata").get("generation")
    status = gateway.setdefault("status", {})
    status["addresses"] = [{"type": "IPAddress", "value": _address(gateway)}]
    status["conditions"] = [_true("Accepted", generation), _true("Programmed", generation)]


def accept(route: dict[str, Any], route_namespace: str, gateways: set[Key]) -> None:
    """The route Accepted by every parent Gateway that exists (`gateways`: their keys)."""
    generation = mapping_at(route, "metadata").get("generation")
    parents = []
    for ref in list_at(mapping_at(route, "spec"), "parentRefs"):
        if not isinstance(ref, dict):
            continue
        if ref.get("group", GATEWAY_API_GROUP) != GATEWAY_API_GROUP:
            continue
        if ref.get("kind", GATEWAY_KIND) != GATEWAY_KIND:
            continue
        key = (GATEWAY_KIND, str(ref.get("namespace") or route_namespace), str(ref.get("name")))
        if key in gateways:
            parents.append(
                {
                    "parentRef": dict(ref),
                    "controllerName": CONTROLLER,
                    "conditions": [_true("Accepted", generation)],
                }
            )
    if parents:
        route.setdefault("status", {})["parents"] = parents
    else:
        route.pop("status", None)


def run_gateway_controller(objects: dict[Key, dict[str, Any]]) -> None:
    """One round of the controller over a cluster's objects (by (kind, namespace, name))."""
    gateways = {key for key in objects if key[0] == GATEWAY_KIND}
    for key in gateways:
        program(objects[key])
    for key, obj in objects.items():
        if key[0] == "HTTPRoute":
            accept(obj, key[1], gateways)
