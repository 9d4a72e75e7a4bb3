"""ModelDeployment scenarios: where groups land, and why they do not."""

import pytest
from compose_model_deployment.eligibility import SHARED_STORAGE_MESSAGE
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from deployment_world import (
    RUNNER,
    cache_on,
    deployment,
    desired_replicas,
    other_replica,
    placement,
    rows,
    schedule,
)
from modelfleet_devtools.requests import (
    conditions,
    desired_status,
    events,
    run_function_request,
)
from modelfleet_devtools.validation import assert_valid
from modelfleet_devtools.world import H100, inference_cluster

RWX = inference_cluster("gke-us")
NO_RWX = inference_cluster("onprem-eu", storage_class=None)
A100 = {**H100, "name": "a100", "nodeCount": 2, "gpu": {"count": 4, "memoryGiB": 40}}


def reason(rsp, typ="Scheduled"):
    c = conditions(rsp)[typ]
    return (c.status == fnv1.STATUS_CONDITION_TRUE, c.reason)


def test_seed_case_a_1_2_tb_model_lands_only_where_there_is_shared_storage():
    # 1200 GiB over 8 x 80 GiB per node -> 2-node groups.
    xr = deployment(replicas=1, modelCacheRef={"name": "kimi-k2"}, resources={"vramGiB": 1200})
    rsp = schedule(xr, [RWX, NO_RWX], cache=cache_on("gke-us"))
    assert placement(rsp) == {"gke-us": 1}
    replica = next(iter(desired_replicas(rsp).values()))
    assert (replica["spec"]["nodes"], replica["spec"]["gpusPerNode"]) == (2, 8)
    assert replica["spec"]["nodeSelector"] == H100["nodeSelector"]
    assert replica["spec"]["modelCacheRef"] == {"name": "kimi-k2"}
    assert reason(rsp) == (True, "Scheduled")
    rejected = rows(rsp)["onprem-eu"]
    assert rejected["replicas"] == 0
    assert f"{SHARED_STORAGE_MESSAGE} onprem-eu" in rejected["message"]


def test_multi_node_without_any_shared_storage_is_rejected_with_the_spec_message():
    xr = deployment(replicas=1, modelCacheRef={"name": "kimi-k2"}, resources={"vramGiB": 1200})
    rsp = schedule(xr, [NO_RWX], cache=cache_on("onprem-eu"))
    assert placement(rsp) == {}
    ok, why = reason(rsp)
    assert (ok, why) == (False, "SharedStorageRequired")
    assert "multi-node model requires shared storage on the inference cluster onprem-eu" in (
        conditions(rsp)["Scheduled"].message
    )


def test_multi_node_with_storage_but_no_cache_gets_the_spec_message_and_asks_for_a_cache():
    # SPEC: a multi-node group needs RWX storage *and* a cache; "otherwise" the message is
    # the same words, naming the cluster, whichever of the two is missing.
    xr = deployment(replicas=1, nodes=2)
    rsp = schedule(xr, [RWX])
    assert reason(rsp) == (False, "SharedStorageRequired")
    for message in (rows(rsp)["gke-us"]["message"], conditions(rsp)["Scheduled"].message):
        assert f"{SHARED_STORAGE_MESSAGE} gke-us" in message
        assert "spec.modelCacheRef" in message


def test_single_node_model_needs_no_storage_and_uses_the_pool_gpus():
    xr = deployment(replicas=2, resources={"vramGiB": 16})
    rsp = schedule(xr, [NO_RWX])
    assert placement(rsp) == {"onprem-eu": 2}
    replica = next(iter(desired_replicas(rsp).values()))
    assert (replica["spec"]["nodes"], replica["spec"]["gpusPerNode"]) == (1, 8)


def test_replicas_spread_over_clusters_deterministically():
    clusters = [inference_cluster(n) for n in ("c", "a", "b")]
    rsp = schedule(deployment(replicas=4), clusters)
    assert placement(rsp) == {"a": 2, "b": 1, "c": 1}
    assert desired_status(rsp)["summary"]["ready"] == "0/4"


def test_capacity_counts_other_teams_replicas():
    # 4 nodes per cluster; another team runs 1 x 3-node group on gke-us.
    xr = deployment(replicas=2, nodes=2, modelCacheRef={"name": "kimi-k2"})
    others = [other_replica("gke-us", "h100", 1, 3)]
    b = inference_cluster("gke-b")
    rsp = schedule(xr, [RWX, b], cache=cache_on("gke-us", "gke-b"), others=others)
    assert placement(rsp) == {"gke-b": 2}


def test_insufficient_capacity_places_what_fits_and_says_so():
    xr = deployment(replicas=3, nodes=2, modelCacheRef={"name": "kimi-k2"})
    rsp = schedule(xr, [RWX], cache=cache_on("gke-us"))
    assert placement(rsp) == {"gke-us": 2}
    assert reason(rsp) == (False, "InsufficientCapacity")


def test_pool_with_too_few_gpus_is_not_a_candidate():
    small = inference_cluster("small", node_pools=[A100])
    rsp = schedule(deployment(resources={"gpusPerNode": 8}), [small])
    assert placement(rsp) == {}
    assert reason(rsp) == (False, "InsufficientCapacity")
    assert "fewer than gpusPerNode 8" in rows(rsp)["small"]["message"]


def test_deployment_with_a_cache_goes_only_where_the_cache_is():
    b = inference_cluster("gke-b")
    xr = deployment(replicas=2, modelCacheRef={"name": "kimi-k2"})
    rsp = schedule(xr, [RWX, b], cache=cache_on("gke-us"))
    assert placement(rsp) == {"gke-us": 2}
    assert "does not stage" in rows(rsp)["gke-b"]["message"]


def test_missing_cache_holds_placement():
    xr = deployment(replicas=1, modelCacheRef={"name": "kimi-k2"})
    placed = desired_replicas(schedule(xr, [RWX], cache=cache_on("gke-us")))
    rsp = schedule(xr, [RWX], cache=None, observed=placed)
    assert reason(rsp) == (False, "ModelCacheNotFound")
    assert set(desired_replicas(rsp)) == set(placed)


def test_no_matching_cluster():
    xr = deployment(clusterSelector={"matchLabels": {"modelfleet.io/region": "mars"}})
    rsp = schedule(xr, [RWX])
    assert reason(rsp) == (False, "NoClusters")
    assert rsp.desired.composite.ready == fnv1.READY_FALSE


UNRESOLVED = [
    # (case, requirements Crossplane has not resolved, words the Scheduled message names)
    (
        "nothing resolved yet",
        ("inference-clusters", "model-cache", "model-replicas"),
        ["matching spec.clusterSelector, the fleet's ModelReplicas and ModelCache kimi-k2"],
    ),
    ("clusters", ("inference-clusters",), ["the InferenceClusters matching spec.clusterSelector;"]),
    ("cache", ("model-cache",), ["ModelCache kimi-k2"]),
    ("other replicas", ("model-replicas",), ["the fleet's ModelReplicas"]),
]


@pytest.mark.parametrize(
    ("unresolved", "named"), [pytest.param(*case[1:], id=case[0]) for case in UNRESOLVED]
)
def test_unresolved_inputs_keep_every_replica_and_say_what_is_awaited(unresolved, named):
    xr = deployment(replicas=2, modelCacheRef={"name": "kimi-k2"})
    first = schedule(xr, [RWX], cache=cache_on("gke-us"))
    placed = desired_replicas(first)
    xr["status"] = desired_status(first) | {
        "conditions": [{"type": "Scheduled", "status": "True", "reason": "Scheduled"}]
    }
    required = {
        "inference-clusters": [RWX],
        "model-cache": [cache_on("gke-us")],
        "model-replicas": [],
    }
    for name in unresolved:
        del required[name]
    rsp = RUNNER.run(run_function_request(xr, observed=placed, required=required))
    assert desired_replicas(rsp) == placed
    assert desired_status(rsp) == desired_status(first)  # the last placement still shown
    assert rsp.desired.composite.ready == fnv1.READY_FALSE
    # Scheduled keeps its status (the placement is not known to be wrong) and says why.
    assert reason(rsp) == (True, "Resolving")
    message = conditions(rsp)["Scheduled"].message
    assert message.startswith("waiting for Crossplane to resolve ")
    assert all(words in message for words in named), message
    assert ("ModelCache" in message) == ("model-cache" in unresolved)  # only what is awaited
    assert "kept as it is" in message
    assert events(rsp) == [("Normal", f"Scheduled Resolving: {message}")]


@pytest.mark.parametrize(
    "flap",
    [
        inference_cluster("gke-us", connected=False),
        inference_cluster("gke-us", node_pools=[]),
        {
            "apiVersion": "modelfleet.io/v1alpha1",
            "kind": "InferenceCluster",
            "metadata": {"name": "gke-us"},
        },
    ],
    ids=["disconnected", "pools missing from status", "status gone"],
)
def test_a_flapping_cluster_keeps_its_replica(flap):
    xr = deployment(replicas=2)
    placed = desired_replicas(schedule(xr, [RWX]))
    rsp = schedule(xr, [flap], observed=placed)
    assert placement(rsp) == {"gke-us": 2}


def test_a_replica_kept_through_a_flap_is_carried_as_observed_with_the_new_count():
    xr = deployment(replicas=2)
    [(key, replica)] = desired_replicas(schedule(xr, [RWX])).items()
    seen = replica | {
        "metadata": replica["metadata"] | {"uid": "3f1c", "annotations": {"team": "ml"}},
        "status": {"phase": "Ready", "readyReplicas": 2},
    }
    xr["spec"]["replicas"] = 1  # scaled down while the cluster is disconnected
    flap = inference_cluster("gke-us", connected=False)
    kept = desired_replicas(schedule(xr, [flap], observed={key: seen}))[key]
    assert kept["spec"] == replica["spec"] | {"replicas": 1}
    # Carried, not rebuilt: what others wrote stays, server-set metadata and status go.
    assert kept["metadata"] == replica["metadata"] | {"annotations": {"team": "ml"}}
    assert "status" not in kept


def test_a_deleted_or_unmatched_cluster_loses_its_replica():
    xr = deployment(replicas=1, clusterSelector={"matchLabels": {"tier": "gold"}})
    gold = inference_cluster("gold", labels={"tier": "gold"})
    placed = desired_replicas(schedule(xr, [gold]))
    demoted = inference_cluster("gold", labels={"tier": "bronze"})
    assert placement(schedule(xr, [demoted], observed=placed)) == {}


def test_scale_subresource_replicas_drive_placement():
    clusters = [inference_cluster(n) for n in ("a", "b")]
    xr = deployment(replicas=1)
    one = desired_replicas(schedule(xr, clusters))
    xr["spec"]["replicas"] = 3  # kubectl scale md/kimi-k2 --replicas 3
    rsp = schedule(xr, clusters, observed=one)
    assert placement(rsp) == {"a": 2, "b": 1}
    assert desired_status(rsp)["replicas"]["desired"] == 3


def test_ready_counts_from_the_observed_replicas():
    xr = deployment(replicas=1)
    placed = desired_replicas(schedule(xr, [RWX]))
    key = next(iter(placed))
    placed[key]["status"] = {"phase": "Ready", "readyReplicas": 1, "replicas": 1}
    rsp = schedule(xr, [RWX], observed=placed)
    assert desired_status(rsp)["summary"]["ready"] == "1/1"
    assert rows(rsp)["gke-us"]["phase"] == "Ready"
    assert reason(rsp, "Available") == (True, "Available")
    assert rsp.desired.composite.ready == fnv1.READY_TRUE


def test_composed_replicas_are_valid_model_replicas():
    xr = deployment(
        replicas=3,
        modelCacheRef={"name": "kimi-k2"},
        resources={"vramGiB": 1200},
        placement={"exclusiveTopology": "cloud.google.com/gke-nodepool"},
    )
    for obj in desired_replicas(schedule(xr, [RWX], cache=cache_on("gke-us"))).values():
        assert_valid(obj | {"metadata": {**obj["metadata"], "namespace": "ml-team"}})


def test_each_cluster_gets_one_model_replica_with_the_fully_resolved_placement():
    engine = {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0", "args": ["--x"]}
    xr = deployment(
        replicas=3,
        modelCacheRef={"name": "kimi-k2"},
        resources={"vramGiB": 1200},
        engine=engine,
        rollout={"maxUnavailable": 1, "maxSurge": 0, "partition": 0},
        gang={"startupPolicy": "LeaderReady", "restartPolicy": "RecreateGroupOnPodRestart"},
        placement={"exclusiveTopology": "cloud.google.com/gke-nodepool"},
    )
    clusters = [RWX, inference_cluster("gke-b")]
    composed = desired_replicas(schedule(xr, clusters, cache=cache_on("gke-us", "gke-b")))
    assert sorted(composed) == ["replica-gke-b", "replica-gke-us"]
    us = composed["replica-gke-us"]
    assert us["kind"] == "ModelReplica"
    assert us["metadata"]["labels"] == {
        "modelfleet.io/modeldeployment": "kimi-k2",
        "modelfleet.io/namespace": "ml-team",
        "modelfleet.io/cluster": "gke-us",
    }
    assert us["spec"] == {
        "clusterName": "gke-us",
        "replicas": 1,
        "nodes": 2,
        "gpusPerNode": 8,
        "nodePool": "h100",
        "nodeSelector": H100["nodeSelector"],
        "tolerations": H100["tolerations"],
        "modelCacheRef": {"name": "kimi-k2"},
        "engine": {**engine, "port": 8000},  # the XRD's defaults, resolved
        "rollout": xr["spec"]["rollout"],
        "gang": xr["spec"]["gang"],
        "placement": xr["spec"]["placement"],
    }
    assert composed["replica-gke-b"]["spec"]["replicas"] == 2  # ties: by name


def test_scale_down_removes_from_the_most_loaded_cluster_first():
    clusters = [inference_cluster(n) for n in ("a", "b", "c")]
    xr = deployment(replicas=4)
    four = desired_replicas(schedule(xr, clusters))
    assert placement(schedule(xr, clusters, observed=four)) == {"a": 2, "b": 1, "c": 1}
    xr["spec"]["replicas"] = 3
    three = schedule(xr, clusters, observed=four)
    assert placement(three) == {"a": 1, "b": 1, "c": 1}
    xr["spec"]["replicas"] = 1
    one = schedule(xr, clusters, observed=desired_replicas(three))
    assert placement(one) == {"a": 1}  # ties: the last by name goes first


def test_a_placed_replica_is_not_moved_when_a_better_cluster_appears():
    xr = deployment(replicas=1)
    placed = desired_replicas(schedule(xr, [inference_cluster("b")]))
    rsp = schedule(xr, [inference_cluster("a"), inference_cluster("b")], observed=placed)
    assert placement(rsp) == {"b": 1}


def test_the_scheduler_asks_for_clusters_by_selector_the_cache_here_and_every_replica():
    xr = deployment(
        modelCacheRef={"name": "kimi-k2"},
        clusterSelector={"matchLabels": {"modelfleet.io/region": "us"}},
    )
    wanted = RUNNER.run(run_function_request(xr)).requirements.resources  # first call
    clusters, cache, replicas = (
        wanted["inference-clusters"],
        wanted["model-cache"],
        wanted["model-replicas"],
    )
    assert (clusters.kind, dict(clusters.match_labels.labels)) == (
        "InferenceCluster",
        {"modelfleet.io/region": "us"},
    )
    assert (cache.kind, cache.match_name, cache.namespace) == ("ModelCache", "kimi-k2", "ml-team")
    # Capacity is shared by every team: replicas in all namespaces.
    assert (replicas.kind, replicas.HasField("namespace")) == ("ModelReplica", False)


def test_clusters_whose_names_differ_only_by_a_dot_get_a_replica_each():
    clusters = [inference_cluster("gke.us"), inference_cluster("gke-us")]
    rsp = schedule(deployment(replicas=2), clusters)
    assert placement(rsp) == {"gke.us": 1, "gke-us": 1}
    assert "replica-gke-us" in desired_replicas(rsp)  # plain names keep their stable key
