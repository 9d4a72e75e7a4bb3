"""Upgrading a cache a release before shards composed: its Objects are handed over to its
shards, and no claim, Secret or running Job on a cluster is deleted on the way."""

from typing import Any

import pytest
from cache_world import NOW, OFFLINE, US, keys, model_cache
from compose_model_cache.cache.fleet import compose_fleet
from compose_model_cache.cache.handover import LegacyObject
from compose_model_cache.cache.shards import ObservedShard, shard_entry, shard_key
from compose_model_cache.keys import access_keys
from compose_model_cache.shard.core import compose_shard
from modelfleet_contracts.clusters import read_cluster
from modelfleet_contracts.observed import Condition, ObservedObject

CLAIM, CREDS, JOB = keys("gke-us")
OLD_JOB = "gke-us-hydrate-0123456789ab"  # an older source's
RUNNING = ObservedObject(ready=False, remote_seen=True)
COMPLETE = ObservedObject(
    ready=True, remote_seen=True, remote_conditions=(Condition("Complete", "True"),)
)
BOUND = ObservedObject(ready=True, remote_seen=True, remote_phase="Bound")


def old(facts: ObservedObject, policies: list[str] | None = None) -> LegacyObject:
    spec: dict[str, Any] = {
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "gke-us"},
        "forProvider": {"manifest": {"apiVersion": "v1", "kind": "Thing"}},
    }
    if policies:
        spec["managementPolicies"] = policies
    return LegacyObject(facts, spec)


def staged_before(phase: str = "Ready") -> dict[str, Any]:
    xr = model_cache()
    xr["status"] = {"clusters": [{"name": "gke-us", "phase": phase, "fingerprint": JOB[-12:]}]}
    return xr


def reconcile(xr, legacy, shards=None, clusters=(US,)):
    return compose_fleet(xr, [read_cluster(c) for c in clusters], shards or {}, legacy, now=NOW)


def reported(phase: str) -> dict[str, ObservedShard]:
    row = {"name": "gke-us", "phase": phase, "fingerprint": JOB[-12:]}
    return {shard_key(0): ObservedShard(("gke-us",), {"gke-us": row})}


ACCESS = access_keys(JOB)


@pytest.mark.parametrize(
    ("legacy", "shards", "observe_only", "kept", "gone"),
    [
        pytest.param(
            {CLAIM: old(BOUND), JOB: old(COMPLETE)},
            {},
            [CLAIM],
            [],
            [JOB],
            id="staged: the claim turns Observe-only; the finished Job goes as it always did",
        ),
        pytest.param(
            {CLAIM: old(BOUND, ["Observe"])},
            {},
            [CLAIM],
            [],
            [],
            id="Observe-only but the shard has not reported the cluster: it stays",
        ),
        pytest.param(
            {CLAIM: old(BOUND, ["Observe"]), CREDS: old(BOUND, ["Observe"])},
            reported("Ready"),
            [],
            [],
            [CLAIM, CREDS],
            id="Observe-only and reported by the shard: the old Objects go, the remote ones stay",
        ),
        pytest.param(
            {JOB: old(RUNNING), **{k: old(BOUND) for k in ACCESS.values()}},
            reported("Hydrating"),
            [JOB],
            list(ACCESS.values()),
            [],
            id="a Job mid-download: Observe-only, its access kept while it runs",
        ),
        pytest.param(
            {JOB: old(RUNNING, ["Observe"]), **{k: old(BOUND) for k in ACCESS.values()}},
            reported("Ready"),
            [],
            [],
            [JOB, *ACCESS.values()],
            id="the shard saw that Job through: it and its access go",
        ),
        pytest.param(
            {OLD_JOB: old(RUNNING)},
            {},
            [],
            [],
            [OLD_JOB],
            id="an older source's Job goes, as it did before shards",
        ),
    ],
)
def test_old_objects_are_handed_over_never_deleting_what_is_on_the_cluster(
    legacy, shards, observe_only, kept, gone
):
    outcome = reconcile(staged_before(), legacy, shards)
    for key in observe_only:
        desired = outcome.desired[key]
        assert isinstance(desired, dict)
        assert desired["spec"]["managementPolicies"] == ["Observe"]
        assert desired["spec"]["forProvider"] == legacy[key].spec["forProvider"]
    assert sorted(outcome.kept) == sorted(kept)
    for key in gone:
        assert key not in outcome.desired and key not in outcome.kept
    assert outcome.recheck_soon is bool(observe_only or kept)


def test_a_cluster_that_cannot_be_reached_keeps_its_old_objects_as_they_are():
    offline = {"gke-down-claim": old(BOUND), "gke-down-hydrate": old(RUNNING)}
    outcome = reconcile(model_cache(), offline, clusters=(OFFLINE,))
    assert sorted(outcome.kept) == sorted(offline)
    assert not [k for k in outcome.desired if k.startswith("gke-down-")]


def test_a_cluster_no_longer_matched_loses_its_old_objects_as_before():
    outcome = reconcile(model_cache(), {CLAIM: old(BOUND)}, clusters=())
    assert CLAIM not in outcome.desired and CLAIM not in outcome.kept


def test_the_ready_row_before_the_upgrade_is_handed_to_the_shard_so_nothing_is_fetched_again():
    outcome = reconcile(staged_before("Ready"), {CLAIM: old(BOUND)})
    shard = outcome.desired[shard_key(0)]
    assert isinstance(shard, dict)
    (entry,) = shard["spec"]["clusters"]
    assert entry["staged"] == {"phase": "Ready", "fingerprint": JOB[-12:]}
    assert outcome.status is not None and outcome.status["clusters"][0]["phase"] == "Ready"


def test_a_shard_told_what_was_staged_composes_no_job_and_reports_ready():
    """The other half of the handover: the shard keeps the cluster Ready, latched, and
    composes its claim (the same PVC) but no Job: nothing is fetched again."""
    xr = staged_before("Ready")
    entry = shard_entry("gke-us", xr["status"]["clusters"][0])
    shard = {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCacheShard",
        "metadata": {"name": "qwen-x1y2z", "namespace": "ml-team"},
        "spec": {"cacheName": "qwen", "cache": model_cache()["spec"], "clusters": [entry]},
    }
    outcome = compose_shard(shard, [read_cluster(US)], {CLAIM: BOUND})
    assert CLAIM in outcome.desired and JOB not in outcome.desired
    assert outcome.status is not None
    assert [r["phase"] for r in outcome.status["clusters"]] == ["Ready"]
