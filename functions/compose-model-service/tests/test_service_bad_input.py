"""Bad input gets a clear condition and loses nothing: each case starts from a ModelService
routed on two clusters (its routes observed), changes one thing, and checks that every route
to a healthy backend is still composed, that what cannot be decided is kept as it was, and
what the ModelService says."""

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest
from compose_model_service.core import route_key
from modelfleet_devtools.requests import conditions, desired_resources, desired_status, events
from service_world import (
    World,
    accepted,
    cluster,
    model_cache,
    model_deployment,
    model_service,
    observed_routes,
    routed_weights,
    run,
    service_of,
)

BOTH = {"gke-us": "Ready", "eks-eu": "Ready"}


def world(**changes: Any) -> World:
    w = World(
        deployments=[model_deployment("qwen-v1", BOTH), model_deployment("qwen-v2", BOTH)],
        caches=[model_cache(BOTH)],
        clusters=[cluster("gke-us"), cluster("eks-eu")],
    )
    for key, value in changes.items():
        setattr(w, key, value)
    return w


BEFORE_XR = model_service()
BEFORE = run(BEFORE_XR, world())
OBSERVED = observed_routes(BEFORE, accepted())


def services(weights: dict[str, int], cluster_name: str) -> dict[str, int]:
    return {service_of(d, cluster_name): w for d, w in weights.items()}


@dataclass
class Case:
    name: str
    xr: dict[str, Any]
    world: World
    # The Routed condition's reason, and words its message must hold.
    reason: str
    says: str
    # cluster → its row's reason (when the case is about one cluster)
    cluster_reasons: dict[str, str] = field(default_factory=dict)
    # cluster → {deployment: weight} the route now sends; "kept": the observed route as it was
    routes: dict[str, Any] = field(default_factory=dict)


def renamed_namespace_ref() -> dict[str, Any]:
    return model_service(
        refs=[
            {"modelDeploymentRef": {"name": "qwen-v1"}, "weight": 90},
            {"modelDeploymentRef": {"name": "qwen-v2", "namespace": "other-team"}, "weight": 10},
        ]
    )


CASES = [
    Case(
        "weights that sum to zero",
        model_service({"qwen-v1": 0, "qwen-v2": 0}),
        world(),
        reason="InvalidSpec",
        says="sum to 0",
        routes={"gke-us": "kept", "eks-eu": "kept"},
    ),
    Case(
        "a ModelDeployment of another namespace",
        renamed_namespace_ref(),
        world(),
        reason="InvalidSpec",
        says="other-team/qwen-v2 of another namespace",
        routes={"gke-us": "kept", "eks-eu": "kept"},
    ),
    Case(
        "a ModelDeployment named twice",
        model_service(
            refs=[
                {"modelDeploymentRef": {"name": "qwen-v1"}, "weight": 1},
                {"modelDeploymentRef": {"name": "qwen-v1"}, "weight": 2},
            ]
        ),
        world(),
        reason="InvalidSpec",
        says="more than once",
        routes={"gke-us": "kept", "eks-eu": "kept"},
    ),
    Case(
        "an older ModelService already routes the same model name on one cluster",
        BEFORE_XR,
        world(
            services=[
                model_service(
                    name="qwen-prod",
                    namespace="other-team",
                    created="2026-10-01T00:00:00Z",
                    clusters=("gke-us",),
                )
            ]
        ),
        reason="Partial",
        says="gke-us (NameConflict)",
        cluster_reasons={"gke-us": "NameConflict", "eks-eu": "Accepted"},
        routes={"gke-us": "kept", "eks-eu": {"qwen-v1": 90, "qwen-v2": 10}},
    ),
    Case(
        "a younger ModelService claiming the same name changes nothing for the older",
        BEFORE_XR,
        world(
            services=[
                model_service(
                    name="qwen-late", created="2026-11-20T00:00:00Z", clusters=("gke-us",)
                )
            ]
        ),
        reason="Routed",
        says="routed on",
        routes={"gke-us": {"qwen-v1": 90, "qwen-v2": 10}, "eks-eu": {"qwen-v1": 90, "qwen-v2": 10}},
    ),
    Case(
        "a Gateway that does not exist",
        BEFORE_XR,
        world(clusters=[cluster("gke-us"), cluster("eks-eu", gateway="GatewayNotFound")]),
        reason="Partial",
        says="eks-eu (GatewayNotFound)",
        cluster_reasons={"eks-eu": "GatewayNotFound"},
        routes={"gke-us": {"qwen-v1": 90, "qwen-v2": 10}, "eks-eu": "kept"},
    ),
    Case(
        "an InferenceCluster that is no longer connected",
        BEFORE_XR,
        world(clusters=[cluster("gke-us"), cluster("eks-eu", connected=False)]),
        reason="Partial",
        says="eks-eu (ClusterUnavailable)",
        cluster_reasons={"eks-eu": "ClusterUnavailable"},
        routes={"gke-us": {"qwen-v1": 90, "qwen-v2": 10}, "eks-eu": "kept"},
    ),
    Case(
        "an InferenceCluster that is gone",
        BEFORE_XR,
        world(clusters=[cluster("gke-us")]),
        reason="Partial",
        says="eks-eu (ClusterNotFound)",
        cluster_reasons={"eks-eu": "ClusterNotFound"},
        routes={"gke-us": {"qwen-v1": 90, "qwen-v2": 10}, "eks-eu": "kept"},
    ),
    Case(
        "ModelDeployments Crossplane has not resolved yet",
        BEFORE_XR,
        world(unresolved=True),
        reason="Resolving",
        says="ModelDeployment qwen-v1, qwen-v2",
        routes={"gke-us": "kept", "eks-eu": "kept"},
    ),
    Case(
        "a weight change: every healthy backend stays routed at its new weight",
        model_service({"qwen-v1": 50, "qwen-v2": 50}),
        world(),
        reason="Routed",
        says="routed on",
        routes={"gke-us": {"qwen-v1": 50, "qwen-v2": 50}, "eks-eu": {"qwen-v1": 50, "qwen-v2": 50}},
    ),
    Case(
        "a ModelDeployment deleted under the ModelService: the other keeps every route",
        BEFORE_XR,
        world(deployments=[model_deployment("qwen-v1", BOTH)]),
        reason="Routed",
        says="ModelDeployment qwen-v2 not found",
        routes={"gke-us": {"qwen-v1": 90}, "eks-eu": {"qwen-v1": 90}},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_input_loses_nothing(case: Case) -> None:
    xr = copy.deepcopy(case.xr)
    xr["status"] = desired_status(BEFORE)
    rsp = run(xr, case.world, observed=OBSERVED)
    routed = conditions(rsp)["Routed"]
    assert routed.reason == case.reason
    assert case.says in routed.message
    desired = desired_resources(rsp)
    for name, expected in case.routes.items():
        if expected == "kept":
            # Carried as observed: the same HTTPRoute, to the same backends.
            assert desired[route_key(name)]["spec"] == OBSERVED[route_key(name)]["spec"], name
        else:
            assert routed_weights(rsp, name) == services(expected, name), name
    assert set(desired) == {route_key(n) for n in case.routes}
    if case.cluster_reasons:
        rows = {r["name"]: r for r in desired_status(rsp)["clusters"]}
        for name, reason in case.cluster_reasons.items():
            assert rows[name]["reason"] == reason, name
            if reason != "Accepted":
                assert rows[name]["routed"] is False
                assert "keeping the route composed before" in rows[name]["message"]


def test_a_gateway_that_does_not_exist_is_named_with_the_fix() -> None:
    w = world(clusters=[cluster("gke-us"), cluster("eks-eu", gateway="GatewayNotFound")])
    rsp = run(BEFORE_XR, w, observed=OBSERVED)
    rows = {r["name"]: r for r in desired_status(rsp)["clusters"]}
    assert "gateway-system/inference not found" in rows["eks-eu"]["message"]
    assert "spec.gatewayRef" in rows["eks-eu"]["message"]


def test_invalid_input_is_a_warning_event_and_keeps_the_status_reported_before() -> None:
    xr = model_service({"qwen-v1": 0, "qwen-v2": 0})
    xr["status"] = desired_status(BEFORE)
    rsp = run(xr, world(), observed=OBSERVED)
    assert any(kind == "Warning" and "sum to 0" in text for kind, text in events(rsp))
    assert desired_status(rsp)["clusters"] == desired_status(BEFORE)["clusters"]


@pytest.mark.parametrize(
    "model",
    ["$(rm -rf /)", "../../etc", "a//b", "qwen/", "/qwen", "qwen\nHost: evil", "qwen?x=1", "a b"],
)
def test_a_model_name_that_is_no_path_segment_never_reaches_a_route(model: str) -> None:
    """The model name becomes the route's path prefix: anything but segments of letters,
    digits, dots, dashes and underscores is refused, and the routes composed before are kept."""
    xr = model_service(model=model)
    xr["status"] = desired_status(BEFORE)
    rsp = run(xr, world(), observed=OBSERVED)
    assert conditions(rsp)["Routed"].reason == "InvalidSpec"
    assert "spec.modelName" in conditions(rsp)["Routed"].message
    for key, obj in desired_resources(rsp).items():
        assert obj["spec"] == OBSERVED[key]["spec"]
