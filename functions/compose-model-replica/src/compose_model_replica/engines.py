"""The engine's command line: vLLM turnkey (single node, or a Ray gang) or the user's own.

User values (image, args, env) are passed as argv elements. The one shell used — the
vLLM gang leader, which must start Ray before serving — is a fixed script that receives
the serving arguments as positional parameters ("$@"), never as text.
"""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.mounts import mounted_model_path

from compose_model_replica.probes import RAY_PORT

VLLM_SERVER = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
# Starts the Ray head, then serves with the arguments it was given.
LEADER_SCRIPT = f'ray start --head --port={RAY_PORT} && exec "$@"'
# Joins the Ray head at $1 and blocks; retries until the head accepts the worker.
WORKER_SCRIPT = 'until ray start --address="$1" --block; do sleep 5; done'


@dataclass(frozen=True)
class Commands:
    """command/args of the serving container, and of workers (multi-node only)."""

    command: list[str]
    args: list[str]
    worker_command: list[str] | None = None
    worker_args: list[str] | None = None


def _has_flag(args: list[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


def vllm_args(
    engine: dict[str, Any], *, model_path: str | None, gpus: int, nodes: int
) -> list[str]:
    user = [str(a) for a in engine.get("args") or []]
    args: list[str] = []
    if model_path and not _has_flag(user, "--model"):
        args.append(f"--model={model_path}")
    args.append(f"--port={engine.get('port', 8000)}")
    if not _has_flag(user, "--tensor-parallel-size"):
        args.append(f"--tensor-parallel-size={gpus}")
    if nodes > 1:
        if not _has_flag(user, "--pipeline-parallel-size"):
            args.append(f"--pipeline-parallel-size={nodes}")
        args.append("--distributed-executor-backend=ray")
    return args + user


def engine_commands(
    engine: dict[str, Any], *, cache_path: str | None, gpus: int, nodes: int
) -> Commands:
    if engine.get("framework") == "Custom":
        worker = engine.get("worker") or {}
        return Commands(
            command=list(engine.get("command") or []),
            args=list(engine.get("args") or []),
            worker_command=list(worker.get("command") or engine.get("command") or []),
            worker_args=list(worker.get("args") or []),
        )
    # The claim is mounted whole at /mnt/models; the weights are under the cache's path.
    model_path = mounted_model_path(cache_path) if cache_path is not None else None
    args = vllm_args(engine, model_path=model_path, gpus=gpus, nodes=nodes)
    if nodes == 1:
        return Commands(command=list(VLLM_SERVER), args=args)
    return Commands(
        command=["/bin/sh", "-c", LEADER_SCRIPT, "modelfleet-leader"],
        args=[*VLLM_SERVER, *args],
        # Workers join the leader's Ray head and block, retrying while the head is not up
        # yet (LeaderCreated starts them together). Kubernetes expands $(VAR) in argv.
        worker_command=[
            "/bin/sh",
            "-c",
            WORKER_SCRIPT,
            "modelfleet-worker",
            f"$(LWS_LEADER_ADDRESS):{RAY_PORT}",
        ],
        worker_args=[],
    )
