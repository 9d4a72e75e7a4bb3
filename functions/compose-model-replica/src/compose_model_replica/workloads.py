"""The workload on the cluster: a Deployment (one node per replica) or a LeaderWorkerSet
gang (several), and a Service in front of the pods that serve (the leaders)."""

from typing import Any

from modelfleet_contracts.api import LWS_API_VERSION, LWS_KIND
from modelfleet_contracts.models.modelreplica import Gang, ModelReplicaSpec, Rollout
from modelfleet_contracts.objects import AVAILABLE, kubernetes_object
from modelfleet_contracts.serving import DEPLOYMENT_LABEL
from modelfleet_contracts.spec import filled

from compose_model_replica.engines import RAY_PORT, engine_commands, master_port, uses_ray
from compose_model_replica.pods import LWS_WORKER_INDEX_LABEL, engine_pod
from compose_model_replica.probes import serving_probe
from compose_model_replica.shape import ReplicaShape, replica_shape

EXCLUSIVE_TOPOLOGY = "leaderworkerset.sigs.k8s.io/exclusive-topology"
# Each group's pods are found through a headless Service of the group's own
# (`<workload>-<group index>`), not LWS's default one shared by every group: that one is named
# after the LeaderWorkerSet, as the Service that serves is (service_manifest), and LWS does not
# make it when a Service of that name exists. The leader's address (LWS_LEADER_ADDRESS,
# `<leader pod>.<its headless Service>.<namespace>`) would then never resolve, and no gang
# would start. Seen on a real LWS v0.10.0 (tests/e2e/test_real_gang_real.py).
SUBDOMAIN_POLICY = "UniquePerReplica"


def workload_manifest(
    spec: ModelReplicaSpec,
    shape: ReplicaShape,
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    claim_name: str | None,
    cache_path: str | None,
) -> dict[str, Any]:
    commands = engine_commands(shape, cache_path=cache_path)
    selector = {**labels, "modelfleet.io/workload": name}
    leader = engine_pod(
        spec,
        shape,
        labels=selector,
        command=commands.command,
        args=commands.args,
        claim_name=claim_name,
        cache_path=cache_path,
        serving=True,
        readiness_probe=serving_probe(shape),
        launcher_ports=launcher_ports(shape),
        launcher_env=[{"name": name, "value": value} for name, value in commands.env],
        post_start=commands.post_start,
    )
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels)}
    rollout = spec.rollout or Rollout()
    if not shape.gang:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": metadata,
            "spec": {
                "replicas": spec.replicas,
                "selector": {"matchLabels": selector},
                # rollout's defaults, not Kubernetes' 25% surge: an update of a Deployment on
                # a pool with no spare GPU node would wait for one forever.
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {
                        "maxUnavailable": filled(rollout.maxUnavailable),
                        "maxSurge": filled(rollout.maxSurge),
                    },
                },
                "template": leader,
            },
        }
    worker = engine_pod(
        spec,
        shape,
        labels=selector,
        command=commands.worker_command or [],
        args=commands.worker_args or [],
        claim_name=claim_name,
        cache_path=cache_path,
        serving=False,
    )
    topology = spec.placement.exclusiveTopology if spec.placement else None
    if topology:
        metadata["annotations"] = {EXCLUSIVE_TOPOLOGY: topology}
    gang = spec.gang or Gang()
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": LWS_KIND,
        "metadata": metadata,
        "spec": {
            "replicas": spec.replicas,
            "startupPolicy": shape.startup,
            "networkConfig": {"subdomainPolicy": SUBDOMAIN_POLICY},
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {
                    "partition": filled(rollout.partition),
                    "maxUnavailable": filled(rollout.maxUnavailable),
                    "maxSurge": filled(rollout.maxSurge),
                },
            },
            "leaderWorkerTemplate": {
                "size": shape.nodes,
                "restartPolicy": str(filled(gang.restartPolicy)),
                "leaderTemplate": leader,
                "workerTemplate": worker,
            },
        },
    }


def launcher_ports(shape: ReplicaShape) -> list[dict[str, Any]]:
    """The port a vLLM gang's leader opens for its workers: vLLM's master port, or Ray's
    head with `multiNodeLauncher: Ray`; none for a single node or a Custom gang."""
    if uses_ray(shape):
        return [{"name": "ray", "containerPort": RAY_PORT}]
    port = master_port(shape)
    return [] if port is None else [{"name": "vllm-master", "containerPort": port}]


def serving_selector(shape: ReplicaShape, *, name: str, labels: dict[str, str]) -> dict[str, str]:
    """The labels of the workload's pods that serve HTTP: every pod of a single-node group,
    only the leader of a multi-node one. The Service and the InferencePool select these."""
    selector = {**labels, "modelfleet.io/workload": name}
    if shape.gang:
        selector[LWS_WORKER_INDEX_LABEL] = "0"  # only leaders serve
    return selector


def service_manifest(
    shape: ReplicaShape,
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    deployment: str | None = None,
) -> dict[str, Any]:
    """The Service to the serving pods; labelled with its ModelDeployment (`deployment`) too,
    which finds it from there. Its selector is the workload's, never anything else."""
    selector = serving_selector(shape, name=name, labels=labels)
    found_by = {**labels, DEPLOYMENT_LABEL: deployment} if deployment else dict(labels)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": found_by},
        "spec": {
            "selector": selector,
            "ports": [{"name": "http", "port": shape.port, "targetPort": "http"}],
        },
    }


def workload_objects(
    spec: ModelReplicaSpec,
    *,
    name: str,
    namespace: str,
    provider_config: str,
    labels: dict[str, str],
    claim_name: str | None,
    cache_path: str | None,
    deployment: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    shape = replica_shape(spec)
    workload = workload_manifest(
        spec,
        shape,
        name=name,
        namespace=namespace,
        labels=labels,
        claim_name=claim_name,
        cache_path=cache_path,
    )
    service = service_manifest(
        shape, name=name, namespace=namespace, labels=labels, deployment=deployment
    )
    return (
        kubernetes_object(
            workload, provider_config, labels=labels, readiness_query=AVAILABLE, watch=True
        ),
        kubernetes_object(service, provider_config, labels=labels),
    )
