"""What compose-model-replica tells Crossplane of each composed resource's readiness: the
workload Object ready once its Deployment/LeaderWorkerSet is Available (the Object's Ready),
the Service once created; none before it is observed."""

import pytest
from compose_model_replica.core import SERVICE, WORKLOAD
from modelfleet_devtools.requests import composed_readiness, desired_resources
from modelfleet_devtools.world import NOT_OBSERVED, observed_in_states
from replica_world import model_cache, replica, run

ALL = (WORKLOAD, SERVICE)


@pytest.mark.parametrize(
    ("cache_phase", "states", "expected"),
    [
        pytest.param(
            "Ready",
            dict.fromkeys(ALL, NOT_OBSERVED),
            dict.fromkeys(ALL, "False"),
            id="first-reconcile-nothing-observed-nothing-ready",
        ),
        pytest.param("Ready", {}, dict.fromkeys(ALL, "True"), id="all-observed-ready"),
        pytest.param(
            "Ready",
            {WORKLOAD: False},
            {WORKLOAD: "False", SERVICE: "True"},
            id="workload-observed-before-it-is-available",
        ),
        pytest.param(
            "Ready",
            {SERVICE: None},
            {WORKLOAD: "True", SERVICE: "False"},
            id="service-observed-not-ready-yet",
        ),
        pytest.param(
            "Ready",
            {SERVICE: NOT_OBSERVED},
            {WORKLOAD: "True", SERVICE: "False"},
            id="service-not-observed-this-time",
        ),
        pytest.param(
            "Hydrating",
            {WORKLOAD: False},
            {WORKLOAD: "False", SERVICE: "True"},
            id="kept-while-the-cache-re-hydrates-readiness-still-what-is-observed",
        ),
    ],
)
def test_composed_readiness_follows_what_is_observed(cache_phase, states, expected):
    xr = replica()
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    assert set(composed) == set(ALL)
    observed = observed_in_states(composed, states)
    rsp = run(xr, cache=model_cache(cache_phase), observed=observed)
    assert composed_readiness(rsp) == expected
