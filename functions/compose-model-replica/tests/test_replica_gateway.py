"""Opt-in Gateway: where the InferenceCluster declares one, the replica composes the model's
HTTPRoute on it (valid against the pinned Gateway API CRD) and reports the address through the
Gateway only once the route is Accepted and a serving group answers."""

import pytest
from compose_model_replica.core import ROUTE, SERVICE, WORKLOAD
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import conditions, desired_resources, desired_status
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from modelfleet_devtools.world import inference_cluster, observed_object
from replica_world import model_cache, replica, run

SERVING = {
    "readyReplicas": 1,
    "updatedReplicas": 1,
    "conditions": [{"type": "Available", "status": "True"}],
}
STARTING = {"readyReplicas": 0, "updatedReplicas": 1}
GATEWAY = {"name": "inference", "namespace": "gateway-system", "sectionName": "http"}


def cluster_with_gateway(address="10.0.0.7", **cluster):
    ic = inference_cluster("gke-us", **cluster)
    ready = address is not None
    ic["status"]["gateway"] = {**GATEWAY, "ready": ready} | ({"address": address} if ready else {})
    return ic


def parents(status, reason="Accepted", message=""):
    ref = {"group": "gateway.networking.k8s.io", "kind": "Gateway", **GATEWAY}
    cond = {"type": "Accepted", "status": status, "reason": reason, "message": message}
    return {"parents": [{"parentRef": ref, "controllerName": "x.io/gw", "conditions": [cond]}]}


def deployment_replica():
    xr = replica(1)
    xr["metadata"]["labels"] = {"modelfleet.io/modeldeployment": "kimi-k2"}
    return xr


def observed(xr, cluster, workload_status, route_status):
    composed = desired_resources(run(xr, cluster=[cluster], cache=model_cache("Ready")))
    seen = {
        WORKLOAD: observed_object(composed[WORKLOAD], remote_status=workload_status),
        SERVICE: observed_object(composed[SERVICE], ready=True),
    }
    if route_status is not None:
        seen[ROUTE] = observed_object(composed[ROUTE], remote_status=route_status, ready=True)
    return seen


def test_the_route_sends_the_deployments_prefix_to_the_service_on_the_declared_gateway():
    xr = deployment_replica()
    rsp = run(xr, cluster=[cluster_with_gateway()], cache=model_cache("Ready"))
    composed = desired_resources(rsp)
    require_shared_schemas()
    assert_valid(composed[ROUTE])  # the Object, and the HTTPRoute against its pinned CRD
    route = composed[ROUTE]["spec"]["forProvider"]["manifest"]
    service = composed[SERVICE]["spec"]["forProvider"]["manifest"]
    assert route["kind"] == "HTTPRoute"
    assert route["metadata"]["namespace"] == service["metadata"]["namespace"]
    [parent] = route["spec"]["parentRefs"]
    assert (parent["kind"], parent["name"], parent["namespace"], parent["sectionName"]) == (
        "Gateway",
        "inference",
        "gateway-system",
        "http",
    )
    [rule] = route["spec"]["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/ml-team/kimi-k2"}}]
    assert rule["filters"][0]["urlRewrite"]["path"]["replacePrefixMatch"] == "/"
    [backend] = rule["backendRefs"]
    assert (backend["kind"], backend["name"], backend["port"]) == (
        "Service",
        service["metadata"]["name"],
        8000,
    )


THROUGH = "http://10.0.0.7/ml-team/kimi-k2/v1"
NOT_ALLOWED = parents("False", "NotAllowedByListeners", "namespace modelfleet not allowed")
# (case, the Gateway's address, workload, route status, gatewayAddress, True?, reason)
CASES = [
    ("route not observed yet", "10.0.0.7", SERVING, None, None, False, "Pending"),
    ("no parent status yet", "10.0.0.7", SERVING, {}, None, False, "Pending"),
    ("refused by the listener", "10.0.0.7", SERVING, NOT_ALLOWED, None, False, "NotAccepted"),
    (
        "accepted, Gateway not Programmed",
        None,
        SERVING,
        parents("True"),
        None,
        False,
        "GatewayNotReady",
    ),
    ("accepted, nothing serves yet", "10.0.0.7", STARTING, parents("True"), None, True, "Accepted"),
    ("accepted and serving", "10.0.0.7", SERVING, parents("True"), THROUGH, True, "Accepted"),
]


@pytest.mark.parametrize(
    ("gw", "workload", "route", "through", "ok", "reason"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_the_address_through_the_gateway_once_accepted(gw, workload, route, through, ok, reason):
    xr = deployment_replica()
    cluster = cluster_with_gateway(gw)
    rsp = run(
        xr,
        cluster=[cluster],
        cache=model_cache("Ready"),
        observed=observed(xr, cluster, workload, route),
    )
    assert desired_status(rsp).get("gatewayAddress") == through
    c = conditions(rsp)["GatewayRouted"]
    assert (c.status == fnv1.STATUS_CONDITION_TRUE, c.reason) == (ok, reason)
    if reason == "NotAccepted":
        assert "namespace modelfleet not allowed" in c.message


def test_no_gateway_declared_no_route_no_condition():
    rsp = run(deployment_replica(), cache=model_cache("Ready"))
    assert ROUTE not in desired_resources(rsp)
    assert "GatewayRouted" not in conditions(rsp)


def test_an_uncertain_cluster_keeps_the_route_and_the_address_through_the_gateway():
    xr = deployment_replica()
    cluster = cluster_with_gateway()
    seen = observed(xr, cluster, SERVING, parents("True"))
    first = run(xr, cluster=[cluster], cache=model_cache("Ready"), observed=seen)
    xr["status"] = dict(desired_status(first))
    offline = cluster_with_gateway(connected=False)
    rsp = run(xr, cluster=[offline], cache=model_cache("Ready"), observed=seen)
    assert {WORKLOAD, SERVICE, ROUTE} <= set(desired_resources(rsp))
    assert desired_status(rsp)["gatewayAddress"] == THROUGH


@pytest.mark.parametrize(
    ("row", "kept", "reason"),
    [
        ({"name": 5, "namespace": "gateway-system"}, True, "GatewayUnknown"),
        ("half-written", True, "GatewayUnknown"),
        (None, False, None),  # no row: the cluster no longer declares a Gateway
    ],
    ids=["unreadable row", "row of another type", "no Gateway declared any more"],
)
def test_a_route_goes_only_when_the_cluster_stops_declaring_its_gateway(row, kept, reason):
    xr = deployment_replica()
    cluster = cluster_with_gateway()
    seen = observed(xr, cluster, SERVING, parents("True"))
    if row is None:
        del cluster["status"]["gateway"]
    else:
        cluster["status"]["gateway"] = row
    rsp = run(xr, cluster=[cluster], cache=model_cache("Ready"), observed=seen)
    assert (ROUTE in desired_resources(rsp)) == kept
    assert {WORKLOAD, SERVICE} <= set(desired_resources(rsp))
    routed = conditions(rsp).get("GatewayRouted")
    assert (routed.reason if routed else None) == reason
