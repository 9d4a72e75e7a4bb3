"""The model's route on its cluster's Gateway (opt-in: the InferenceCluster's gatewayRef): an
HTTPRoute that sends `/<namespace>/<deployment>/...` to the replica's Service, or to its
InferencePool where the cluster runs the Inference Extension, the prefix rewritten to `/`
(modelfleet_contracts.routes); and whether the Gateway accepted it."""

from modelfleet_contracts.clusters import GatewayView
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.routes import route_admission

CONDITION = "GatewayRouted"


def route_status(
    gateway: GatewayView, prefix: str, route: ObservedObject | None
) -> tuple[str | None, Status]:
    """(the address through the Gateway, or None; GatewayRouted). The address is reported
    only once the Gateway accepted the route and is Programmed with an address."""
    admission = route_admission(gateway, prefix, route)
    if admission.address is None:
        return None, Status.false(CONDITION, admission.reason, admission.message)
    return admission.address, Status.true(CONDITION, admission.reason, admission.message)
