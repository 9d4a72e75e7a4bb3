"""Opt-in Inference Extension: where the cluster's Gateway row names an endpoint picker, the
replica composes an InferencePool over exactly the pods its Service selects (valid against
the pinned CRD) and its HTTPRoute sends to the pool instead of the Service; nothing composed
goes while the cluster's setting cannot be read."""

import pytest
from compose_model_replica.core import POOL, ROUTE, SERVICE, WORKLOAD
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import conditions, desired_resources, desired_status
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from modelfleet_devtools.world import observed_object
from replica_world import model_cache, run
from test_replica_gateway import (
    SERVING,
    THROUGH,
    cluster_with_gateway,
    deployment_replica,
    parents,
)

PICKER = {"endpointPickerPort": 9002, "failureMode": "FailClose"}


def cluster_with_pool(picker=PICKER, **cluster):
    ic = cluster_with_gateway(**cluster)
    ic["status"]["gateway"]["inferencePool"] = picker
    return ic


def manifest(composed, key):
    return composed[key]["spec"]["forProvider"]["manifest"]


# (case, nodes per group, the cluster's endpoint picker, what the pool names)
CASES = [
    ("single node, default picker", 1, PICKER, (9002, "FailClose")),
    ("multi-node group", 2, PICKER, (9002, "FailClose")),
    (
        "its own port, FailOpen",
        1,
        {"endpointPickerPort": 9102, "failureMode": "FailOpen"},
        (9102, "FailOpen"),
    ),
]


@pytest.mark.parametrize(
    ("nodes", "picker", "named"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_route_sends_to_a_pool_of_the_pods_that_serve(nodes, picker, named):
    xr = deployment_replica()
    xr["spec"]["nodes"] = nodes
    rsp = run(xr, cluster=[cluster_with_pool(picker)], cache=model_cache("Ready"))
    composed = desired_resources(rsp)
    require_shared_schemas()
    assert_valid(composed[POOL])  # the Object, and the InferencePool against its pinned CRD
    assert_valid(composed[ROUTE])
    pool, service = manifest(composed, POOL), manifest(composed, SERVICE)
    route = manifest(composed, ROUTE)
    assert pool["kind"] == "InferencePool"
    assert pool["metadata"]["namespace"] == service["metadata"]["namespace"]
    assert pool["metadata"]["labels"]["modelfleet.io/modeldeployment"] == "kimi-k2"
    # Exactly the pods the Service sends to: on a multi-node group, only its leaders.
    assert pool["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
    assert ("leaderworkerset.sigs.k8s.io/worker-index" in service["spec"]["selector"]) == (
        nodes > 1
    )
    assert pool["spec"]["targetPorts"] == [{"number": 8000}]
    picker_ref = pool["spec"]["endpointPickerRef"]
    assert (picker_ref["kind"], picker_ref["name"]) == (
        "Service",
        f"{pool['metadata']['name']}-epp",
    )
    assert (picker_ref["port"]["number"], picker_ref["failureMode"]) == named
    [rule] = route["spec"]["rules"]
    assert rule["backendRefs"] == [
        {
            "group": "inference.networking.k8s.io",
            "kind": "InferencePool",
            "name": pool["metadata"]["name"],
        }
    ]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/ml-team/kimi-k2"}}]


def observed_with_pool(xr, cluster):
    composed = desired_resources(run(xr, cluster=[cluster], cache=model_cache("Ready")))
    return {
        WORKLOAD: observed_object(composed[WORKLOAD], remote_status=SERVING),
        SERVICE: observed_object(composed[SERVICE], ready=True),
        ROUTE: observed_object(composed[ROUTE], remote_status=parents("True"), ready=True),
        POOL: observed_object(composed[POOL], ready=True),
    }


def test_the_address_through_the_gateway_once_the_route_to_the_pool_is_accepted():
    xr = deployment_replica()
    cluster = cluster_with_pool()
    rsp = run(
        xr, cluster=[cluster], cache=model_cache("Ready"), observed=observed_with_pool(xr, cluster)
    )
    assert desired_status(rsp)["gatewayAddress"] == THROUGH
    routed = conditions(rsp)["GatewayRouted"]
    assert (routed.status, routed.reason) == (fnv1.STATUS_CONDITION_TRUE, "Accepted")


def test_without_the_extension_the_route_sends_to_the_service_and_no_pool_is_composed():
    rsp = run(deployment_replica(), cluster=[cluster_with_gateway()], cache=model_cache("Ready"))
    composed = desired_resources(rsp)
    assert POOL not in composed
    [backend] = manifest(composed, ROUTE)["spec"]["rules"][0]["backendRefs"]
    assert backend["kind"] == "Service"


# (case, the cluster's inferencePool row that cannot be read)
UNCERTAIN = [
    ("unreadable port", {"endpointPickerPort": "x", "failureMode": "FailClose"}),
    ("unknown failure mode", {"endpointPickerPort": 9002, "failureMode": "Sometimes"}),
    ("row of another type", "half-written"),
]


@pytest.mark.parametrize("row", [c[1] for c in UNCERTAIN], ids=[c[0] for c in UNCERTAIN])
def test_an_unreadable_setting_keeps_the_pool_and_the_route_to_it(row):
    xr = deployment_replica()
    seen = observed_with_pool(xr, cluster_with_pool())
    rsp = run(xr, cluster=[cluster_with_pool(row)], cache=model_cache("Ready"), observed=seen)
    composed = desired_resources(rsp)
    assert {WORKLOAD, SERVICE, ROUTE, POOL} <= set(composed)
    assert manifest(composed, ROUTE)["spec"]["rules"][0]["backendRefs"][0]["kind"] == (
        "InferencePool"
    )
    assert conditions(rsp)["GatewayRouted"].reason == "InferencePoolUnknown"


@pytest.mark.parametrize(
    "cluster",
    [cluster_with_pool(connected=False), cluster_with_gateway() | {"status": {}}],
    ids=["cluster not connected", "cluster reports nothing"],
)
def test_an_uncertain_cluster_keeps_the_pool(cluster):
    xr = deployment_replica()
    seen = observed_with_pool(xr, cluster_with_pool())
    rsp = run(xr, cluster=[cluster], cache=model_cache("Ready"), observed=seen)
    assert {WORKLOAD, SERVICE, ROUTE, POOL} <= set(desired_resources(rsp))


def test_turning_the_extension_off_routes_back_to_the_service_and_drops_the_pool():
    xr = deployment_replica()
    seen = observed_with_pool(xr, cluster_with_pool())
    rsp = run(xr, cluster=[cluster_with_gateway()], cache=model_cache("Ready"), observed=seen)
    composed = desired_resources(rsp)
    assert POOL not in composed
    assert manifest(composed, ROUTE)["spec"]["rules"][0]["backendRefs"][0]["kind"] == "Service"
