"""Which observed keys are a cluster's hydration Jobs (any source's) and their access: what a
cluster that cannot be reached keeps, and which Objects' echoes the function reads. Cluster
names that contain `hydrate` or an access suffix never claim another cluster's keys."""

import pytest
from compose_model_cache.keys import (
    access_keys,
    echoed_key,
    hydration_keys,
    legacy_job_key,
    resource_keys,
)
from modelfleet_contracts.naming import composed_key

FINGERPRINTS = ("0123456789ab", "fedcba987654")


def everything_on(cluster):
    """Every key a cache may have on `cluster`: claim, Secret, two sources' Jobs and the
    legacy one, each with its access."""
    claim, creds, _ = resource_keys(cluster, FINGERPRINTS[0])
    jobs = [resource_keys(cluster, f)[2] for f in FINGERPRINTS] + [legacy_job_key(cluster)]
    return claim, creds, jobs, [a for j in jobs for a in access_keys(j).values()]


@pytest.mark.parametrize(
    "clusters",
    [
        pytest.param(["gke-us", "gke-eu"], id="plain names"),
        pytest.param(["a", "a-hydrate", "hydrate"], id="a cluster named like a Job key"),
        pytest.param(
            ["b", "b-hydrate-role", "b-hydrate-0123456789ab"], id="like access, a fingerprint"
        ),
        pytest.param(["c-claim", "c"], id="a cluster named like a claim key"),
    ],
)
def test_every_key_is_its_own_clusters(clusters):
    observed = {}
    for cluster in clusters:
        claim, creds, jobs, access = everything_on(cluster)
        observed |= dict.fromkeys([claim, creds, *jobs, *access])
    grouped = hydration_keys(observed)
    for cluster in clusters:
        claim, creds, jobs, access = everything_on(cluster)
        assert sorted(grouped[composed_key(cluster)]) == sorted(jobs + access)
        assert [k for k in (claim, creds, *jobs, *access) if echoed_key(k)] == [claim, *jobs]
    assert sum(len(keys) for keys in grouped.values()) == len(observed) - 2 * len(clusters)
