"""Writing each desired composed resource's readiness (`readiness.composed_ready`) into the
response, from the observed resource of the same name."""

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelfleet_contracts.edge.observed import read_seen
from modelfleet_contracts.readiness import composed_ready


def mark_composed_readiness(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    """READY_TRUE or READY_FALSE on every desired composed resource, never unspecified."""
    observed = req.observed.resources
    for name, desired in rsp.desired.resources.items():
        seen = read_seen(observed[name].resource) if name in observed else None
        desired.ready = fnv1.READY_TRUE if composed_ready(seen) else fnv1.READY_FALSE
