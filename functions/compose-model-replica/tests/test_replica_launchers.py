"""How a vLLM replica starts: `vllm serve` on one node, vLLM's own multi-node launcher on a
gang (no Ray, no shell), Ray only when the engine asks for it; the startupPolicy a vLLM gang
needs, and what the user is told when they asked for another."""

import pytest
from modelfleet_devtools.pod_argv import lws_env, process_argv, with_injected
from modelfleet_devtools.requests import (
    condition_status,
    conditions,
    desired_resources,
    desired_status,
    events,
)
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from replica_world import model_cache, pod_templates, replica, run, workload

MODEL = "/mnt/models/abc123def456"
SERVE = ["vllm", "serve"]
ONE_NODE = [MODEL, "--port=8000", "--tensor-parallel-size=8"]
GANG = [
    MODEL,
    "--port=8000",
    "--tensor-parallel-size=8",
    "--pipeline-parallel-size=2",
    "--distributed-executor-backend=mp",
    "--nnodes=$(LWS_GROUP_SIZE)",
    "--node-rank=$(LWS_WORKER_INDEX)",
    "--master-addr=$(LWS_LEADER_ADDRESS)",
    "--master-port=29501",
]
RAY_GANG = [*GANG[:4], "--distributed-executor-backend=ray"]
HTTP = {"name": "http", "containerPort": 8000}
USER_FLAGS = ["--master-port=30000", "--tensor-parallel-size=4", "--enforce-eager"]

# (case, nodes, engine, leader/single argv, worker argv, ports the serving pod opens)
LAUNCHES = [
    ("one node: vllm serve with the cache's path", 1, {}, [*SERVE, *ONE_NODE], None, [HTTP]),
    (
        "a gang: every pod runs vllm serve with vLLM's own launcher, workers headless",
        2,
        {},
        [*SERVE, *GANG],
        [*SERVE, *GANG, "--headless"],
        [HTTP, {"name": "vllm-master", "containerPort": 29501}],
    ),
    (
        "a gang: the user's flags come last and the ones they set are not composed",
        2,
        {"args": USER_FLAGS},
        [*SERVE, *GANG[:2], *GANG[3:8], *USER_FLAGS],
        [*SERVE, *GANG[:2], *GANG[3:8], "--headless", *USER_FLAGS],
        [HTTP, {"name": "vllm-master", "containerPort": 30000}],
    ),
    (
        "a gang: the user's positional model replaces the cache path on every pod",
        2,
        {"args": ["/mnt/models/abc123def456/v2", "--dtype=half"]},
        [*SERVE, "/mnt/models/abc123def456/v2", *GANG[1:], "--dtype=half"],
        [*SERVE, "/mnt/models/abc123def456/v2", *GANG[1:], "--headless", "--dtype=half"],
        [HTTP, {"name": "vllm-master", "containerPort": 29501}],
    ),
    (
        "an empty first arg is no model: it stays the user's argument",
        1,
        {"args": ["", "--enforce-eager"]},
        [*SERVE, *ONE_NODE, "", "--enforce-eager"],
        None,
        [HTTP],
    ),
    (
        "Ray on request: the leader serves on Ray, workers join its head",
        2,
        {"multiNodeLauncher": "Ray"},
        [*SERVE, *RAY_GANG],
        ["ray", "start", "--address=$(LWS_LEADER_ADDRESS):6379", "--block"],
        [HTTP, {"name": "ray", "containerPort": 6379}],
    ),
    (
        "Ray asked on one node: nothing of Ray",
        1,
        {"multiNodeLauncher": "Ray"},
        [*SERVE, *ONE_NODE],
        None,
        [HTTP],
    ),
]


@pytest.mark.parametrize(
    ("nodes", "engine", "leader_argv", "worker_argv", "ports"),
    [c[1:] for c in LAUNCHES],
    ids=[c[0] for c in LAUNCHES],
)
def test_a_vllm_replica_starts_as_its_launcher_says(nodes, engine, leader_argv, worker_argv, ports):
    xr = replica(nodes=nodes, engine={"framework": "vLLM", "port": 8000, **engine})
    manifest = workload(run(xr, cache=model_cache("Ready")))
    require_shared_schemas()
    assert_valid(manifest)
    pods = pod_templates(manifest)
    serving = pods.get("single", pods.get("leader"))["spec"]["containers"][0]
    assert serving["command"] + serving["args"] == leader_argv
    assert serving["ports"] == ports
    if worker_argv is None:
        assert "worker" not in pods
        return
    worker = pods["worker"]["spec"]["containers"][0]
    assert worker["command"] + worker["args"] == worker_argv
    assert "ports" not in worker and "readinessProbe" not in worker


def test_ray_is_started_by_the_leaders_own_hook_and_found_by_its_address():
    xr = replica(nodes=2, engine={"framework": "vLLM", "multiNodeLauncher": "Ray"})
    pods = pod_templates(workload(run(xr, cache=model_cache("Ready"))))
    leader = pods["leader"]["spec"]["containers"][0]
    assert leader["lifecycle"] == {
        "postStart": {"exec": {"command": ["ray", "start", "--head", "--port=6379"]}}
    }
    assert {"name": "RAY_ADDRESS", "value": "127.0.0.1:6379"} in leader["env"]
    worker = pods["worker"]["spec"]["containers"][0]
    assert "lifecycle" not in worker
    assert all(e["name"] != "RAY_ADDRESS" for e in worker["env"])


def test_without_ray_no_pod_carries_anything_of_ray():
    pods = pod_templates(workload(run(replica(nodes=4), cache=model_cache("Ready"))))
    for role, pod in pods.items():
        container = pod["spec"]["containers"][0]
        text = str(container)
        assert "ray" not in text.lower().replace("array", ""), role
        assert "lifecycle" not in container, role


SHELLS = {"sh", "bash", "dash", "ash", "zsh", "ksh"}
LAYOUTS = [
    pytest.param(nodes, engine, id=f"{nodes} node(s), {label}")
    for nodes in (1, 2, 4)
    for label, engine in (
        ("vLLM", {"framework": "vLLM"}),
        ("vLLM with Ray", {"framework": "vLLM", "multiNodeLauncher": "Ray"}),
        ("vLLM with args", {"framework": "vLLM", "args": ["--max-model-len=4096"]}),
    )
]


def executables(pod: dict) -> list[list[str]]:
    """Every command a pod's containers run: their command and args, and their hooks'."""
    spec = pod["spec"]
    found = []
    for container in [*spec.get("initContainers", []), *spec["containers"]]:
        found.append([*container.get("command", []), *container.get("args", [])])
        for hook in (container.get("lifecycle") or {}).values():
            found.append(hook.get("exec", {}).get("command", []))
    return found


@pytest.mark.parametrize(("nodes", "engine"), LAYOUTS)
def test_no_turnkey_container_runs_a_shell(nodes, engine):
    pods = pod_templates(
        workload(run(replica(nodes=nodes, engine=engine), cache=model_cache("Ready")))
    )
    for role, pod in pods.items():
        for argv in executables(pod):
            assert argv, role
            assert argv[0].rsplit("/", 1)[-1] not in SHELLS, (role, argv)
            assert "-c" not in argv[:2], (role, argv)


def test_every_gang_pod_gets_its_rank_from_the_variables_leaderworkerset_injects():
    """LeaderWorkerSet's webhook puts LWS_* first in every container's env; Kubernetes expands
    them in args: each pod of a group of 4 then runs with its own rank and the leader's DNS."""
    lws = workload(run(replica(nodes=4), cache=model_cache("Ready")))
    name, namespace = lws["metadata"]["name"], lws["metadata"]["namespace"]
    pods = pod_templates(lws)
    for index in range(4):
        role = "leader" if index == 0 else "worker"
        container = pods[role]["spec"]["containers"][0]
        injected = lws_env(name=name, group=1, worker=index, size=4, namespace=namespace)
        argv = process_argv(with_injected(container, injected))
        leader = f"{name}-1.{name}-1.{namespace}"  # its group's own headless Service
        assert argv[:3] == ["vllm", "serve", MODEL]
        assert "--nnodes=4" in argv and f"--node-rank={index}" in argv
        assert f"--master-addr={leader}" in argv and "--master-port=29501" in argv
        assert ("--headless" in argv) == (index > 0)
        assert not any("$(" in a for a in argv), argv
        env = {e["name"]: e.get("value") for e in with_injected(container, injected)["env"]}
        assert env["MODELFLEET_RANK"] == "$(LWS_WORKER_INDEX)"  # expanded by Kubernetes too


LC = "LeaderCreated"
# (case, framework, nodes, startupPolicy written, composed, told)
STARTUPS = [
    ("vLLM gang, LeaderReady written: started together, said", "vLLM", 2, "LeaderReady", LC, True),
    ("vLLM gang, nothing written: started together", "vLLM", 2, None, LC, False),
    ("vLLM gang, LeaderCreated written", "vLLM", 2, "LeaderCreated", "LeaderCreated", False),
    ("vLLM one node: no gang, nothing to say", "vLLM", 1, "LeaderReady", None, False),
    ("Custom gang keeps LeaderReady", "Custom", 2, "LeaderReady", "LeaderReady", False),
    ("Custom gang, nothing written: LeaderReady", "Custom", 2, None, "LeaderReady", False),
    ("Custom gang keeps LeaderCreated", "Custom", 2, "LeaderCreated", "LeaderCreated", False),
]


def warnings(rsp) -> list[str]:
    return [text for severity, text in events(rsp) if severity == "Warning"]


@pytest.mark.parametrize(
    ("framework", "nodes", "written", "composed", "told"),
    [c[1:] for c in STARTUPS],
    ids=[c[0] for c in STARTUPS],
)
def test_a_gang_starts_as_it_must_and_says_so_when_not_as_written(
    framework, nodes, written, composed, told
):
    engine = {"framework": framework}
    if framework == "Custom":
        engine["command"] = ["/serve"]
    spec = {"gang": {"startupPolicy": written}} if written else {}
    xr = replica(nodes=nodes, engine=engine, **spec)
    rsp = run(xr, cache=model_cache("Ready"))
    assert workload(rsp)["spec"].get("startupPolicy") == composed
    condition = conditions(rsp)["WorkloadReady"]
    said = [w for w in warnings(rsp) if "startupPolicy" in w]
    if not told:
        assert said == [] and "startupPolicy" not in condition.message
        return
    for text in (condition.message, desired_status(rsp)["message"], said[0]):
        assert "gang.startupPolicy LeaderReady is composed as LeaderCreated" in text
        assert "workers have joined" in text  # why
    assert len(said) == 1
    # Once the replica shows it, the next reconcile says it again in the condition only.
    xr["status"] = {"conditions": [{"type": "WorkloadReady", **_condition(condition)}]}
    again = run(xr, cache=model_cache("Ready"))
    assert [w for w in warnings(again) if "startupPolicy" in w] == []
    assert "gang.startupPolicy LeaderReady" in conditions(again)["WorkloadReady"].message


def _condition(c) -> dict[str, str]:
    return {"status": condition_status(c), "reason": c.reason, "message": c.message}


def test_ray_is_refused_for_a_custom_engine_with_a_message_and_nothing_composed():
    engine = {"framework": "Custom", "command": ["/serve"], "multiNodeLauncher": "Ray"}
    rsp = run(replica(nodes=2, engine=engine), cache=model_cache("Ready"))
    condition = conditions(rsp)["WorkloadReady"]
    assert condition.reason == "InvalidSpec"
    assert "engine.multiNodeLauncher Ray applies to framework vLLM only" in condition.message
    assert desired_resources(rsp) == {}
