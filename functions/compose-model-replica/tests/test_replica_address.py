"""status.address: where clients reach a replica, reported only once a serving group's HTTP
endpoint answers (its readiness probe passed) behind an applied Service; and a Service that
its ModelDeployment finds by label."""

import pytest
from compose_model_replica.core import SERVICE, WORKLOAD
from modelfleet_devtools.requests import desired_resources, desired_status
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from modelfleet_devtools.world import inference_cluster, observed_object
from replica_world import GKE, model_cache, replica, run

REMOTE = "model-ml-team-kimi-k2-gke-us-"  # the workload's and Service's name, up to its hash
SERVING = {
    "readyReplicas": 1,
    "updatedReplicas": 1,
    "conditions": [{"type": "Available", "status": "True"}],
}
STARTING = {
    "readyReplicas": 0,
    "updatedReplicas": 1,
    "conditions": [{"type": "Available", "status": "False"}],
}
OFFLINE = inference_cluster("gke-us", connected=False)


def world(xr, workload_status, service_ready):
    """What the replica composed, observed: the workload reporting `workload_status` (None:
    not observed), the Service applied or not (None: not observed)."""
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    observed = {}
    if workload_status is not None:
        observed[WORKLOAD] = observed_object(composed[WORKLOAD], remote_status=workload_status)
    if service_ready is not None:
        observed[SERVICE] = observed_object(composed[SERVICE], ready=service_ready)
    return observed


# (case, nodes, port, workload status, Service applied, address reported?)
CASES = [
    ("nothing observed yet", 1, 8000, None, None, False),
    ("pods not passing their probe", 1, 8000, STARTING, True, False),
    ("serving, Service not applied yet", 1, 8000, SERVING, False, False),
    ("serving, Service not observed", 1, 8000, SERVING, None, False),
    ("single node serving", 1, 8000, SERVING, True, True),
    ("gang serving, another port", 2, 9000, SERVING, True, True),
]


@pytest.mark.parametrize(
    ("nodes", "port", "status", "service", "reported"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_the_address_is_reported_once_a_group_serves(nodes, port, status, service, reported):
    xr = replica(nodes, engine={"framework": "vLLM", "port": port})
    rsp = run(xr, cache=model_cache("Ready"), observed=world(xr, status, service))
    address = desired_status(rsp).get("address")
    if not reported:
        assert address is None
        return
    assert address.startswith(f"http://{REMOTE}")
    assert address.endswith(f".modelfleet.svc.cluster.local:{port}/v1")
    name = desired_resources(rsp)[SERVICE]["spec"]["forProvider"]["manifest"]["metadata"]["name"]
    assert address == f"http://{name}.modelfleet.svc.cluster.local:{port}/v1"


# (case, the cluster, the cache row, the workload, address reported before, kept address)
KEPT = [
    (
        "cluster disconnected, still serving",
        [OFFLINE],
        "Ready",
        SERVING,
        "http://a/v1",
        "http://a/v1",
    ),
    ("cache regressed, still serving", [GKE], "Hydrating", SERVING, "http://a/v1", "http://a/v1"),
    ("cluster not found, still serving", [], "Ready", SERVING, "http://a/v1", "http://a/v1"),
    ("cluster disconnected, no longer serving", [OFFLINE], "Ready", STARTING, "http://a/v1", None),
    ("never reported", [OFFLINE], "Ready", SERVING, None, None),
]


@pytest.mark.parametrize(
    ("cluster", "cache_phase", "status", "before", "kept"),
    [c[1:] for c in KEPT],
    ids=[c[0] for c in KEPT],
)
def test_an_uncertain_input_keeps_the_address_while_the_kept_workload_serves(
    cluster, cache_phase, status, before, kept
):
    xr = replica(1)
    observed = world(xr, status, True)
    if before:
        xr["status"] = {"address": before}
    rsp = run(xr, cluster=cluster, cache=model_cache(cache_phase), observed=observed)
    assert {WORKLOAD, SERVICE} <= set(desired_resources(rsp))  # nothing lost
    assert desired_status(rsp).get("address") == kept


def test_the_service_is_found_from_its_deployment_and_selects_only_the_workload():
    xr = replica(2)
    xr["metadata"]["labels"] = {
        "modelfleet.io/modeldeployment": "kimi-k2",
        "modelfleet.io/namespace": "ml-team",
        "modelfleet.io/cluster": "gke-us",
    }
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    service = composed[SERVICE]["spec"]["forProvider"]["manifest"]
    require_shared_schemas()
    assert_valid(service)
    labels = service["metadata"]["labels"]
    assert labels["modelfleet.io/modeldeployment"] == "kimi-k2"
    assert labels["modelfleet.io/namespace"] == "ml-team"
    assert labels["modelfleet.io/cluster"] == "gke-us"
    # The selector is the workload's (and its leaders'), unchanged by the new label.
    assert "modelfleet.io/modeldeployment" not in service["spec"]["selector"]
    assert service["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
