"""Readiness of engine pods, chosen so that a gang can start and is Available only once
it serves.

LeaderWorkerSet's `LeaderReady` start-up policy creates the workers only after the leader
pod is Ready. A vLLM leader serves only after its workers have joined its Ray head, so a
leader probed on its serving port would wait for workers that are never created. Under
`LeaderReady` a vLLM gang's leader is therefore Ready once its Ray head accepts
connections, and every worker is Ready only while the leader serves: the group, and so
the LeaderWorkerSet's `Available`, still means "answering requests".
"""

from typing import Any

from compose_model_replica.shape import ReplicaShape

RAY_PORT = 6379
# Exits 0 when the leader's serving port accepts a TCP connection. A fixed program; the
# leader's address comes from the LWS-injected environment, the port as argv[1].
LEADER_SERVES = (
    "import os, socket, sys\n"
    "socket.create_connection((os.environ['LWS_LEADER_ADDRESS'], int(sys.argv[1])), 3).close()\n"
)


def tcp_probe(port: int) -> dict[str, Any]:
    return {"tcpSocket": {"port": port}, "periodSeconds": 10, "failureThreshold": 3}


def leader_serves_probe(port: int) -> dict[str, Any]:
    return {
        "exec": {"command": ["python3", "-c", LEADER_SERVES, str(port)]},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 3,
    }


def readiness_probes(shape: ReplicaShape) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(serving pod's probe, worker's probe or None)."""
    if shape.gang and shape.framework == "vLLM" and shape.startup == "LeaderReady":
        return tcp_probe(RAY_PORT), leader_serves_probe(shape.port)
    return tcp_probe(shape.port), None
