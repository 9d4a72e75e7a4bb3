"""Where a serving group answers: the in-cluster URL of a replica's Service, and the labels
that find that Service from its ModelDeployment. Read by compose-model-replica (which reports
the address), the scheduler (which lists it per cluster) and `modelfleet simulate`."""

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
