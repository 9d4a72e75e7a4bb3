"""ModelReplica scenarios: placement + cluster + cache -> the workload composed, the phase said."""

from typing import Any

import pytest
from compose_model_replica.core import SERVICE, WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER, run_function
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.runner import SafeRunner
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from modelfleet_devtools.world import H100, inference_cluster, observed_object

RUNNER = SafeRunner(run_function, "compose-model-replica")
GKE = inference_cluster("gke-us")
CLAIM = "modelcache-ml-team-kimi-k2-1a2b3"


def replica(nodes: int = 1, *, cache: bool = True, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "clusterName": "gke-us",
        "replicas": 1,
        "nodes": nodes,
        "gpusPerNode": 8,
        "nodePool": "h100",
        "nodeSelector": H100["nodeSelector"],
        "tolerations": H100["tolerations"],
        "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.11.0", "port": 8000},
    }
    if cache:
        body["modelCacheRef"] = {"name": "kimi-k2"}
    body.update(spec)
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "kimi-k2-gke-us", "namespace": "ml-team"},
        "spec": body,
    }


def model_cache(phase: str, message: str = "") -> dict[str, Any]:
    row = {
        "name": "gke-us",
        "phase": phase,
        "claimName": CLAIM,
        "path": "abc123def456",
        "fingerprint": "abc123def456",
    }
    if message:
        row["message"] = message
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "kimi-k2", "namespace": "ml-team"},
        "status": {"clusters": [row]},
    }


def run(xr, *, cluster=(GKE,), cache=None, observed=None):
    required: dict[str, Any] = {CLUSTER: list(cluster)}
    if cache is not None:
        required[CACHE] = [cache]
    return RUNNER.run(run_function_request(xr, observed=observed, required=required))


def workload(rsp) -> dict[str, Any]:
    return desired_resources(rsp)[WORKLOAD]["spec"]["forProvider"]["manifest"]


def pod_templates(manifest):
    if manifest["kind"] == "Deployment":
        return {"single": manifest["spec"]["template"]}
    t = manifest["spec"]["leaderWorkerTemplate"]
    return {"leader": t["leaderTemplate"], "worker": t["workerTemplate"]}


def test_a_gang_composes_nothing_while_the_cache_hydrates_then_a_full_lws_then_ready():
    xr = replica(nodes=2)
    waiting = run(xr, cache=model_cache("Hydrating", "downloading"))
    assert desired_resources(waiting) == {}
    assert desired_status(waiting)["phase"] == "WaitingForCache"
    assert "Hydrating" in desired_status(waiting)["message"]

    rsp = run(xr, cache=model_cache("Ready"))
    lws = workload(rsp)
    assert lws["kind"] == "LeaderWorkerSet"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert lws["spec"]["startupPolicy"] == "LeaderReady"
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {
        "partition": 0,
        "maxUnavailable": 1,
        "maxSurge": 0,
    }
    for role, pod in pod_templates(lws).items():
        container = pod["spec"]["containers"][0]
        mount = next(m for m in container["volumeMounts"] if m["mountPath"] == "/mnt/models")
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
        assert volume["persistentVolumeClaim"]["claimName"] == CLAIM, role
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "8", role
        assert any(v.get("emptyDir", {}).get("medium") == "Memory" for v in pod["spec"]["volumes"])
        assert pod["spec"]["nodeSelector"] == H100["nodeSelector"]
        assert [e["name"] for e in container["env"]][:3] == [
            "MODELFLEET_LEADER_ADDRESS",
            "MODELFLEET_RANK",
            "MODELFLEET_GROUP_SIZE",
        ]
    leader = pod_templates(lws)["leader"]["spec"]["containers"][0]
    assert "--model=/mnt/models/abc123def456" in leader["args"]
    assert "--tensor-parallel-size=8" in leader["args"]
    assert "--pipeline-parallel-size=2" in leader["args"]
    worker = pod_templates(lws)["worker"]["spec"]["containers"][0]
    assert worker["command"][:2] == ["ray", "start"]
    assert "$(LWS_LEADER_ADDRESS)" in worker["command"][2]
    service = desired_resources(rsp)[SERVICE]["spec"]["forProvider"]["manifest"]
    assert service["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert desired_status(rsp)["phase"] == "Progressing"

    observed = {
        WORKLOAD: observed_object(
            desired_resources(rsp)[WORKLOAD],
            remote_status={
                "replicas": 1,
                "readyReplicas": 1,
                "updatedReplicas": 1,
                "conditions": [{"type": "Available", "status": "True"}],
            },
            ready=True,
        )
    }
    ready = run(xr, cache=model_cache("Ready"), observed=observed)
    assert desired_status(ready)["phase"] == "Ready"
    assert desired_status(ready)["readyReplicas"] == 1
    assert ready.desired.composite.ready == fnv1.READY_TRUE


def test_single_node_vllm_is_a_deployment_with_tensor_parallel_and_the_cache():
    rsp = run(replica(nodes=1), cache=model_cache("Ready"))
    deploy = workload(rsp)
    assert deploy["kind"] == "Deployment" and deploy["spec"]["replicas"] == 1
    c = deploy["spec"]["template"]["spec"]["containers"][0]
    assert "--model=/mnt/models/abc123def456" in c["args"]
    assert "--tensor-parallel-size=8" in c["args"]
    assert {e["name"]: e.get("value") for e in c["env"]}["MODELFLEET_GROUP_SIZE"] == "1"


def test_user_model_flag_wins_and_no_cache_mounts_nothing():
    xr = replica(cache=False, engine={"framework": "vLLM", "args": ["--model=Qwen/Qwen3-0.6B"]})
    rsp = run(xr)
    c = workload(rsp)["spec"]["template"]["spec"]["containers"][0]
    assert [a for a in c["args"] if a.startswith("--model")] == ["--model=Qwen/Qwen3-0.6B"]
    assert all(m["mountPath"] != "/mnt/models" for m in c["volumeMounts"])


HOSTILE = [
    "; rm -rf /",
    "$(curl evil)",
    "`id`",
    "--model=../../etc",
    "../../x",
    "\uff52\uff4d \uff0d\uff52\uff46",  # full-width look-alike of "rm -rf"
]


def test_control_characters_in_args_are_rejected_with_a_message_and_nothing_changes():
    engine = {"framework": "Custom", "command": ["/serve", "a\nb"]}
    rsp = run(replica(nodes=1, engine=engine), cache=model_cache("Ready"))
    c = next(c for c in rsp.conditions if c.type == "WorkloadReady")
    assert c.reason == "InvalidSpec" and "engine.command" in c.message
    assert desired_resources(rsp) == {}


def test_custom_engine_passes_user_commands_verbatim():
    engine = {
        "framework": "Custom",
        "image": "ghcr.io/acme/server:1.0",
        "command": ["/serve", *HOSTILE],
        "args": HOSTILE,
        "worker": {"command": ["/join"], "args": HOSTILE},
        "env": [{"name": "EVIL", "value": "$(whoami); `id`"}],
    }
    rsp = run(replica(nodes=2, engine=engine), cache=model_cache("Ready"))
    pods = pod_templates(workload(rsp))
    leader, worker = (pods[r]["spec"]["containers"][0] for r in ("leader", "worker"))
    assert leader["command"] == ["/serve", *HOSTILE]
    assert leader["args"] == HOSTILE
    assert worker["command"] == ["/join"] and worker["args"] == HOSTILE
    assert {"name": "EVIL", "value": "$(whoami); `id`"} in leader["env"]


def test_exclusive_topology_and_rollout_settings_reach_the_lws():
    xr = replica(
        nodes=4,
        placement={"exclusiveTopology": "cloud.google.com/gke-nodepool"},
        rollout={"maxUnavailable": 2, "maxSurge": 1, "partition": 1},
        gang={"startupPolicy": "LeaderCreated", "restartPolicy": "None"},
    )
    lws = workload(run(xr, cache=model_cache("Ready")))
    assert lws["metadata"]["annotations"] == {
        "leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"
    }
    assert lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {
        "partition": 1,
        "maxUnavailable": 2,
        "maxSurge": 1,
    }
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "None"


@pytest.mark.parametrize(
    ("name", "cluster", "cache", "phase"),
    [
        ("cache flaps back to Hydrating", (GKE,), model_cache("Hydrating"), "Ready"),
        ("cache deleted", (GKE,), None, "Ready"),
        (
            "cluster disconnected",
            (inference_cluster("gke-us", connected=False),),
            model_cache("Ready"),
            "Ready",
        ),
        ("cluster deleted", (), model_cache("Ready"), "Ready"),
    ],
)
def test_a_running_workload_survives_uncertainty(name, cluster, cache, phase):
    xr = replica(nodes=2)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    observed = {
        WORKLOAD: observed_object(
            composed[WORKLOAD],
            remote_status={
                "readyReplicas": 1,
                "updatedReplicas": 1,
                "conditions": [{"type": "Available", "status": "True"}],
            },
        ),
        SERVICE: observed_object(composed[SERVICE]),
    }
    required: dict[str, Any] = {CLUSTER: list(cluster), CACHE: [cache] if cache else []}
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
    assert set(desired_resources(rsp)) == {WORKLOAD, SERVICE}, name
    assert desired_resources(rsp)[WORKLOAD]["spec"] == composed[WORKLOAD]["spec"]
    assert desired_status(rsp)["phase"] == phase
    assert "keeping the running workload" in desired_status(rsp)["message"]


def test_unresolved_requirements_keep_everything():
    xr = replica(nodes=1)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    rsp = RUNNER.run(run_function_request(xr, observed=composed))
    assert set(desired_resources(rsp)) == {WORKLOAD, SERVICE}


@pytest.mark.parametrize(
    ("status", "phase"),
    [
        (None, "Progressing"),
        ({"readyReplicas": 0, "updatedReplicas": 2, "replicas": 2}, "Progressing"),
        (
            {
                "readyReplicas": 1,
                "updatedReplicas": 2,
                "replicas": 2,
                "conditions": [{"type": "Available", "status": "False"}],
            },
            "Degraded",
        ),
        (
            {
                "readyReplicas": 2,
                "updatedReplicas": 1,
                "replicas": 2,
                "conditions": [
                    {"type": "Available", "status": "True"},
                    {"type": "UpdateInProgress", "status": "True"},
                ],
            },
            "Progressing",
        ),
        (
            {
                "readyReplicas": 2,
                "updatedReplicas": 2,
                "conditions": [{"type": "Available", "status": "True"}],
            },
            "Ready",
        ),
        (
            {
                "conditions": [
                    {
                        "type": "Progressing",
                        "status": "False",
                        "reason": "ProgressDeadlineExceeded",
                        "message": "image pull back-off",
                    }
                ]
            },
            "Failed",
        ),
    ],
    ids=[
        "not observed",
        "pods starting",
        "one of two down",
        "rolling update",
        "all available",
        "stuck",
    ],
)
def test_phase_from_the_observed_workload(status, phase):
    xr = replica(nodes=1, replicas=2)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    observed = (
        {}
        if status is None
        else {WORKLOAD: observed_object(composed[WORKLOAD], remote_status=status)}
    )
    rsp = run(xr, cache=model_cache("Ready"), observed=observed)
    assert desired_status(rsp)["phase"] == phase


def test_waiting_for_cluster_when_it_is_not_connected_and_nothing_runs_yet():
    rsp = run(
        replica(),
        cluster=(inference_cluster("gke-us", connected=False),),
        cache=model_cache("Ready"),
    )
    assert desired_resources(rsp) == {}
    assert desired_status(rsp)["phase"] == "WaitingForCluster"


def test_every_composed_manifest_is_valid():
    require_shared_schemas()
    for nodes in (1, 2, 4):
        for engine in (
            {"framework": "vLLM"},
            {"framework": "Custom", "command": ["/serve"], "worker": {"command": ["/join"]}},
        ):
            xr = replica(
                nodes=nodes,
                engine=engine,
                placement={"exclusiveTopology": "topology.kubernetes.io/zone"},
            )
            for obj in desired_resources(run(xr, cache=model_cache("Ready"))).values():
                assert_valid(
                    obj
                    | {"metadata": {"name": "x", "namespace": "ml-team", **obj.get("metadata", {})}}
                )
