"""What compose-model-cache tells Crossplane of each composed resource's readiness: a claim
once Bound, the hydration Job once Complete, its access objects once created; none before
it is observed. A Job the function stops composing once complete is not desired any more,
so nothing is said about it."""

import pytest
from cache_world import US, bound, complete, keys, model_cache, reconcile, with_status
from modelfleet_devtools.requests import composed_readiness, desired_resources
from modelfleet_devtools.world import NOT_OBSERVED, observed_in_states

CLAIM, _, JOB = keys("gke-us")
ACCESS = tuple(f"{JOB}-{suffix}" for suffix in ("account", "role", "binding"))


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        pytest.param(
            {},
            {CLAIM: "False", JOB: "False"} | dict.fromkeys(ACCESS, "False"),
            id="first-reconcile-nothing-observed",
        ),
        pytest.param(
            {CLAIM: True, JOB: False} | dict.fromkeys(ACCESS, True),
            {CLAIM: "True", JOB: "False"} | dict.fromkeys(ACCESS, "True"),
            id="claim-bound-job-still-running",
        ),
        pytest.param(
            {CLAIM: False, JOB: None} | dict.fromkeys(ACCESS, True),
            {CLAIM: "False", JOB: "False"} | dict.fromkeys(ACCESS, "True"),
            id="claim-pending-job-not-started",
        ),
        pytest.param(
            {CLAIM: True, JOB: True} | dict.fromkeys(ACCESS, None),
            {CLAIM: "True", JOB: "True"} | dict.fromkeys(ACCESS, "False"),
            id="access-objects-without-ready-yet",
        ),
    ],
)
def test_composed_readiness_follows_what_is_observed(states, expected):
    xr = model_cache()
    first = reconcile(xr, [US])
    composed = desired_resources(first)
    assert set(composed) == {CLAIM, JOB, *ACCESS}
    observed = observed_in_states(composed, states, default=NOT_OBSERVED)
    assert composed_readiness(reconcile(with_status(xr, first), [US], observed)) == expected


def test_a_completed_job_is_no_longer_composed_and_the_bound_claim_is_ready():
    xr = model_cache()
    first = reconcile(xr, [US])
    composed = desired_resources(first)
    observed = observed_in_states(composed, {})
    observed[CLAIM] = bound(composed[CLAIM])
    observed[JOB] = complete(composed[JOB])
    staged = reconcile(with_status(xr, first), [US], observed)
    assert composed_readiness(staged) == {CLAIM: "True"}
