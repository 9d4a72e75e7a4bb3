"""The engine's command line: vLLM turnkey (`vllm serve`, one node or a gang) or the user's own.

Every value (image, args, env, the model path, the served model name) is one argv element, and
no container runs a shell. A vLLM gang starts with vLLM's own multi-node launcher by default:
every pod runs `vllm serve` with `--nnodes`, `--node-rank` and `--master-addr` taken from the
variables LeaderWorkerSet's pod webhook puts first in each container's env (`LWS_GROUP_SIZE`,
`LWS_WORKER_INDEX`, `LWS_LEADER_ADDRESS`), which Kubernetes expands in args as `$(VAR)`;
workers add `--headless`. `engine.multiNodeLauncher: Ray` starts a Ray cluster instead: the
leader's Ray head from a postStart hook, each worker's `ray start` as its command.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from modelfleet_contracts.mounts import mounted_model_path
from modelfleet_contracts.served_names import SERVED_MODEL_NAME_FLAG
from pydantic import RootModel

from compose_model_replica.shape import ReplicaShape

VLLM_SERVE = ["vllm", "serve"]
RAY_PORT = 6379
# vLLM's own default for --master-port, composed explicitly so the port the leader opens for
# its workers is the one it declares.
MASTER_PORT = 29501
MASTER_PORT_FLAG = "--master-port"
# The Ray head the leader's serving container joins (same pod, same network namespace).
RAY_HEAD = ["ray", "start", "--head", f"--port={RAY_PORT}"]
RAY_ADDRESS_ENV = "RAY_ADDRESS"
RAY = "Ray"


@dataclass(frozen=True)
class Commands:
    """command/args of the serving container, and of workers (multi-node only).
    `post_start`: an exec hook the serving container runs as it starts (Ray's head);
    `env`: variables the serving container needs for its launcher (Ray's address)."""

    command: list[str]
    args: list[str]
    worker_command: list[str] | None = None
    worker_args: list[str] | None = None
    post_start: list[str] | None = None
    env: tuple[tuple[str, str], ...] = ()


def _has_flag(args: list[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


def _words(items: Sequence[RootModel[str]] | None) -> list[str]:
    """argv elements of a command or args list, as the user wrote them."""
    return [item.root for item in items or []]


def uses_ray(shape: ReplicaShape) -> bool:
    """A vLLM gang started as a Ray cluster (asked for by `engine.multiNodeLauncher: Ray`)."""
    return shape.framework == "vLLM" and shape.gang and shape.engine.multiNodeLauncher == RAY


def master_port(shape: ReplicaShape) -> int | None:
    """The port a vLLM gang's leader opens for its workers with vLLM's own launcher (the
    user's `--master-port` if engine.args sets one); None for any other workload."""
    if shape.framework != "vLLM" or not shape.gang or uses_ray(shape):
        return None
    user = _words(shape.engine.args)
    for i, arg in enumerate(user):
        value = None
        if arg.startswith(MASTER_PORT_FLAG + "="):
            value = arg.split("=", 1)[1]
        elif arg == MASTER_PORT_FLAG and i + 1 < len(user):
            value = user[i + 1]
        if value is not None:
            return int(value) if value.isdigit() and 0 < int(value) < 65536 else None
    return MASTER_PORT


def user_model(user: list[str]) -> tuple[str | None, list[str]]:
    """The model the user names as `vllm serve`'s positional argument (the first of
    engine.args when it is not a flag), and the rest of their args."""
    if user and user[0] and not user[0].startswith("-"):
        return user[0], user[1:]
    return None, user


def vllm_args(shape: ReplicaShape, *, model_path: str | None) -> list[str]:
    """`vllm serve`'s arguments: the model first (vLLM reads it positionally), then the
    composed flags the user did not set, then the user's own flags, which win."""
    positional, user = user_model(_words(shape.engine.args))
    # The user's --model (vLLM moves it to the front) or positional model replaces the path.
    model = positional or (None if _has_flag(user, "--model") else model_path)
    args: list[str] = [model] if model else []
    # vLLM refuses --served-model-name when no model comes first; without one it serves its
    # own default model under that model's name.
    named = model is not None or _has_flag(user, "--model")
    if shape.served_model_name and named and not _has_flag(user, SERVED_MODEL_NAME_FLAG):
        args.append(f"{SERVED_MODEL_NAME_FLAG}={shape.served_model_name}")
    args.append(f"--port={shape.port}")
    if not _has_flag(user, "--tensor-parallel-size"):
        args.append(f"--tensor-parallel-size={shape.tensor_parallel}")
    if shape.gang:
        if not _has_flag(user, "--pipeline-parallel-size"):
            args.append(f"--pipeline-parallel-size={shape.nodes}")
        if not _has_flag(user, "--distributed-executor-backend"):
            args.append(f"--distributed-executor-backend={'ray' if uses_ray(shape) else 'mp'}")
        if not uses_ray(shape):
            args += _launcher_flags(user)
    return args + user


def _launcher_flags(user: list[str]) -> list[str]:
    """vLLM's own multi-node launcher: the group's size, this pod's rank and the leader's
    address, as LeaderWorkerSet gives them to every pod of the group."""
    flags = [
        ("--nnodes", "$(LWS_GROUP_SIZE)"),
        ("--node-rank", "$(LWS_WORKER_INDEX)"),
        ("--master-addr", "$(LWS_LEADER_ADDRESS)"),
        (MASTER_PORT_FLAG, str(MASTER_PORT)),
    ]
    return [f"{flag}={value}" for flag, value in flags if not _has_flag(user, flag)]


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
        return Commands(command=list(VLLM_SERVE), args=args)
    if uses_ray(shape):
        return Commands(
            command=list(VLLM_SERVE),
            args=args,
            # Workers join the head at the leader's address and block; LeaderCreated starts
            # them with the leader, and Ray's own retries cover a head not up yet.
            worker_command=["ray", "start", f"--address=$(LWS_LEADER_ADDRESS):{RAY_PORT}"],
            worker_args=["--block"],
            post_start=list(RAY_HEAD),
            env=((RAY_ADDRESS_ENV, f"127.0.0.1:{RAY_PORT}"),),
        )
    # Every pod runs the same engine; the workers hold their share of the model headless.
    headless = [] if "--headless" in args else ["--headless"]
    return Commands(
        command=list(VLLM_SERVE),
        args=args,
        worker_command=list(VLLM_SERVE),
        worker_args=_before_user(args, shape, headless),
    )


def _before_user(args: list[str], shape: ReplicaShape, extra: list[str]) -> list[str]:
    """`args` with `extra` inserted before the user's own args (theirs stay last and win)."""
    _model, user = user_model(_words(shape.engine.args))
    cut = len(args) - len(user)
    return [*args[:cut], *extra, *args[cut:]]
