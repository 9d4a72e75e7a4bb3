"""The workload on the cluster: a Deployment (one node per replica) or a LeaderWorkerSet
gang (several), and a Service in front of the pods that serve (the leaders)."""

from typing import Any

from modelfleet_contracts.api import LWS_API_VERSION, LWS_KIND
from modelfleet_contracts.objects import AVAILABLE, kubernetes_object

from compose_model_replica.engines import engine_commands
from compose_model_replica.pods import LWS_WORKER_INDEX_LABEL, engine_pod, gpus_per_node
from compose_model_replica.probes import readiness_probes

EXCLUSIVE_TOPOLOGY = "leaderworkerset.sigs.k8s.io/exclusive-topology"


def workload_manifest(
    spec: dict[str, Any],
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    claim_name: str | None,
    cache_path: str | None,
) -> dict[str, Any]:
    nodes = int(spec.get("nodes") or 1)
    gpus = max(1, gpus_per_node(spec))  # tensor parallelism of at least one device
    replicas = int(spec.get("replicas") or 0)
    commands = engine_commands(
        spec.get("engine") or {}, cache_path=cache_path, gpus=gpus, nodes=nodes
    )
    selector = {**labels, "modelfleet.io/workload": name}
    serving_probe, worker_probe = readiness_probes(
        spec, int((spec.get("engine") or {}).get("port") or 8000)
    )
    leader = engine_pod(
        spec,
        labels=selector,
        command=commands.command,
        args=commands.args,
        claim_name=claim_name,
        cache_path=cache_path,
        serving=True,
        readiness_probe=serving_probe,
    )
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if nodes == 1:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": metadata,
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": selector},
                "template": leader,
            },
        }
    worker = engine_pod(
        spec,
        labels=selector,
        command=commands.worker_command or [],
        args=commands.worker_args or [],
        claim_name=claim_name,
        cache_path=cache_path,
        serving=False,
        readiness_probe=worker_probe,
    )
    topology = (spec.get("placement") or {}).get("exclusiveTopology")
    if topology:
        metadata["annotations"] = {EXCLUSIVE_TOPOLOGY: topology}
    rollout = spec.get("rollout") or {}
    gang = spec.get("gang") or {}
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": LWS_KIND,
        "metadata": metadata,
        "spec": {
            "replicas": replicas,
            "startupPolicy": gang.get("startupPolicy", "LeaderReady"),
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {
                    "partition": int(rollout.get("partition", 0)),
                    "maxUnavailable": rollout.get("maxUnavailable", 1),
                    "maxSurge": rollout.get("maxSurge", 0),
                },
            },
            "leaderWorkerTemplate": {
                "size": nodes,
                "restartPolicy": gang.get("restartPolicy", "RecreateGroupOnPodRestart"),
                "leaderTemplate": leader,
                "workerTemplate": worker,
            },
        },
    }


def service_manifest(
    spec: dict[str, Any], *, name: str, namespace: str, labels: dict[str, str]
) -> dict[str, Any]:
    selector = {**labels, "modelfleet.io/workload": name}
    if int(spec.get("nodes") or 1) > 1:
        selector[LWS_WORKER_INDEX_LABEL] = "0"  # only leaders serve
    port = int((spec.get("engine") or {}).get("port") or 8000)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "selector": selector,
            "ports": [{"name": "http", "port": port, "targetPort": "http"}],
        },
    }


def workload_objects(
    spec: dict[str, Any],
    *,
    name: str,
    namespace: str,
    provider_config: str,
    labels: dict[str, str],
    claim_name: str | None,
    cache_path: str | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    workload = workload_manifest(
        spec,
        name=name,
        namespace=namespace,
        labels=labels,
        claim_name=claim_name,
        cache_path=cache_path,
    )
    service = service_manifest(spec, name=name, namespace=namespace, labels=labels)
    return (
        kubernetes_object(workload, provider_config, labels=labels, readiness_query=AVAILABLE),
        kubernetes_object(service, provider_config, labels=labels),
    )
