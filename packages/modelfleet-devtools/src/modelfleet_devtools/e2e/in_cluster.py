"""What the real-node scenarios ask of a workload cluster whose pods really run: waiting on it
while the control plane and the node stay alive, its objects' conditions, how its containers
ended, and requests from inside its network (a client that resolves Service names through
the cluster's CoreDNS and reaches ClusterIPs through kube-proxy).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .node import RealNode
from .processes import wait_for

Json = dict[str, Any]
REQUEST_SECONDS = 60
# The real-node gang scenario runs only when this is "1" (its minutes are more than CI holds).
REAL_NODE_ENV = "MODELFLEET_E2E_REAL_NODE"


def waited(
    what: str,
    probe: Callable[[], Any],
    timeout: float,
    *,
    alive: Sequence[Callable[[], None]] = (),
    timings: dict[str, float] | None = None,
) -> Any:
    """`probe`'s first truthy result, failing at once if a check of `alive` raises (a part
    that died) and after `timeout` otherwise; how long it took goes into `timings[what]`."""

    def alive_and() -> Any:
        for check in alive:
            check()
        return probe()

    started = time.monotonic()
    result = wait_for(alive_and, what=what, timeout=timeout, every=3)
    if timings is not None:
        timings[what] = time.monotonic() - started
    return result


def condition_true(obj: Json, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


def exited_containers(pods: list[Json]) -> list[str]:
    """How each container of `pods` that exited ended (its reason and exit code)."""
    return [
        f"{p['metadata']['name']}: {s['lastState']['terminated'].get('reason')} "
        f"(exit {s['lastState']['terminated'].get('exitCode')})"
        for p in pods
        for s in (p.get("status") or {}).get("containerStatuses") or []
        if (s.get("lastState") or {}).get("terminated")
    ]


def curl(node: RealNode, url: str, body: Json | None = None) -> tuple[int, str]:
    """A request from inside the cluster network: (HTTP status, body); POST with `body`."""
    argv = ["curl", "-s", "--max-time", str(REQUEST_SECONDS), "-o", "-", "-w", "\n%{http_code}"]
    if body is not None:
        argv += ["-H", "Content-Type: application/json", "--data", json.dumps(body)]
    done = node.in_cluster([*argv, url], timeout=REQUEST_SECONDS + 30)
    assert done.returncode == 0, f"curl {url}: {done.stderr}"
    text, _, status = done.stdout.rpartition("\n")
    return int(status), text


@dataclass(frozen=True)
class Answers:
    """What an OpenAI-compatible address answered: the model names it lists, a chat
    completion for the served name (status, body, seconds) and the status for another name."""

    listed: list[str]
    chat_status: int
    chat: Json | str
    chat_seconds: float
    other_model_status: int


def ask(node: RealNode, address: str, served_name: str) -> Answers:
    """`GET <address>/models`, then `POST <address>/chat/completions` for `served_name` and
    for a name nothing serves, from inside the cluster network."""
    status, listed = curl(node, f"{address}/models")
    assert status == 200, f"GET {address}/models: {status} {listed}"
    names = [m["id"] for m in json.loads(listed)["data"]]

    def chat(model: str) -> tuple[int, str]:
        return curl(node, f"{address}/chat/completions", {
            "model": model, "max_tokens": 8,
            "messages": [{"role": "user", "content": "Hello"}],
        })  # fmt: skip

    started = time.monotonic()
    chat_status, answered = chat(served_name)
    seconds = time.monotonic() - started
    body: Json | str = json.loads(answered) if chat_status == 200 else answered
    return Answers(names, chat_status, body, seconds, chat("another-model")[0])
