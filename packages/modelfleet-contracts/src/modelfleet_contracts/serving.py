"""Where a serving group answers: the in-cluster URL of a replica's Service, and the labels
that find that Service from its ModelDeployment. Read by compose-model-replica (which reports
the address), the scheduler (which lists it per cluster), compose-model-service (which routes
to the Service the address names) and `modelfleet simulate`."""

import re
from dataclasses import dataclass

from modelfleet_contracts.api import MODEL_DEPLOYMENT
from modelfleet_contracts.labels import kind_label

SCHEME = "http"
# The OpenAI-compatible API's prefix: clients use the address as their base URL
# (`<address>/chat/completions`, `<address>/models`).
OPENAI_PATH_PREFIX = "/v1"
CLUSTER_DOMAIN = "svc.cluster.local"
# On the replica's Service: the ModelDeployment it serves (with `modelfleet.io/namespace`,
# which every composed object carries), so `kubectl get svc -l` finds it from the deployment.
DEPLOYMENT_LABEL = kind_label(MODEL_DEPLOYMENT)
# The engine's HTTP health endpoint its readiness probe asks (vLLM serves /health).
VLLM_HEALTH_PATH = "/health"


def route_path_prefix(namespace: str, deployment: str) -> str:
    """The path a model is routed under on a cluster's Gateway, `/<namespace>/<deployment>`:
    unique per ModelDeployment (a namespace holds one of a name), rewritten to `/` on the
    way to the engine."""
    return f"/{namespace}/{deployment}"


def gateway_address(address: str, prefix: str) -> str:
    """`http://<gateway address><prefix>/v1`: the base URL through the Gateway."""
    return f"{SCHEME}://{address}{prefix}{OPENAI_PATH_PREFIX}"


def service_address(service: str, namespace: str, port: int) -> str:
    """`http://<service>.<namespace>.svc.cluster.local:<port>/v1`."""
    return f"{SCHEME}://{service}.{namespace}.{CLUSTER_DOMAIN}:{port}{OPENAI_PATH_PREFIX}"


def model_route_prefix(model_name: str) -> str:
    """The path a ModelService's model is routed under on a cluster's Gateway,
    `/models/<model name>`, rewritten to `/` on the way to the engine. Beside the per-deployment
    routes (`route_path_prefix`): the first segment of those is a namespace."""
    return f"/models/{model_name}"


@dataclass(frozen=True)
class ServiceAddress:
    """The Service a `service_address` names."""

    service: str
    namespace: str
    port: int


_SERVICE_ADDRESS = re.compile(
    rf"{SCHEME}://(?P<service>[a-z0-9]([-a-z0-9]*[a-z0-9])?)\."
    rf"(?P<namespace>[a-z0-9]([-a-z0-9]*[a-z0-9])?)\.{re.escape(CLUSTER_DOMAIN)}"
    rf":(?P<port>[0-9]{{1,5}}){re.escape(OPENAI_PATH_PREFIX)}"
)


def parse_service_address(address: str) -> ServiceAddress | None:
    """The Service, namespace and port of an address `service_address` wrote; None for
    anything else (a value this module did not write names no Service to route to)."""
    found = _SERVICE_ADDRESS.fullmatch(address)
    if found is None or not 0 < int(found["port"]) < 65536:
        return None
    return ServiceAddress(found["service"], found["namespace"], int(found["port"]))
