"""The gRPC edge of compose-model-cache: protobuf in, plain data to the core, protobuf out."""

from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts import structs
from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER
from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.outcome import apply_outcome

from compose_model_cache.core import compose_cache
from compose_model_cache.status import PROGRESS_REASONS

CLUSTERS = "inference-clusters"


def require_clusters(rsp: fnv1.RunFunctionResponse, spec: dict[str, Any]) -> None:
    """Ask for the InferenceClusters the selector can match. Crossplane selects by labels
    only; matchExpressions are applied by the core on what comes back."""
    selector = mapping_at(spec, "clusterSelector")
    labels = mapping_at(selector, "matchLabels")
    response.require_resources(
        rsp,
        CLUSTERS,
        API_VERSION,
        INFERENCE_CLUSTER,
        match_labels={str(k): str(v) for k, v in labels.items()},
    )


def run_function(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    xr = structs.to_dict(req.observed.composite.resource)
    require_clusters(rsp, mapping_at(xr, "spec"))
    clusters = (
        [structs.to_dict(item.resource) for item in req.required_resources[CLUSTERS].items]
        if CLUSTERS in req.required_resources
        else None
    )
    # Only the parts of each observed Object the core reads (not the echoed manifests).
    observed = {
        name: structs.observed_object(r.resource) for name, r in req.observed.resources.items()
    }
    outcome = compose_cache(xr, clusters, observed)

    apply_outcome(req, rsp, xr, outcome, progress_reasons=PROGRESS_REASONS)
