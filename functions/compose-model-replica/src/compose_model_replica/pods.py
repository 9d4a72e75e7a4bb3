"""The engine pod every replica runs — single node, gang leader or gang worker alike:
the cache mounted at /mnt/models, GPUs, a memory-backed /dev/shm, the pool's placement."""

from typing import Any

from modelfleet_contracts.models.modelreplica import ModelReplicaSpec
from modelfleet_contracts.mounts import CACHE_VOLUME_NAME, MODEL_MOUNT_PATH, mounted_model_path
from modelfleet_contracts.served_names import SERVED_MODEL_NAME_ENV
from modelfleet_contracts.spec import filled
from pydantic import BaseModel

from compose_model_replica.shape import ReplicaShape

SHM_VOLUME = "dshm"
MODEL_PATH_ENV = "MODELFLEET_MODEL_PATH"
LWS_WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"


def _plain(item: BaseModel) -> dict[str, Any]:
    """A list item of the spec (an env var, a toleration) as the user wrote it."""
    return item.model_dump(mode="json", exclude_none=True, warnings=False)


def identity_env(nodes: int) -> list[dict[str, Any]]:
    """MODELFLEET_* aliases: the same names whether the pod is alone or in a gang."""
    if nodes > 1:
        return [
            {"name": "MODELFLEET_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"},
            {"name": "MODELFLEET_RANK", "value": "$(LWS_WORKER_INDEX)"},
            {"name": "MODELFLEET_GROUP_SIZE", "value": "$(LWS_GROUP_SIZE)"},
        ]
    return [
        {
            "name": "MODELFLEET_LEADER_ADDRESS",
            "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
        },
        {"name": "MODELFLEET_RANK", "value": "0"},
        {"name": "MODELFLEET_GROUP_SIZE", "value": "1"},
    ]


def model_path_env(claim_name: str | None, cache_path: str | None) -> list[dict[str, Any]]:
    """Where the weights are in the pod, for engines (Custom ones too) not to recompute it."""
    if not claim_name:
        return []
    return [{"name": MODEL_PATH_ENV, "value": mounted_model_path(cache_path or "")}]


def served_name_env(name: str | None) -> list[dict[str, Any]]:
    """The name clients send, for every engine; a Custom one passes it to its own flag as
    `$(MODELFLEET_SERVED_MODEL_NAME)` in its args."""
    return [{"name": SERVED_MODEL_NAME_ENV, "value": name}] if name else []


def engine_pod(
    spec: ModelReplicaSpec,
    shape: ReplicaShape,
    *,
    labels: dict[str, str],
    command: list[str],
    args: list[str],
    claim_name: str | None,
    cache_path: str | None = None,
    serving: bool,
    readiness_probe: dict[str, Any] | None = None,
    launcher_ports: list[dict[str, Any]] | None = None,
    launcher_env: list[dict[str, Any]] | None = None,
    post_start: list[str] | None = None,
) -> dict[str, Any]:
    """A pod template. `serving`: the pod answers requests (single node or leader).
    `launcher_ports`/`launcher_env`/`post_start`: what a gang's launcher adds to its leader
    (the port workers reach it on; Ray's address and the hook that starts Ray's head).

    The cache claim is mounted whole and read-only at /mnt/models; the weights are at
    /mnt/models/<cache path> (docs/modelreplica.md, "Every engine pod"), which every engine
    also gets as MODELFLEET_MODEL_PATH."""
    engine = shape.engine
    mounts: list[dict[str, Any]] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
    volumes: list[dict[str, Any]] = [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory"}}]
    if claim_name:
        mounts.append({"name": CACHE_VOLUME_NAME, "mountPath": MODEL_MOUNT_PATH, "readOnly": True})
        volumes.append(
            {
                "name": CACHE_VOLUME_NAME,
                "persistentVolumeClaim": {"claimName": claim_name, "readOnly": True},
            }
        )
    container: dict[str, Any] = {
        "name": "engine",
        "image": filled(engine.image),
        "env": identity_env(shape.nodes)
        + model_path_env(claim_name, cache_path)
        + served_name_env(shape.served_model_name)
        + list(launcher_env or [])
        + [_plain(e) for e in engine.env or []],
        "volumeMounts": mounts,
    }
    if shape.gpus:
        container["resources"] = {
            "limits": {"nvidia.com/gpu": str(shape.gpus)},
            "requests": {"nvidia.com/gpu": str(shape.gpus)},
        }
    if command:
        container["command"] = command
    if args:
        container["args"] = args
    ports = [{"name": "http", "containerPort": shape.port}] if serving else []
    ports += launcher_ports or []
    if ports:
        container["ports"] = ports
    if post_start:
        container["lifecycle"] = {"postStart": {"exec": {"command": list(post_start)}}}
    if readiness_probe:
        container["readinessProbe"] = readiness_probe
    pod: dict[str, Any] = {"containers": [container], "volumes": volumes}
    if spec.nodeSelector:
        pod["nodeSelector"] = dict(spec.nodeSelector)
    if spec.tolerations:
        pod["tolerations"] = [_plain(t) for t in spec.tolerations]
    return {"metadata": {"labels": dict(labels)}, "spec": pod}
