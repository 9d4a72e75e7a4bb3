"""Routing scenarios: on each cluster where a backend serves, one HTTPRoute on the cluster's
Gateway splits the model's traffic by the spec's weights across the backends healthy there;
a backend whose serving group is not Ready, whose cache is not Ready, whose weight is 0 or
which serves another model name is held out, and the status says why."""

from dataclasses import dataclass, field
from typing import Any

import pytest
from compose_model_service.core import route_key
from modelfleet_devtools.requests import conditions, desired_resources, desired_status
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from service_world import (
    MODEL,
    World,
    accepted,
    cluster,
    model_cache,
    model_deployment,
    model_service,
    observed_routes,
    route_on,
    routed_weights,
    run,
    service_of,
)

BOTH_READY = {"gke-us": "Ready", "eks-eu": "Ready"}
CACHE_READY = model_cache({"gke-us": "Ready", "eks-eu": "Ready"})
CLUSTERS = [cluster("gke-us"), cluster("eks-eu")]


def canary_world(**changes: Any) -> World:
    world = World(
        deployments=[
            model_deployment("qwen-v1", BOTH_READY),
            model_deployment("qwen-v2", {"gke-us": "Ready"}),
        ],
        caches=[CACHE_READY],
        clusters=list(CLUSTERS),
    )
    for key, value in changes.items():
        setattr(world, key, value)
    return world


@dataclass
class Case:
    name: str
    world: World
    xr: dict[str, Any] = field(default_factory=model_service)
    # cluster → {deployment: routed weight}; a cluster absent here has no route composed.
    routes: dict[str, dict[str, int]] = field(default_factory=dict)
    # cluster → {deployment: reason of its backend row}
    backends: dict[str, dict[str, str]] = field(default_factory=dict)
    cluster_reasons: dict[str, str] = field(default_factory=dict)
    routed: str = ""
    reason: str = ""


CASES = [
    Case(
        "a canary: the new revision at 10% beside the old at 90% where both serve",
        canary_world(),
        routes={"gke-us": {"qwen-v1": 90, "qwen-v2": 10}, "eks-eu": {"qwen-v1": 90}},
        backends={"gke-us": {"qwen-v1": "Routed", "qwen-v2": "Routed"}},
        cluster_reasons={"gke-us": "Pending", "eks-eu": "Pending"},
        routed="2/2",
        reason="Routed",
    ),
    Case(
        "a serving group not Ready is held out; the healthy one keeps its traffic",
        canary_world(
            deployments=[
                model_deployment("qwen-v1", BOTH_READY),
                model_deployment(
                    "qwen-v2", {"gke-us": "Progressing"}, messages={"gke-us": "0/1 ready"}
                ),
            ]
        ),
        routes={"gke-us": {"qwen-v1": 90}, "eks-eu": {"qwen-v1": 90}},
        backends={"gke-us": {"qwen-v1": "Routed", "qwen-v2": "NotAvailable"}},
        routed="2/2",
        reason="Routed",
    ),
    Case(
        "a cluster whose cache is not Ready there gets no traffic, even from a Ready group",
        canary_world(caches=[model_cache({"gke-us": "Ready", "eks-eu": "Hydrating"})]),
        routes={"gke-us": {"qwen-v1": 90, "qwen-v2": 10}},
        backends={"eks-eu": {"qwen-v1": "CacheNotReady"}},
        cluster_reasons={"eks-eu": "NoAvailableBackend"},
        routed="1/2",
        reason="Partial",
    ),
    Case(
        "a weight of 0 takes a backend out of the route",
        canary_world(),
        xr=model_service({"qwen-v1": 100, "qwen-v2": 0}),
        routes={"gke-us": {"qwen-v1": 100}, "eks-eu": {"qwen-v1": 100}},
        backends={"gke-us": {"qwen-v2": "WeightZero"}},
        routed="2/2",
        reason="Routed",
    ),
    Case(
        "the canary at 100%: a cluster where only weight-0 backends run is listed, not counted",
        canary_world(),
        xr=model_service({"qwen-v1": 0, "qwen-v2": 100}),
        routes={"gke-us": {"qwen-v2": 100}},
        backends={"eks-eu": {"qwen-v1": "WeightZero"}},
        cluster_reasons={"eks-eu": "Unweighted"},
        routed="1/1",
        reason="Routed",
    ),
    Case(
        "a deployment serving another model name is held out, naming the fix",
        canary_world(
            deployments=[
                model_deployment("qwen-v1", BOTH_READY),
                model_deployment("qwen-v2", {"gke-us": "Ready"}, served="qwen3-0.6b-v2"),
            ]
        ),
        routes={"gke-us": {"qwen-v1": 90}, "eks-eu": {"qwen-v1": 90}},
        backends={"gke-us": {"qwen-v2": "ServedNameMismatch"}},
        routed="2/2",
        reason="Routed",
    ),
    Case(
        "a cluster without a Gateway is listed, not routed: nothing to compose there",
        canary_world(clusters=[cluster("gke-us"), cluster("eks-eu", gateway=None)]),
        routes={"gke-us": {"qwen-v1": 90, "qwen-v2": 10}},
        cluster_reasons={"eks-eu": "NoGateway"},
        routed="1/2",
        reason="Partial",
    ),
    Case(
        "no backend placed anywhere yet",
        canary_world(
            deployments=[model_deployment("qwen-v1", {}), model_deployment("qwen-v2", {})]
        ),
        routed="0/0",
        reason="NoBackends",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_routing(case: Case) -> None:
    rsp = run(case.xr, case.world)
    for name in ("gke-us", "eks-eu"):
        expected = {service_of(d, name): w for d, w in case.routes.get(name, {}).items()}
        assert routed_weights(rsp, name) == expected, name
    status = desired_status(rsp)
    rows = {r["name"]: r for r in status.get("clusters", [])}
    for name, reasons in case.backends.items():
        got = {b["modelDeployment"]: b["reason"] for b in rows[name]["backends"]}
        assert got.items() >= reasons.items(), name
        for b in rows[name]["backends"]:
            assert (b["weight"] > 0) == (b["reason"] == "Routed")
            assert b["message"]
    for name, reason in case.cluster_reasons.items():
        assert rows[name]["reason"] == reason
        assert rows[name]["routed"] == (name in case.routes)
    assert status["summary"]["routed"] == case.routed
    assert conditions(rsp)["Routed"].reason == case.reason


def test_the_weights_column_reads_as_the_spec_says() -> None:
    status = desired_status(run(model_service(), canary_world()))
    assert status["weights"] == "qwen-v1=90 qwen-v2=10"


def test_every_composed_route_is_valid_against_the_pinned_gateway_api_crd() -> None:
    require_shared_schemas()
    for case in CASES:
        rsp = run(case.xr, case.world)
        for name in case.routes:
            assert_valid(desired_resources(rsp)[route_key(name)])


def test_the_route_matches_the_model_name_under_models_and_rewrites_it_away() -> None:
    route = route_on(run(model_service(), canary_world()), "gke-us")
    assert route is not None
    [parent] = route["spec"]["parentRefs"]
    assert (parent["kind"], parent["name"], parent["namespace"]) == (
        "Gateway",
        "inference",
        "gateway-system",
    )
    assert route["metadata"]["namespace"] == "modelfleet"  # beside the replicas' Services
    [rule] = route["spec"]["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": f"/models/{MODEL}"}}]
    assert rule["filters"][0]["urlRewrite"]["path"]["replacePrefixMatch"] == "/"
    assert {b["port"] for b in rule["backendRefs"]} == {8000}


def test_the_address_through_the_gateway_is_reported_once_the_route_is_accepted() -> None:
    xr, world = model_service(), canary_world()
    first = run(xr, world)
    rows = {r["name"]: r for r in desired_status(first)["clusters"]}
    assert "address" not in rows["gke-us"]
    second = run(xr, world, observed=observed_routes(first, accepted()))
    rows = {r["name"]: r for r in desired_status(second)["clusters"]}
    assert rows["gke-us"]["reason"] == "Accepted"
    assert rows["gke-us"]["address"] == f"http://10.0.0.7/models/{MODEL}/v1"
    assert rows["eks-eu"]["address"] == f"http://10.1.0.9/models/{MODEL}/v1"


def test_a_route_the_gateway_refuses_is_said_so() -> None:
    xr, world = model_service(), canary_world()
    first = run(xr, world)
    second = run(xr, world, observed=observed_routes(first, accepted("False")))
    rows = {r["name"]: r for r in desired_status(second)["clusters"]}
    assert rows["gke-us"]["reason"] == "NotAccepted"
    assert "address" not in rows["gke-us"]
