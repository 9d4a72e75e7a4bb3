"""A ModelCache waiting on an InferenceCluster (which it reads, not composes) asks Crossplane
to run it again within seconds, and so does one whose claims and Jobs are under way: their
changes come as events, which Crossplane's circuit breaker drops when many of a shard's
Objects change at once. One that staged everywhere does not."""

from datetime import timedelta

import pytest
from cache_world import (
    NO_STORAGE,
    OFFLINE,
    US,
    bound,
    complete,
    keys,
    model_cache,
    reconcile,
    rows,
    with_status,
)
from modelfleet_devtools.requests import desired_resources

DEFAULT_TTL = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("clusters", "soon"),
    [
        pytest.param([US], True, id="claims-and-jobs-under-way"),
        pytest.param([US, OFFLINE], True, id="one-cluster-not-connected-yet"),
        pytest.param([NO_STORAGE], True, id="a-cluster-without-shared-storage-yet"),
        pytest.param([], True, id="no-cluster-registered-yet"),
    ],
)
def test_a_cache_waiting_on_a_cluster_is_looked_at_again_soon(clusters, soon):
    ttl = reconcile(model_cache(sizeGiB=10), clusters).meta.ttl.ToTimedelta()
    assert (ttl < DEFAULT_TTL) == soon, ttl


def test_a_cache_staged_everywhere_is_left_to_its_default_ttl():
    xr = model_cache(sizeGiB=10)
    claim, _, job = keys("gke-us", xr)
    composed = desired_resources(reconcile(xr, [US]))
    observed = {claim: bound(composed[claim]), job: complete(composed[job])}
    rsp = reconcile(xr, [US], observed)
    rsp = reconcile(with_status(xr, rsp), [US], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Ready"
    assert rsp.meta.ttl.ToTimedelta() >= DEFAULT_TTL
