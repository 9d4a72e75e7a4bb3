"""`ArtifactReady` False `Hydrating` says what is true: how many clusters stage, and when
none can, that nothing stages yet and why the first pending cluster waits (its row's
message), not "staging" on clusters that have no storage or no connection."""

import pytest
from cache_world import (
    NO_STORAGE,
    OFFLINE,
    US,
    bound,
    job_status,
    keys,
    model_cache,
    reconcile,
    with_status,
)
from modelfleet_devtools.requests import conditions, desired_resources, events
from modelfleet_devtools.world import inference_cluster

FLEET = [inference_cluster(f"gke-{i:02}", storage_class=None) for i in range(12)]


def staging_on(cluster: dict, others: list[dict]):
    """A second reconcile: `cluster`'s claim bound and its Job running; `others` as they are."""
    clusters = [cluster, *others]
    xr = model_cache()
    rsp = reconcile(xr, clusters, validate=False)
    composed = desired_resources(rsp)
    claim, _, job = keys(cluster["metadata"]["name"], xr)
    observed = {claim: bound(composed[claim]), job: job_status(composed[job], active=1)}
    return reconcile(with_status(xr, rsp), clusters, observed, validate=False)


NO_RWX = "cluster onprem reports no ready ReadWriteMany storage; nothing staged there yet"


@pytest.mark.parametrize(
    ("respond", "message"),
    [
        pytest.param(
            lambda: reconcile(model_cache(), [NO_STORAGE, OFFLINE]),
            "nothing staging yet: 2 cluster(s) pending "
            "(first: gke-down: cluster gke-down is not connected; nothing staged there yet)",
            id="no cluster can stage (no RWX storage, disconnected): nothing staging",
        ),
        pytest.param(
            lambda: reconcile(model_cache(), [US]),
            "nothing staging yet: 1 cluster(s) pending (first: gke-us: creating claim ",
            id="first reconcile: claims being created, nothing staging yet",
        ),
        pytest.param(
            lambda: staging_on(US, []),
            "staging on 1 of 1 cluster(s)",
            id="every cluster stages",
        ),
        pytest.param(
            lambda: staging_on(US, [NO_STORAGE]),
            f"staging on 1 of 2 cluster(s); pending: onprem (first: onprem: {NO_RWX})",
            id="one stages, one cannot: both said",
        ),
        pytest.param(
            lambda: staging_on(US, FLEET),
            "staging on 1 of 13 cluster(s); pending: gke-00, gke-01, gke-02, gke-03, gke-04, "
            "gke-05, gke-06, gke-07, gke-08, gke-09 and 2 more "
            "(first: gke-00: cluster gke-00 reports no ready ReadWriteMany storage; "
            "nothing staged there yet)",
            id="twelve pending: ten named, the rest counted",
        ),
    ],
)
def test_hydrating_says_how_many_clusters_stage_and_why_the_others_wait(respond, message):
    rsp = respond()
    artifact = conditions(rsp)["ArtifactReady"]
    assert artifact.reason == "Hydrating"
    assert artifact.message.startswith(message), artifact.message
    for severity, text in events(rsp):
        if text.startswith("ArtifactReady"):
            assert (severity, text) == ("Normal", f"ArtifactReady Hydrating: {artifact.message}")
