"""A ModelCache waiting on an InferenceCluster (which it reads, not composes) asks Crossplane
to run it again within seconds; one waiting on its own claims and Jobs does not."""

from datetime import timedelta

import pytest
from cache_world import NO_STORAGE, OFFLINE, US, model_cache, reconcile

DEFAULT_TTL = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("clusters", "soon"),
    [
        pytest.param([US], False, id="claims-and-jobs-under-way"),
        pytest.param([US, OFFLINE], True, id="one-cluster-not-connected-yet"),
        pytest.param([NO_STORAGE], True, id="a-cluster-without-shared-storage-yet"),
        pytest.param([], True, id="no-cluster-registered-yet"),
    ],
)
def test_a_cache_waiting_on_a_cluster_is_looked_at_again_soon(clusters, soon):
    ttl = reconcile(model_cache(sizeGiB=10), clusters).meta.ttl.ToTimedelta()
    assert (ttl < DEFAULT_TTL) == soon, ttl
