"""Pools without GPUs (CPU nodes): a deployment whose pods claim no GPU (gpusPerNode 0) runs
there and only there, sized by spec.nodes; a GPU deployment never lands on CPU nodes."""

import pytest
from deployment_world import cache_on, deployment, desired_replicas, schedule
from modelfleet_devtools.requests import conditions, desired_status
from modelfleet_devtools.world import H100, inference_cluster

CPU = {
    "name": "cpu",
    "nodeCount": 4,
    "gpu": {"count": 0},
    "nodeSelector": {"node.kubernetes.io/instance-type": "c3-standard-44"},
}
ENGINE = {"framework": "vLLM", "image": "vllm/vllm-openai-cpu:v0.33.0"}

G0 = {"gpusPerNode": 0}
# pools, resources, spec.nodes, placed on (pool, nodes, gpusPerNode) or the refusal's words
CASES = [
    pytest.param([CPU], G0, None, ("cpu", 1, 0), id="gpusPerNode 0 on a CPU pool: one pod"),
    pytest.param([CPU], G0, 2, ("cpu", 2, 0), id="gpusPerNode 0 with nodes: a CPU gang"),
    pytest.param([H100, CPU], G0, None, ("cpu", 1, 0), id="gpusPerNode 0 picks the CPU pool"),
    pytest.param(
        [H100, CPU], {"vramGiB": 100}, None, ("h100", 1, 8), id="a GPU deployment skips CPU"
    ),
    pytest.param(
        [CPU],
        {"vramGiB": 100},
        None,
        "only a deployment with resources.gpusPerNode 0",
        id="a GPU deployment never lands on CPU nodes",
    ),
    pytest.param(
        [H100],
        G0,
        None,
        "gpusPerNode 0 runs only on a pool without GPUs",
        id="gpusPerNode 0 is not for a GPU pool",
    ),
    pytest.param(
        [CPU],
        {"gpusPerNode": 0, "vramGiB": 40},
        None,
        "vramGiB 40 cannot size a group on it: set spec.nodes",
        id="vramGiB cannot size a group on CPU nodes",
    ),
]


@pytest.mark.parametrize(("pools", "resources", "nodes", "placed"), CASES)
def test_a_pool_without_gpus_serves_only_what_claims_no_gpu(pools, resources, nodes, placed):
    spec = {"resources": resources, "engine": ENGINE, "modelCacheRef": {"name": "kimi-k2"}}
    if nodes:
        spec["nodes"] = nodes
    rsp = schedule(
        deployment(1, **spec),
        [inference_cluster("gke-us", node_pools=pools)],
        cache=cache_on("gke-us"),
    )
    replicas = list(desired_replicas(rsp).values())
    if isinstance(placed, str):
        assert replicas == []
        scheduled = conditions(rsp)["Scheduled"]
        assert scheduled.reason == "InsufficientCapacity"
        assert placed in scheduled.message
        return
    [replica] = replicas
    pool, group, gpus = placed
    assert replica["spec"]["nodePool"] == pool
    assert (replica["spec"]["nodes"], replica["spec"]["gpusPerNode"]) == (group, gpus)
    assert desired_status(rsp)["clusters"][0]["nodes"] == group
