"""Readiness of serving pods: Ready means the HTTP endpoint answers, on every node layout.

A single pod and a gang's leader are probed on the serving port (vLLM: `GET /health`, which
answers once the model is loaded; a Custom engine: a TCP connection to its port, the one
thing every server has). So the Service sends requests only to pods that serve, and a
Deployment's or LeaderWorkerSet's ready count, hence the replica's address, means serving.

A vLLM leader serves only once every worker joined it (vLLM's own launcher, or Ray), so its
gang cannot be started `LeaderReady` (workers created only once the leader is Ready): shape.py
starts vLLM gangs `LeaderCreated`. Workers get no probe and open no HTTP port: the group is
Available when its leader serves, which needs every worker.
"""

from typing import Any

from modelfleet_contracts.serving import VLLM_HEALTH_PATH

from compose_model_replica.shape import ReplicaShape


def tcp_probe(port: int) -> dict[str, Any]:
    return {"tcpSocket": {"port": port}, "periodSeconds": 10, "failureThreshold": 3}


def http_probe(port: int, path: str) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": port},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 3,
    }


def serving_probe(shape: ReplicaShape) -> dict[str, Any]:
    """The readiness probe of the pod that serves (single node or leader)."""
    if shape.framework == "vLLM":
        return http_probe(shape.port, VLLM_HEALTH_PATH)
    return tcp_probe(shape.port)
