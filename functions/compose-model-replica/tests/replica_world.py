"""The world of compose-model-replica's tests: a ModelReplica as the scheduler writes it, its
cluster and ModelCache as their functions report them, and the runner every test calls."""

from typing import Any

from compose_model_replica.core import SERVICE, WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER, run_function
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import (
    desired_resources,
    run_function_request,
)
from modelfleet_devtools.world import H100, inference_cluster, observed_object

RUNNER = SafeRunner(run_function, "compose-model-replica")
GKE = inference_cluster("gke-us")
CLAIM = "modelcache-ml-team-kimi-k2-1a2b3"


def replica(nodes: int = 1, *, cache: bool = True, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "clusterName": "gke-us",
        "replicas": 1,
        "nodes": nodes,
        "gpusPerNode": 8,
        "nodePool": "h100",
        "nodeSelector": H100["nodeSelector"],
        "tolerations": H100["tolerations"],
        "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0", "port": 8000},
    }
    if cache:
        body["modelCacheRef"] = {"name": "kimi-k2"}
    body.update(spec)
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "kimi-k2-gke-us", "namespace": "ml-team"},
        "spec": body,
    }


def model_cache(phase: str, message: str = "") -> dict[str, Any]:
    row = {
        "name": "gke-us",
        "phase": phase,
        "claimName": CLAIM,
        "path": "abc123def456",
        "fingerprint": "abc123def456",
    }
    if message:
        row["message"] = message
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "kimi-k2", "namespace": "ml-team"},
        "status": {"clusters": [row]},
    }


def run(xr, *, cluster=(GKE,), cache=None, observed=None):
    required: dict[str, Any] = {CLUSTER: list(cluster)}
    if cache is not None:
        required[CACHE] = [cache]
    return RUNNER.run(run_function_request(xr, observed=observed, required=required))


def workload(rsp) -> dict[str, Any]:
    return desired_resources(rsp)[WORKLOAD]["spec"]["forProvider"]["manifest"]


def pod_templates(manifest):
    if manifest["kind"] == "Deployment":
        return {"single": manifest["spec"]["template"]}
    t = manifest["spec"]["leaderWorkerTemplate"]
    return {"leader": t["leaderTemplate"], "worker": t["workerTemplate"]}


def cache_mount(pod: dict[str, Any]) -> tuple[str, str]:
    """(claim mounted at /mnt/models, where the engine is told the weights are)."""
    container = pod["spec"]["containers"][0]
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == "/mnt/models")
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
    env = {e["name"]: e.get("value") for e in container["env"]}
    return volume["persistentVolumeClaim"]["claimName"], env["MODELFLEET_MODEL_PATH"]


def available_gang(composed: dict[str, Any], groups: int = 1) -> dict[str, Any]:
    """The LeaderWorkerSet as the workload cluster reports it once every gang is up."""
    return observed_object(
        composed,
        remote_status={
            "replicas": groups,
            "readyReplicas": groups,
            "updatedReplicas": groups,
            "conditions": [{"type": "Available", "status": "True"}],
        },
        ready=True,
    )


def with_workload_status(xr, status):
    """Reconcile `xr` (cache Ready) once its workload reports `status` (None: not yet seen)."""
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    observed = (
        {}
        if status is None
        else {WORKLOAD: observed_object(composed[WORKLOAD], remote_status=status)}
    )
    return run(xr, cache=model_cache("Ready"), observed=observed)


def cache_status(*rows: dict[str, Any]) -> dict[str, Any]:
    cache = model_cache("Ready")
    cache["status"]["clusters"] = list(rows)
    return cache


def probes(lws: dict[str, Any]) -> dict[str, Any]:
    return {
        role: pod["spec"]["containers"][0].get("readinessProbe")
        for role, pod in pod_templates(lws).items()
    }


def running(xr: dict[str, Any]) -> dict[str, Any]:
    """The workload and Service of `xr` as composed from kimi-k2, Available on the cluster."""
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    return {
        WORKLOAD: observed_object(
            composed[WORKLOAD],
            remote_status={
                "readyReplicas": 1,
                "updatedReplicas": 1,
                "conditions": [{"type": "Available", "status": "True"}],
            },
        ),
        SERVICE: observed_object(composed[SERVICE]),
    }
