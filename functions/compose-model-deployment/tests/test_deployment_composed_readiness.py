"""What compose-model-deployment tells Crossplane of each ModelReplica's readiness: ready once
the replica reports Ready itself, never before it is observed, kept replicas included."""

import pytest
from deployment_world import RUNNER, deployment, desired_replicas, schedule
from modelfleet_devtools.requests import composed_readiness, run_function_request
from modelfleet_devtools.world import NOT_OBSERVED, inference_cluster, observed_in_states

US, EU = "replica-gke-us", "replica-gke-eu"
CLUSTERS = [inference_cluster("gke-us"), inference_cluster("gke-eu")]


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        pytest.param(
            {US: NOT_OBSERVED, EU: NOT_OBSERVED},
            {US: "False", EU: "False"},
            id="first-reconcile-replicas-not-observed-yet",
        ),
        pytest.param({}, {US: "True", EU: "True"}, id="both-replicas-ready"),
        pytest.param({EU: False}, {US: "True", EU: "False"}, id="one-replica-still-progressing"),
        pytest.param(
            {EU: None}, {US: "True", EU: "False"}, id="replica-created-not-reconciled-yet"
        ),
    ],
)
def test_replica_readiness_follows_the_replica(states, expected):
    xr = deployment(4)
    composed = desired_replicas(schedule(xr, CLUSTERS))
    assert set(composed) == {US, EU}
    rsp = schedule(xr, CLUSTERS, observed=observed_in_states(composed, states))
    assert {k: v for k, v in composed_readiness(rsp).items() if k in composed} == expected


def test_replicas_kept_while_clusters_are_unresolved_keep_their_observed_readiness():
    xr = deployment(4)
    composed = desired_replicas(schedule(xr, CLUSTERS))
    observed = observed_in_states(composed, {EU: False})
    rsp = RUNNER.run(run_function_request(xr, observed=observed))
    assert composed_readiness(rsp) == {US: "True", EU: "False"}
