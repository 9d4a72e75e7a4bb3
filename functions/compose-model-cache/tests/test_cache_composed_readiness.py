"""What compose-model-cache tells Crossplane of each composed resource's readiness: a claim
once Bound, the hydration Job once Complete; none before it is observed. A Job seen complete
stays composed, only watched, Ready as its Object last reported it."""

import pytest
from cache_world import US, bound, complete, keys, model_cache, reconcile, with_status
from modelfleet_devtools.requests import composed_readiness, desired_resources
from modelfleet_devtools.world import NOT_OBSERVED, observed_in_states

CLAIM, _, JOB = keys("gke-us")


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        pytest.param(
            {},
            {CLAIM: "False", JOB: "False"},
            id="first-reconcile-nothing-observed",
        ),
        pytest.param(
            {CLAIM: True, JOB: False},
            {CLAIM: "True", JOB: "False"},
            id="claim-bound-job-still-running",
        ),
        pytest.param(
            {CLAIM: False, JOB: None},
            {CLAIM: "False", JOB: "False"},
            id="claim-pending-job-not-started",
        ),
        pytest.param(
            {CLAIM: True, JOB: True},
            {CLAIM: "True", JOB: "True"},
            id="job-object-ready",
        ),
    ],
)
def test_composed_readiness_follows_what_is_observed(states, expected):
    xr = model_cache()
    first = reconcile(xr, [US])
    composed = desired_resources(first)
    assert set(composed) == {CLAIM, JOB}
    observed = observed_in_states(composed, states, default=NOT_OBSERVED)
    assert composed_readiness(reconcile(with_status(xr, first), [US], observed)) == expected


def test_a_completed_jobs_object_and_the_bound_claim_are_ready():
    xr = model_cache()
    first = reconcile(xr, [US])
    composed = desired_resources(first)
    observed = observed_in_states(composed, {})
    observed[CLAIM] = bound(composed[CLAIM])
    observed[JOB] = complete(composed[JOB])
    staged = reconcile(with_status(xr, first), [US], observed)
    assert composed_readiness(staged) == {CLAIM: "True", JOB: "True"}
