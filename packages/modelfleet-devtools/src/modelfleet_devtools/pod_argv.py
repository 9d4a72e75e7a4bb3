"""The argv a container's process gets on a node, from its composed spec: the variables
LeaderWorkerSet's pod webhook adds to each container of a gang's pods, and Kubernetes'
`$(VAR)` expansion of env values, command and args (no shell involved)."""

import re
from typing import Any

# $$ is a literal $; $(NAME) is NAME's value where NAME is defined, else left as written.
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text: str, variables: dict[str, str]) -> str:
    """`text` as the kubelet expands it against `variables`."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        return variables.get(name, match.group(0))

    return _REFERENCE.sub(one, text)


def lws_env(
    *, name: str, group: int, worker: int, size: int, namespace: str
) -> list[dict[str, str]]:
    """What LeaderWorkerSet's pod webhook (v0.7 to v0.10) gives every container of a gang's
    pod, in its order: the leader's address through its group's own headless Service
    (`subdomainPolicy: UniquePerReplica`, as compose-model-replica composes it), the group's
    size and the pod's index in its group."""
    leader = f"{name}-{group}"
    return [
        {"name": "LWS_LEADER_ADDRESS", "value": f"{leader}.{leader}.{namespace}"},
        {"name": "LWS_GROUP_SIZE", "value": str(size)},
        {"name": "LWS_WORKER_INDEX", "value": str(worker)},
    ]


def with_injected(container: dict[str, Any], first: list[dict[str, str]]) -> dict[str, Any]:
    """`container` with `first` put at the front of its env, as the webhook does: a variable
    the container already names is replaced by the injected one."""
    injected = {e["name"] for e in first}
    rest = [e for e in container.get("env") or [] if e["name"] not in injected]
    return {**container, "env": [*first, *rest]}


def process_argv(container: dict[str, Any]) -> list[str]:
    """command + args after expansion; each env value is expanded against the variables
    before it, and one from `valueFrom` (unknown here) stays unexpanded where referenced."""
    variables: dict[str, str] = {}
    for env in container.get("env") or []:
        if "value" in env:
            variables[env["name"]] = expand(str(env["value"]), variables)
    argv = [*(container.get("command") or []), *(container.get("args") or [])]
    return [expand(str(a), variables) for a in argv]
