"""A condition about a large fleet stays a line: it names ten clusters and counts the rest
(each cluster's row in status.clusters says its own story)."""

from cache_world import (
    bound,
    complete,
    job_status,
    keys,
    model_cache,
    reconcile,
    rows,
    with_status,
)
from modelfleet_devtools.requests import conditions, desired_resources
from modelfleet_devtools.world import inference_cluster

FLEET = [inference_cluster(f"gke-{i:02}") for i in range(40)]


def test_forty_clusters_matched_are_ten_named_and_thirty_counted():
    rsp = reconcile(model_cache(), FLEET, validate=False)
    matched = conditions(rsp)["ClustersMatched"].message
    assert matched == (
        "40 cluster(s) match: gke-00, gke-01, gke-02, gke-03, gke-04, gke-05, gke-06, "
        "gke-07, gke-08, gke-09 and 30 more"
    )
    assert len(rows(rsp)) == 40  # every cluster still has its row


def test_partial_names_ten_of_the_clusters_it_waits_for():
    xr = model_cache()
    rsp = reconcile(xr, FLEET, validate=False)
    composed = desired_resources(rsp)
    observed = {}
    for cluster in FLEET:
        claim, _, job = keys(cluster["metadata"]["name"], xr)
        observed[claim] = bound(composed[claim])
        running = job_status(composed[job], active=1)
        observed[job] = complete(composed[job]) if cluster is FLEET[0] else running
    rsp = reconcile(with_status(xr, rsp), FLEET, observed, validate=False)
    artifact = conditions(rsp)["ArtifactReady"]
    assert artifact.reason == "Partial"
    assert artifact.message == (
        "ready on 1/40 clusters; waiting for gke-01, gke-02, gke-03, gke-04, gke-05, gke-06, "
        "gke-07, gke-08, gke-09, gke-10 and 29 more"
    )
