"""ModelReplica workloads: what runs on the cluster for a placement (engine, pods, gang)."""

import pytest
from compose_model_replica.core import SERVICE, WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import (
    desired_resources,
    desired_status,
    run_function_request,
)
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from modelfleet_devtools.world import H100
from replica_world import (
    CLAIM,
    RUNNER,
    available_gang,
    cache_mount,
    model_cache,
    pod_templates,
    probes,
    replica,
    run,
    workload,
)


def test_done_when_a_2_node_vllm_replica_waits_for_its_cache_then_serves_a_valid_gang():
    """Nothing while the cache hydrates, then a valid LeaderWorkerSet
    whose leader and worker pods all mount the cache, then Ready once the gang is Available."""
    xr = replica(nodes=2)

    # 1. The cache is still downloading on gke-us: no workload, no GPU held.
    hydrating = run(xr, cache=model_cache("Hydrating", "downloading 312/1024 files"))
    assert desired_resources(hydrating) == {}
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
    assert leader["command"] == ["vllm", "serve"]
    assert leader["args"][0] == "/mnt/models/abc123def456"
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
    # A vLLM leader is Ready only once it serves, which needs its workers: started together.
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"
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
    assert worker["command"] == ["vllm", "serve"]
    assert worker["args"] == [*leader["args"], "--headless"]


def test_single_node_vllm_is_a_deployment_with_tensor_parallel_and_the_cache():
    rsp = run(replica(nodes=1), cache=model_cache("Ready"))
    deploy = workload(rsp)
    assert deploy["kind"] == "Deployment" and deploy["spec"]["replicas"] == 1
    c = deploy["spec"]["template"]["spec"]["containers"][0]
    assert (c["command"], c["args"][0]) == (["vllm", "serve"], "/mnt/models/abc123def456")
    assert cache_mount(deploy["spec"]["template"]) == (CLAIM, "/mnt/models/abc123def456")
    assert "--tensor-parallel-size=8" in c["args"]
    assert {e["name"]: e.get("value") for e in c["env"]}["MODELFLEET_GROUP_SIZE"] == "1"


def test_user_model_flag_wins_and_no_cache_mounts_nothing():
    xr = replica(cache=False, engine={"framework": "vLLM", "args": ["--model=Qwen/Qwen3-0.6B"]})
    rsp = run(xr)
    c = workload(rsp)["spec"]["template"]["spec"]["containers"][0]
    assert [a for a in c["args"] if a.startswith("--model")] == ["--model=Qwen/Qwen3-0.6B"]
    assert c["args"][0].startswith("--"), "no positional model besides the user's --model"
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


DEPLOYMENT_ROLLOUTS = [
    pytest.param(
        None,
        {"maxUnavailable": 1, "maxSurge": 0},
        id="defaults: one pod down at a time, never an extra GPU pod (not Kubernetes' 25%)",
    ),
    pytest.param(
        {"maxUnavailable": 0, "maxSurge": 1},
        {"maxUnavailable": 0, "maxSurge": 1},
        id="surge one pod, never fewer serving",
    ),
    pytest.param(
        {"maxUnavailable": 2, "partition": 1},
        {"maxUnavailable": 2, "maxSurge": 0},
        id="partition is for LeaderWorkerSets only",
    ),
]


@pytest.mark.parametrize(("rollout", "rolling_update"), DEPLOYMENT_ROLLOUTS)
def test_a_single_node_deployment_rolls_out_as_spec_rollout_says(rollout, rolling_update):
    spec = {"rollout": rollout} if rollout else {}
    deploy = workload(run(replica(nodes=1, replicas=2, **spec), cache=model_cache("Ready")))
    assert deploy["kind"] == "Deployment"
    assert deploy["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": rolling_update}


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


def test_vllm_gang_pods_run_no_shell_and_user_args_stay_arguments():
    engine = {"framework": "vLLM", "args": HOSTILE}
    lws = workload(run(replica(nodes=2, engine=engine), cache=model_cache("Ready")))
    for role, pod in pod_templates(lws).items():
        container = pod["spec"]["containers"][0]
        args = container["args"]
        assert container["command"] == ["vllm", "serve"], role
        # Each user value is one argv element: the first, not a flag, is `vllm serve`'s
        # positional model in the cache path's place; the rest follow the composed flags.
        assert args[0] == HOSTILE[0], role
        assert args[-(len(HOSTILE) - 1) :] == HOSTILE[1:], role
        assert not any(a.startswith("/mnt/models") for a in args), role


def test_custom_single_node_runs_exactly_the_users_command():
    engine = {"framework": "Custom", "command": ["/serve", "--listen=:9000"], "args": ["-v"]}
    c = workload(run(replica(nodes=1, engine=engine), cache=model_cache("Ready")))["spec"][
        "template"
    ]["spec"]["containers"][0]
    assert (c["command"], c["args"]) == (["/serve", "--listen=:9000"], ["-v"])


@pytest.mark.parametrize(("nodes", "kind"), [(1, "Deployment"), (2, "LeaderWorkerSet")])
def test_workload_objects_land_in_the_clusters_namespace_and_are_ready_when_available(nodes, kind):
    composed = desired_resources(run(replica(nodes=nodes), cache=model_cache("Ready")))
    assert set(composed) == {WORKLOAD, SERVICE}
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
    # Its turning Available is seen as it happens (provider-kubernetes' watch); the Service,
    # which has no status that matters, is only polled.
    assert workload_obj["spec"]["watch"] is True
    assert "watch" not in composed[SERVICE]["spec"]


HEALTH_9000 = {
    "httpGet": {"path": "/health", "port": 9000},
    "periodSeconds": 10,
    "timeoutSeconds": 5,
    "failureThreshold": 3,
}
TCP_9000 = {"tcpSocket": {"port": 9000}, "periodSeconds": 10, "failureThreshold": 3}
VLLM = {"framework": "vLLM"}
CUSTOM = {"framework": "Custom", "command": ["/serve"]}

# Ready means serving, on every layout: the serving pod is probed on its HTTP port, never on
# the launcher's port. A vLLM gang's leader serves only once its workers joined, so it is started
# LeaderCreated whatever was asked (LeaderReady would never create the workers).
# (case, nodes, engine, asked startupPolicy, composed startupPolicy, serving probe)
PROBE_CASES = [
    ("vLLM single node", 1, VLLM, "LeaderReady", None, HEALTH_9000),
    ("vLLM gang, leader first asked", 2, VLLM, "LeaderReady", "LeaderCreated", HEALTH_9000),
    ("vLLM gang started together", 2, VLLM, "LeaderCreated", "LeaderCreated", HEALTH_9000),
    ("Custom single node", 1, CUSTOM, "LeaderReady", None, TCP_9000),
    ("Custom gang, leader first", 2, CUSTOM, "LeaderReady", "LeaderReady", TCP_9000),
    ("Custom gang started together", 2, CUSTOM, "LeaderCreated", "LeaderCreated", TCP_9000),
]


@pytest.mark.parametrize(
    ("nodes", "engine", "asked", "startup", "probe"),
    [c[1:] for c in PROBE_CASES],
    ids=[c[0] for c in PROBE_CASES],
)
def test_the_serving_pod_is_ready_when_its_http_port_serves(nodes, engine, asked, startup, probe):
    xr = replica(nodes=nodes, engine={**engine, "port": 9000}, gang={"startupPolicy": asked})
    manifest = workload(run(xr, cache=model_cache("Ready")))
    assert manifest["spec"].get("startupPolicy") == startup
    serving = "leader" if nodes > 1 else "single"
    expected = {serving: probe} | ({"worker": None} if nodes > 1 else {})
    assert probes(manifest) == expected
    require_shared_schemas()
    assert_valid(manifest)


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


# LeaderWorkerSet v0.10.0's headless Services (pkg/controllers there): with the default
# `Shared` policy one named after the set for every group, with `UniquePerReplica` one per
# group named `<set>-<group index>`. It makes none where a Service of that name exists.
def lws_headless_services(lws, groups: int) -> set[str]:
    name = lws["metadata"]["name"]
    policy = (lws["spec"].get("networkConfig") or {}).get("subdomainPolicy", "Shared")
    return {name} if policy == "Shared" else {f"{name}-{g}" for g in range(groups)}


@pytest.mark.parametrize(
    ("case", "nodes", "replicas", "engine"),
    [
        ("a 2-node vLLM gang", 2, 1, VLLM),
        ("three 4-node vLLM gangs", 4, 3, VLLM),
        ("a Custom gang", 2, 2, CUSTOM),
    ],
)
def test_each_gang_reaches_its_leader_through_a_headless_service_the_serving_one_leaves_free(
    case, nodes, replicas, engine
):
    """The leader's address LWS gives every pod names its group's headless Service: a name the
    Service that serves must not take, or LWS never makes it and the address never resolves
    (seen on a real LWS: tests/e2e/test_real_gang_real.py)."""
    composed = desired_resources(
        run(replica(nodes=nodes, replicas=replicas, engine=engine), cache=model_cache("Ready"))
    )
    lws = composed[WORKLOAD]["spec"]["forProvider"]["manifest"]
    service = composed[SERVICE]["spec"]["forProvider"]["manifest"]
    assert lws["spec"]["networkConfig"] == {"subdomainPolicy": "UniquePerReplica"}, case
    headless = lws_headless_services(lws, replicas)
    assert len(headless) == replicas, case
    assert service["metadata"]["name"] not in headless, case
