"""The engine's command line: vLLM turnkey (single node, or a Ray gang) or the user's own.

User values (image, args, env, the served model name) are passed as argv elements. The one
shell used — the vLLM gang leader, which must start Ray before serving — is a fixed script
that receives the serving arguments as positional parameters ("$@"), never as text.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from modelfleet_contracts.mounts import mounted_model_path
from modelfleet_contracts.served_names import SERVED_MODEL_NAME_FLAG
from pydantic import RootModel

from compose_model_replica.probes import RAY_PORT
from compose_model_replica.shape import ReplicaShape

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


def _words(items: Sequence[RootModel[str]] | None) -> list[str]:
    """argv elements of a command or args list, as the user wrote them."""
    return [item.root for item in items or []]


def vllm_args(shape: ReplicaShape, *, model_path: str | None) -> list[str]:
    user = _words(shape.engine.args)
    args: list[str] = []
    if model_path and not _has_flag(user, "--model"):
        args.append(f"--model={model_path}")
    if shape.served_model_name and not _has_flag(user, SERVED_MODEL_NAME_FLAG):
        args.append(f"{SERVED_MODEL_NAME_FLAG}={shape.served_model_name}")
    args.append(f"--port={shape.port}")
    if not _has_flag(user, "--tensor-parallel-size"):
        args.append(f"--tensor-parallel-size={shape.tensor_parallel}")
    if shape.gang:
        if not _has_flag(user, "--pipeline-parallel-size"):
            args.append(f"--pipeline-parallel-size={shape.nodes}")
        args.append("--distributed-executor-backend=ray")
    return args + user


def engine_commands(shape: ReplicaShape, *, cache_path: str | None) -> Commands:
    engine = shape.engine
    if shape.framework == "Custom":
        command = _words(engine.command)
        worker = engine.worker
        return Commands(
            command=command,
            args=_words(engine.args),
            worker_command=(_words(worker.command) if worker else []) or command,
            worker_args=_words(worker.args) if worker else [],
        )
    # The claim is mounted whole at /mnt/models; the weights are under the cache's path.
    model_path = mounted_model_path(cache_path) if cache_path is not None else None
    args = vllm_args(shape, model_path=model_path)
    if not shape.gang:
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
