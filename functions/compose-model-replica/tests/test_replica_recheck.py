"""A ModelReplica held for its cache or cluster (which it reads, not composes) asks Crossplane
to run it again within seconds; one waiting on its own workload does not."""

from datetime import timedelta

import pytest
from modelfleet_devtools.world import inference_cluster
from replica_world import model_cache, replica, run

DEFAULT_TTL = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("cluster", "cache_phase", "soon"),
    [
        pytest.param((inference_cluster("gke-us"),), "Hydrating", True, id="cache-hydrating"),
        pytest.param((), "Ready", True, id="cluster-not-registered-yet"),
        pytest.param(
            (inference_cluster("gke-us", connected=False),), "Ready", True, id="not-connected"
        ),
        pytest.param((inference_cluster("gke-us"),), "Ready", False, id="workload-rolling-out"),
    ],
)
def test_a_replica_held_for_what_it_reads_is_looked_at_again_soon(cluster, cache_phase, soon):
    ttl = run(replica(), cluster=cluster, cache=model_cache(cache_phase)).meta.ttl.ToTimedelta()
    assert (ttl < DEFAULT_TTL) == soon, ttl
