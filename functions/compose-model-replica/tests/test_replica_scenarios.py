"""ModelReplica scenarios: placement + cluster + cache -> the workload composed, the phase said."""

import copy
from typing import Any

import pytest
from compose_model_replica.core import SERVICE, USAGE, WORKLOAD
from compose_model_replica.engines import LEADER_SCRIPT, WORKER_SCRIPT
from compose_model_replica.fn import CACHE, CLUSTER, run_function
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import (
    desired_resources,
    desired_status,
    events,
    run_function_request,
)
from modelfleet_devtools.validation import assert_valid, require_shared_schemas, validate_manifest
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


def cache_mount(pod: dict[str, Any]) -> tuple[str, str]:
    """(claim mounted at /mnt/models, where the engine is told the weights are)."""
    container = pod["spec"]["containers"][0]
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == "/mnt/models")
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
    env = {e["name"]: e.get("value") for e in container["env"]}
    return volume["persistentVolumeClaim"]["claimName"], env["MODELFLEET_MODEL_PATH"]


def available_gang(composed: dict[str, Any], groups: int = 1) -> dict[str, Any]:
    """The LeaderWorkerSet as the workload cluster reports it once every gang is up."""
    return observed_object(
        composed,
        remote_status={
            "replicas": groups,
            "readyReplicas": groups,
            "updatedReplicas": groups,
            "conditions": [{"type": "Available", "status": "True"}],
        },
        ready=True,
    )


def test_done_when_a_2_node_vllm_replica_waits_for_its_cache_then_serves_a_valid_gang():
    """Issue 6's done-when: nothing while the cache hydrates, then a valid LeaderWorkerSet
    whose leader and worker pods all mount the cache, then Ready once the gang is Available."""
    xr = replica(nodes=2)

    # 1. The cache is still downloading on gke-us: no workload, no GPU held; only the Usage
    #    that keeps the cache from being deleted under the replica.
    hydrating = run(xr, cache=model_cache("Hydrating", "downloading 312/1024 files"))
    assert set(desired_resources(hydrating)) == {USAGE}
    assert desired_status(hydrating)["phase"] == "WaitingForCache"
    assert "Hydrating" in desired_status(hydrating)["message"]
    assert "downloading 312/1024 files" in desired_status(hydrating)["message"]
    assert hydrating.desired.composite.ready == fnv1.READY_FALSE

    # 2. The cache is Ready: a LeaderWorkerSet gang of 2 and a Service to its leaders.
    composing = run(xr, cache=model_cache("Ready"))
    composed = desired_resources(composing)
    lws = workload(composing)
    require_shared_schemas()
    assert_valid(lws)
    assert lws["kind"] == "LeaderWorkerSet"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    for role, pod in pod_templates(lws).items():
        assert cache_mount(pod) == (CLAIM, "/mnt/models/abc123def456"), role
    leader = pod_templates(lws)["leader"]["spec"]["containers"][0]
    assert "--model=/mnt/models/abc123def456" in leader["args"]
    assert "--pipeline-parallel-size=2" in leader["args"]
    service = composed[SERVICE]["spec"]["forProvider"]["manifest"]
    assert service["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert desired_status(composing)["phase"] == "Progressing"
    assert composing.desired.composite.ready == fnv1.READY_FALSE

    # 3. The workload cluster reports the gang Available: the replica is Ready.
    ready = run(
        xr, cache=model_cache("Ready"), observed={WORKLOAD: available_gang(composed[WORKLOAD])}
    )
    assert desired_status(ready)["phase"] == "Ready"
    assert desired_status(ready)["readyReplicas"] == 1
    assert ready.desired.composite.ready == fnv1.READY_TRUE


def test_every_gang_pod_gets_gpus_shared_memory_pool_placement_and_identity_first():
    lws = workload(
        run(
            replica(nodes=2, engine={"framework": "vLLM", "env": [{"name": "A", "value": "1"}]}),
            cache=model_cache("Ready"),
        )
    )
    assert lws["spec"]["startupPolicy"] == "LeaderReady"
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert lws["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"partition": 0, "maxUnavailable": 1, "maxSurge": 0},
    }
    for role, pod in pod_templates(lws).items():
        container = pod["spec"]["containers"][0]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "8", role
        assert container["resources"]["requests"]["nvidia.com/gpu"] == "8", role
        shm = next(m for m in container["volumeMounts"] if m["mountPath"] == "/dev/shm")
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == shm["name"])
        assert volume["emptyDir"]["medium"] == "Memory", role
        assert pod["spec"]["nodeSelector"] == H100["nodeSelector"], role
        assert pod["spec"]["tolerations"] == H100["tolerations"], role
        assert container["env"] == [
            {"name": "MODELFLEET_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"},
            {"name": "MODELFLEET_RANK", "value": "$(LWS_WORKER_INDEX)"},
            {"name": "MODELFLEET_GROUP_SIZE", "value": "$(LWS_GROUP_SIZE)"},
            {"name": "MODELFLEET_MODEL_PATH", "value": "/mnt/models/abc123def456"},
            {"name": "A", "value": "1"},
        ], role
    leader = pod_templates(lws)["leader"]["spec"]["containers"][0]
    assert "--tensor-parallel-size=8" in leader["args"]
    worker = pod_templates(lws)["worker"]["spec"]["containers"][0]
    assert worker["command"] == [
        "/bin/sh",
        "-c",
        WORKER_SCRIPT,
        "modelfleet-worker",
        "$(LWS_LEADER_ADDRESS):6379",
    ]
    assert "ray start" in WORKER_SCRIPT and "--block" in WORKER_SCRIPT


def test_single_node_vllm_is_a_deployment_with_tensor_parallel_and_the_cache():
    rsp = run(replica(nodes=1), cache=model_cache("Ready"))
    deploy = workload(rsp)
    assert deploy["kind"] == "Deployment" and deploy["spec"]["replicas"] == 1
    c = deploy["spec"]["template"]["spec"]["containers"][0]
    assert "--model=/mnt/models/abc123def456" in c["args"]
    assert cache_mount(deploy["spec"]["template"]) == (CLAIM, "/mnt/models/abc123def456")
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
        USAGE: observed_object(composed[USAGE]),
    }
    required: dict[str, Any] = {CLUSTER: list(cluster), CACHE: [cache] if cache else []}
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
    assert set(desired_resources(rsp)) == {WORKLOAD, SERVICE, USAGE}, name
    assert desired_resources(rsp)[USAGE]["spec"] == composed[USAGE]["spec"]
    assert desired_resources(rsp)[WORKLOAD]["spec"] == composed[WORKLOAD]["spec"]
    assert desired_status(rsp)["phase"] == phase
    assert "keeping the running workload" in desired_status(rsp)["message"]


def test_unresolved_requirements_keep_everything():
    xr = replica(nodes=1)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    rsp = RUNNER.run(run_function_request(xr, observed=composed))
    assert set(desired_resources(rsp)) == {WORKLOAD, SERVICE, USAGE}


def with_workload_status(xr, status):
    """Reconcile `xr` (cache Ready) once its workload reports `status` (None: not yet seen)."""
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    observed = (
        {}
        if status is None
        else {WORKLOAD: observed_object(composed[WORKLOAD], remote_status=status)}
    )
    return run(xr, cache=model_cache("Ready"), observed=observed)


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
    rsp = with_workload_status(xr, status)
    assert desired_status(rsp)["phase"] == phase


def test_waiting_for_cluster_when_it_is_not_connected_and_nothing_runs_yet():
    rsp = run(
        replica(),
        cluster=(inference_cluster("gke-us", connected=False),),
        cache=model_cache("Ready"),
    )
    assert set(desired_resources(rsp)) == {USAGE}  # no workload; the cache is protected
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


def cache_status(*rows: dict[str, Any]) -> dict[str, Any]:
    cache = model_cache("Ready")
    cache["status"]["clusters"] = list(rows)
    return cache


@pytest.mark.parametrize(
    ("cache", "says"),
    [
        (
            model_cache("Pending", "claim not bound yet"),
            "is Pending on gke-us: claim not bound yet",
        ),
        (model_cache("Hydrating", "downloading"), "is Hydrating on gke-us: downloading"),
        (model_cache("Failed", "401 from Hugging Face"), "is Failed on gke-us: 401 from Hugging"),
        (cache_status(), "does not stage to cluster gke-us"),
        (cache_status({"name": "other", "phase": "Ready"}), "does not stage to cluster gke-us"),
        (cache_status({"name": "gke-us", "phase": "Ready"}), "reports no claimName"),
        (
            cache_status({"name": "gke-us", "phase": "Ready", "claimName": CLAIM, "path": "../x"}),
            "outside its claim",
        ),
        (
            cache_status(
                {"name": "gke-us", "phase": "Ready", "claimName": CLAIM, "path": "$(HF_TOKEN)"}
            ),
            "unusable path on gke-us: '$(HF_TOKEN)'",
        ),
    ],
    ids=[
        "claim not bound",
        "weights downloading",
        "download failed",
        "cache has not reported any cluster",
        "cache stages elsewhere",
        "ready row without a claim",
        "path escaping the claim",
        "path that is not a directory name",
    ],
)
def test_nothing_is_composed_until_the_cache_is_ready_here_and_the_status_says_why(cache, says):
    for nodes in (1, 2):
        rsp = run(replica(nodes=nodes), cache=cache)
        assert set(desired_resources(rsp)) == {USAGE}  # no workload, no GPU
        assert desired_status(rsp)["phase"] == "WaitingForCache"
        assert says in desired_status(rsp)["message"]
        assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_a_referenced_cache_that_does_not_exist_waits_and_names_it():
    rsp = RUNNER.run(run_function_request(replica(nodes=2), required={CLUSTER: [GKE], CACHE: []}))
    assert desired_resources(rsp) == {}
    assert desired_status(rsp)["phase"] == "WaitingForCache"
    assert "ModelCache kimi-k2 not found" in desired_status(rsp)["message"]


def test_claim_and_path_come_from_the_cache_status_as_written():
    # A bring-your-own claim: the name is the user's, nothing we could recompute.
    cache = cache_status(
        {"name": "gke-us", "phase": "Ready", "claimName": "shared-models", "path": "mc-x/f00d"}
    )
    pods = pod_templates(workload(run(replica(nodes=2), cache=cache)))
    assert {role: cache_mount(pod) for role, pod in pods.items()} == {
        "leader": ("shared-models", "/mnt/models/mc-x/f00d"),
        "worker": ("shared-models", "/mnt/models/mc-x/f00d"),
    }


MODEL_PATHS = [
    # (cache path in the status, engine, --model the server gets); the weights are always at
    # /mnt/models/<path>, told to every engine as MODELFLEET_MODEL_PATH
    pytest.param("abc123", {"framework": "vLLM"}, ["--model=/mnt/models/abc123"], id="managed"),
    pytest.param(
        "mc-x/f00d",
        {"framework": "vLLM"},
        ["--model=/mnt/models/mc-x/f00d"],
        id="bring-your-own claim: per-cache sub-directory",
    ),
    pytest.param(
        "abc123",
        {"framework": "vLLM", "args": ["--model", "/mnt/models/abc123/snapshots/v2"]},
        ["--model"],
        id="the user's --model wins",
    ),
    pytest.param(
        "abc123",
        {"framework": "Custom", "command": ["/serve"]},
        [],
        id="Custom: nothing injected in argv, the path in env",
    ),
]


@pytest.mark.parametrize(("path", "engine", "model_args"), MODEL_PATHS)
def test_every_engine_pod_mounts_the_whole_claim_read_only_and_finds_the_weights_under_it(
    path, engine, model_args
):
    cache = cache_status({"name": "gke-us", "phase": "Ready", "claimName": CLAIM, "path": path})
    for nodes in (1, 2):
        pods = pod_templates(workload(run(replica(nodes=nodes, engine=engine), cache=cache)))
        for role, pod in pods.items():
            container = pod["spec"]["containers"][0]
            [mount] = [m for m in container["volumeMounts"] if m["name"] == "model-cache"]
            assert mount == {"name": "model-cache", "mountPath": "/mnt/models", "readOnly": True}
            assert cache_mount(pod) == (CLAIM, f"/mnt/models/{path}"), role
            names = [e["name"] for e in container["env"]]
            assert names.index("MODELFLEET_MODEL_PATH") == 3, role  # after identity, before user
        serving = pods.get("single", pods.get("leader"))["spec"]["containers"][0]
        argv = serving.get("command", []) + serving.get("args", [])
        assert [a for a in argv if a.startswith("--model")] == model_args


def test_single_node_identity_is_the_pod_itself_rank_0_of_a_group_of_1():
    xr = replica(nodes=1, engine={"framework": "vLLM", "env": [{"name": "A", "value": "1"}]})
    rsp = run(xr, cache=model_cache("Ready"))
    env = workload(rsp)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [
        {
            "name": "MODELFLEET_LEADER_ADDRESS",
            "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
        },
        {"name": "MODELFLEET_RANK", "value": "0"},
        {"name": "MODELFLEET_GROUP_SIZE", "value": "1"},
        {"name": "MODELFLEET_MODEL_PATH", "value": "/mnt/models/abc123def456"},
        {"name": "A", "value": "1"},
    ]


GANG_STATUSES = [
    ("gang not observed yet", None, "Progressing"),
    (
        "one of two gangs up",
        {
            "replicas": 2,
            "readyReplicas": 1,
            "updatedReplicas": 2,
            "conditions": [{"type": "Available", "status": "True"}],
        },
        "Degraded",
    ),
    (
        "gangs rolling to a new version",
        {
            "replicas": 2,
            "readyReplicas": 2,
            "updatedReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "UpdateInProgress", "status": "True"},
            ],
        },
        "Progressing",
    ),
    (
        "every gang available",
        {
            "replicas": 2,
            "readyReplicas": 2,
            "updatedReplicas": 2,
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "False"},
            ],
        },
        "Ready",
    ),
]


@pytest.mark.parametrize(
    ("status", "phase"), [c[1:] for c in GANG_STATUSES], ids=[c[0] for c in GANG_STATUSES]
)
def test_gang_phase_from_the_observed_leader_worker_set(status, phase):
    xr = replica(nodes=2, replicas=2)
    rsp = with_workload_status(xr, status)
    assert desired_status(rsp)["phase"] == phase
    assert desired_status(rsp)["replicas"] == 2
    assert desired_status(rsp)["readyReplicas"] == (status or {}).get("readyReplicas", 0)
    assert (rsp.desired.composite.ready == fnv1.READY_TRUE) == (phase == "Ready")


def test_a_deployment_that_cannot_create_pods_is_failed_with_the_reason():
    xr = replica(nodes=1)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    status = {
        "replicas": 0,
        "conditions": [
            {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": "exceeded quota: gpu, requested: nvidia.com/gpu=8",
            }
        ],
    }
    observed = {WORKLOAD: observed_object(composed[WORKLOAD], remote_status=status)}
    rsp = run(xr, cache=model_cache("Ready"), observed=observed)
    assert desired_status(rsp)["phase"] == "Failed"
    assert "exceeded quota" in desired_status(rsp)["message"]
    assert events(rsp) and events(rsp)[0][0] == "Warning"


def test_events_are_emitted_on_transitions_only():
    xr = replica(nodes=2)
    first = run(xr, cache=model_cache("Hydrating"))
    assert [sev for sev, _ in events(first)] == ["Normal"]
    xr["status"] = {
        "conditions": [
            {
                "type": c.type,
                "status": "True" if c.status == fnv1.STATUS_CONDITION_TRUE else "False",
                "reason": c.reason,
            }
            for c in first.conditions
        ]
    }
    again = run(xr, cache=model_cache("Hydrating", "still downloading"))
    assert events(again) == []
    composed = run(xr, cache=model_cache("Ready"))
    assert [sev for sev, _ in events(composed)] == ["Normal"]


def test_vllm_gang_leader_shell_is_a_fixed_script_and_user_args_stay_arguments():
    engine = {"framework": "vLLM", "args": HOSTILE}
    lws = workload(run(replica(nodes=2, engine=engine), cache=model_cache("Ready")))
    leader = pod_templates(lws)["leader"]["spec"]["containers"][0]
    assert leader["command"] == ["/bin/sh", "-c", LEADER_SCRIPT, "modelfleet-leader"]
    assert all(h not in LEADER_SCRIPT for h in HOSTILE)
    assert leader["args"][-len(HOSTILE) :] == HOSTILE  # each one its own argv element
    # The user's --model wins over the cache path (one --model only).
    assert [a for a in leader["args"] if a.startswith("--model")] == ["--model=../../etc"]


def test_custom_single_node_runs_exactly_the_users_command():
    engine = {"framework": "Custom", "command": ["/serve", "--listen=:9000"], "args": ["-v"]}
    c = workload(run(replica(nodes=1, engine=engine), cache=model_cache("Ready")))["spec"][
        "template"
    ]["spec"]["containers"][0]
    assert (c["command"], c["args"]) == (["/serve", "--listen=:9000"], ["-v"])


@pytest.mark.parametrize(("nodes", "kind"), [(1, "Deployment"), (2, "LeaderWorkerSet")])
def test_workload_objects_land_in_the_clusters_namespace_and_are_ready_when_available(nodes, kind):
    composed = desired_resources(run(replica(nodes=nodes), cache=model_cache("Ready")))
    assert set(composed) == {WORKLOAD, SERVICE, USAGE}  # the Usage lives on the control plane
    for key, obj in ((k, composed[k]) for k in (WORKLOAD, SERVICE)):
        assert (obj["apiVersion"], obj["kind"]) == ("kubernetes.m.crossplane.io/v1alpha1", "Object")
        assert obj["spec"]["providerConfigRef"] == {
            "kind": "ClusterProviderConfig",
            "name": "gke-us",
        }
        manifest = obj["spec"]["forProvider"]["manifest"]
        assert manifest["metadata"]["namespace"] == "modelfleet", key
        assert manifest["metadata"]["labels"]["modelfleet.io/modelreplica"] == "kimi-k2-gke-us"
        assert manifest["metadata"]["labels"]["modelfleet.io/namespace"] == "ml-team"
    workload_obj = composed[WORKLOAD]
    assert workload_obj["spec"]["forProvider"]["manifest"]["kind"] == kind
    readiness = workload_obj["spec"]["readiness"]
    assert readiness["policy"] == "DeriveFromCelQuery"
    assert "c.type == 'Available' && c.status == 'True'" in readiness["celQuery"]


def probes(lws: dict[str, Any]) -> dict[str, Any]:
    return {
        role: pod["spec"]["containers"][0].get("readinessProbe")
        for role, pod in pod_templates(lws).items()
    }


def test_a_vllm_gang_started_leader_first_cannot_deadlock():
    # LeaderReady creates workers only once the leader is Ready, and a vLLM leader serves
    # only once its workers joined: the leader is Ready when its Ray head is up, and the
    # workers are Ready only while the leader serves, so Available still means serving.
    gang = {"startupPolicy": "LeaderReady", "restartPolicy": "RecreateGroupOnPodRestart"}
    lws = workload(run(replica(nodes=2, gang=gang), cache=model_cache("Ready")))
    assert lws["spec"]["startupPolicy"] == "LeaderReady"
    leader, worker = probes(lws)["leader"], probes(lws)["worker"]
    assert leader["tcpSocket"]["port"] == 6379
    assert worker["exec"]["command"][:2] == ["python3", "-c"]
    assert worker["exec"]["command"][-1] == "8000"  # the serving port, as an argument
    assert "LWS_LEADER_ADDRESS" in worker["exec"]["command"][2]


@pytest.mark.parametrize(
    ("engine", "startup"),
    [
        ({"framework": "vLLM"}, "LeaderCreated"),
        ({"framework": "Custom", "command": ["/serve"]}, "LeaderReady"),
        ({"framework": "Custom", "command": ["/serve"]}, "LeaderCreated"),
    ],
    ids=["vLLM started together", "Custom leader first", "Custom started together"],
)
def test_other_gangs_are_ready_when_the_leader_serves(engine, startup):
    xr = replica(nodes=2, engine={**engine, "port": 9000}, gang={"startupPolicy": startup})
    lws = workload(run(xr, cache=model_cache("Ready")))
    assert lws["spec"]["startupPolicy"] == startup
    assert probes(lws) == {
        "leader": {"tcpSocket": {"port": 9000}, "periodSeconds": 10, "failureThreshold": 3},
        "worker": None,
    }


def test_a_replica_asks_for_its_cluster_by_name_and_its_cache_in_its_namespace():
    wanted = RUNNER.run(run_function_request(replica(nodes=2))).requirements.resources
    cluster, cache = wanted[CLUSTER], wanted[CACHE]
    assert (cluster.kind, cluster.match_name) == ("InferenceCluster", "gke-us")
    assert (cache.kind, cache.match_name, cache.namespace) == ("ModelCache", "kimi-k2", "ml-team")
    assert (
        CACHE not in RUNNER.run(run_function_request(replica(cache=False))).requirements.resources
    )


def test_a_replica_placed_with_zero_gpus_per_node_claims_no_gpu():
    rsp = run(replica(nodes=1, gpusPerNode=0), cache=model_cache("Ready"))
    container = workload(rsp)["spec"]["template"]["spec"]["containers"][0]
    assert "nvidia.com/gpu" not in container.get("resources", {}).get("limits", {})


# -- the Usage: a ModelCache cannot be deleted while a replica uses it -----------------------


def observed_usage(cache: str) -> dict[str, Any]:
    """The Usage as composed for a replica of `cache`, observed on the control plane."""
    cache_obj = model_cache("Hydrating")
    cache_obj["metadata"]["name"] = cache
    composed = desired_resources(run(replica(modelCacheRef={"name": cache}), cache=cache_obj))
    return observed_object(composed[USAGE], ready=True)


def running(xr: dict[str, Any]) -> dict[str, Any]:
    """The workload and Service of `xr` as composed from kimi-k2, Available on the cluster."""
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    return {
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


NOT_CONNECTED = inference_cluster("gke-us", connected=False)
UNRESOLVED = object()  # the requirement was not resolved in this call

USAGE_CASES = [
    # (scenario, replica spec, cluster, cache, observed Usage of, running, the Usage protects)
    (
        "cache Ready: the serving replica uses it",
        {},
        GKE,
        model_cache("Ready"),
        None,
        False,
        "kimi-k2",
    ),
    (
        "cache still hydrating: protected before any workload",
        {},
        GKE,
        model_cache("Hydrating"),
        None,
        False,
        "kimi-k2",
    ),
    (
        "cluster not connected: the cache is protected all the same",
        {},
        NOT_CONNECTED,
        model_cache("Ready"),
        None,
        False,
        "kimi-k2",
    ),
    ("cache not found, nothing observed: nothing to protect", {}, GKE, None, None, False, None),
    (
        "cache not found (transiently), Usage observed: kept",
        {},
        GKE,
        None,
        "kimi-k2",
        True,
        "kimi-k2",
    ),
    ("cache requirement unresolved: Usage kept", {}, GKE, UNRESOLVED, "kimi-k2", True, "kimi-k2"),
    (
        "invalid spec: Usage kept",
        {"engine": {"framework": "Custom"}},
        GKE,
        model_cache("Ready"),
        "kimi-k2",
        True,
        "kimi-k2",
    ),
    (
        "replica switched to a cache not Ready yet: the running workload's cache stays protected",
        {"modelCacheRef": {"name": "qwen"}},
        GKE,
        model_cache("Hydrating"),
        "kimi-k2",
        True,
        "kimi-k2",
    ),
    ("no modelCacheRef: no Usage", {"modelCacheRef": None}, GKE, None, None, False, None),
    (
        "modelCacheRef removed by the user: the Usage goes with it",
        {"modelCacheRef": None},
        GKE,
        None,
        "kimi-k2",
        True,
        None,
    ),
]


@pytest.mark.parametrize(
    ("spec", "cluster", "cache", "observed_of", "workload_running", "protects"),
    [pytest.param(*case[1:], id=case[0]) for case in USAGE_CASES],
)
def test_a_usage_protects_the_cache_while_the_replica_uses_it(
    spec, cluster, cache, observed_of, workload_running, protects
):
    xr = replica(nodes=2, **spec)
    if spec.get("modelCacheRef", ...) is None:
        del xr["spec"]["modelCacheRef"]
    observed = running(replica(nodes=2)) if workload_running else {}
    if observed_of:
        observed[USAGE] = observed_usage(observed_of)
    required: dict[str, Any] = {CLUSTER: [cluster]}
    if cache is not UNRESOLVED and "modelCacheRef" in xr["spec"]:
        required[CACHE] = [cache] if cache else []
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
    usage = desired_resources(rsp).get(USAGE)
    if protects is None:
        assert usage is None
        return
    assert usage is not None
    assert usage["apiVersion"] == "protection.crossplane.io/v1beta1" and usage["kind"] == "Usage"
    assert usage["spec"]["of"] == {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "resourceRef": {"name": protects},
    }
    assert usage["spec"]["by"] == {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "resourceRef": {"name": "kimi-k2-gke-us"},
    }
    # A refused deletion is carried out once the replica (and so the Usage) is gone.
    assert usage["spec"]["replayDeletion"] is True
    assert "ModelReplica ml-team/kimi-k2-gke-us" in usage["spec"]["reason"]
    assert usage["metadata"]["labels"]["modelfleet.io/modelreplica"] == "kimi-k2-gke-us"
    assert usage["metadata"]["labels"]["modelfleet.io/namespace"] == "ml-team"
    if workload_running:  # the running workload is never dropped alongside
        assert WORKLOAD in desired_resources(rsp)


def test_the_usage_validates_against_crossplanes_crd():
    require_shared_schemas()
    for cache in (model_cache("Hydrating"), model_cache("Ready")):
        usage = desired_resources(run(replica(nodes=2), cache=cache))[USAGE]
        # Crossplane names composed resources and puts them in the XR's namespace.
        assert_valid(
            usage | {"metadata": {**usage["metadata"], "name": "x", "namespace": "ml-team"}}
        )
    # The same check rejects what Crossplane's CRD rejects (CEL included), so it can fail.
    stray = copy.deepcopy(usage)
    del stray["spec"]["by"], stray["spec"]["reason"]
    stray["spec"]["of"]["resourceRef"]["namespace"] = "other-team"
    errors = " ".join(validate_manifest(stray | {"metadata": {"name": "x"}}))
    assert 'either "spec.by" or "spec.reason" must be specified' in errors
    assert 'cross-namespace "spec.of" is not allowed without "spec.by"' in errors
