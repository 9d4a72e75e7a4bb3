"""Properties of compose-model-service under random specs and a flapping world: it never
crashes, always says something, and never drops the route of a cluster whose InferenceCluster it
cannot make sense of while the deployments there are healthy."""

import copy

from compose_model_service.core import route_key
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import crashed, mutate, says_something
from modelfleet_devtools.requests import desired_resources, desired_status
from service_world import (
    World,
    accepted,
    cluster,
    model_cache,
    model_deployment,
    model_service,
    observed_routes,
    run,
)

BOTH = {"gke-us": "Ready", "eks-eu": "Ready"}
XR = model_service()


def healthy() -> World:
    return World(
        deployments=[model_deployment("qwen-v1", BOTH), model_deployment("qwen-v2", BOTH)],
        caches=[model_cache(BOTH)],
        clusters=[cluster("gke-us"), cluster("eks-eu")],
    )


OBSERVED = observed_routes(run(XR, healthy()), accepted())


@given(st.data())
def test_random_specs_never_crash_and_never_go_silent(data):
    xr = copy.deepcopy(XR)
    xr["spec"] = mutate(data, xr["spec"])
    rsp = run(xr, healthy(), observed=OBSERVED)
    assert not crashed(rsp)
    assert says_something(rsp)


@given(st.data())
def test_a_flapping_world_never_crashes(data):
    world = healthy()
    world.deployments = [mutate(data, d) for d in world.deployments]
    world.caches = [mutate(data, c) for c in world.caches]
    world.clusters = [mutate(data, c) for c in world.clusters if data.draw(st.booleans())]
    world.services = [mutate(data, model_service(name="other", clusters=("gke-us",)))]
    observed = {k: v | {"status": mutate(data, v["status"])} for k, v in OBSERVED.items()}
    rsp = run(XR, world, observed=observed)
    assert not crashed(rsp)
    assert says_something(rsp)


@given(st.data())
def test_a_cluster_read_wrong_or_not_at_all_keeps_its_route(data):
    """The deployments serve on both clusters; whatever each InferenceCluster's status says
    (or its absence), its route is composed or kept, unless the cluster declares no Gateway."""
    world = healthy()
    world.clusters = [mutate(data, c) for c in world.clusters if data.draw(st.booleans())]
    rsp = run(XR, world, observed=OBSERVED)
    assert not crashed(rsp)
    desired = desired_resources(rsp)
    rows = {r["name"]: r for r in desired_status(rsp)["clusters"]}
    for name in BOTH:
        assert route_key(name) in desired or rows[name]["reason"] == "NoGateway", rows[name]
