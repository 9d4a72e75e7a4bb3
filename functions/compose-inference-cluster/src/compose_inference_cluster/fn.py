"""The gRPC edge of compose-inference-cluster."""

from crossplane.function import request, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import OBJECT_API_VERSION, PROVIDER_CONFIG_KIND
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.now import request_now
from modelfleet_contracts.edge.observed import read_observed
from modelfleet_contracts.edge.outcome import apply_outcome
from modelfleet_contracts.fields import mapping_at

from compose_inference_cluster.core import compose_cluster
from compose_inference_cluster.status import PROGRESS_REASONS

NAMED_PROVIDER_CONFIG = "named-provider-config"


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    now = request_now(req, rsp)
    xr = structs.to_dict(req.observed.composite.resource)
    named = mapping_at(mapping_at(xr, "spec"), "connection").get("providerConfigName")
    resolved = None
    if isinstance(named, str) and named:
        # Proof that the named provider config exists before reporting it.
        response.require_resources(
            rsp, NAMED_PROVIDER_CONFIG, OBJECT_API_VERSION, PROVIDER_CONFIG_KIND, match_name=named
        )
        if NAMED_PROVIDER_CONFIG in req.required_resources:
            resolved = request.get_required_resources(req, NAMED_PROVIDER_CONFIG)
    observed = {name: read_observed(r.resource) for name, r in req.observed.resources.items()}
    outcome = compose_cluster(xr, observed, resolved, now)
    apply_outcome(req, rsp, xr, outcome, now=now, progress_reasons=PROGRESS_REASONS)
