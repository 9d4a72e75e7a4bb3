"""A ModelCache shares its clusters out among ModelCacheShards and reports what they report.

Scenarios on the ModelCache alone: the shards it composes, and the rows, pin and conditions
it makes of theirs. (The other cache tests reconcile through the shards: cache_world.py.)
"""

from typing import Any

import pytest
from cache_world import NOW, RUNNER, US, model_cache
from compose_model_cache.cache.fleet import compose_fleet
from compose_model_cache.cache.shards import SHARD_SIZE, ObservedShard, assign_shards, shard_key
from compose_model_cache.fingerprint import source_fingerprint
from compose_model_cache.fn import CLUSTERS
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.clusters import read_cluster
from modelfleet_contracts.models.modelcache import ModelCacheSpec
from modelfleet_devtools.fuzz import crashed, mutate, says_something
from modelfleet_devtools.requests import desired_resources, run_function_request
from modelfleet_devtools.world import inference_cluster

FLEET = [read_cluster(inference_cluster(f"c{i:03d}")) for i in range(SHARD_SIZE + 5)]
NAMES = [v.name for v in FLEET]
TWO = [inference_cluster("gke-us"), inference_cluster("gke-eu")]
FINGERPRINT = source_fingerprint(ModelCacheSpec.model_validate(model_cache()["spec"]))


def listing(*names: str, rows: dict[str, Any] | None = None, **more: Any) -> ObservedShard:
    return ObservedShard(clusters=names, rows=rows or {}, **more)


@pytest.mark.parametrize(
    ("matched", "observed", "expected"),
    [
        pytest.param(NAMES[:3], {}, {"shard-0": NAMES[:3]}, id="a small fleet: one shard"),
        pytest.param(
            NAMES,
            {},
            {"shard-0": NAMES[:SHARD_SIZE], "shard-1": NAMES[SHARD_SIZE:]},
            id="a shard is full at SHARD_SIZE clusters: the next one starts",
        ),
        pytest.param(
            ["a", "b", "c"],
            {"shard-0": listing("c"), "shard-1": listing("a")},
            {"shard-0": ["b", "c"], "shard-1": ["a"]},
            id="a cluster stays in its shard; a new one joins the first with room",
        ),
        pytest.param(
            ["b"],
            {"shard-0": listing("a"), "shard-1": listing("b")},
            {"shard-1": ["b"]},
            id="a shard whose clusters all stopped matching is left out",
        ),
        pytest.param(
            ["a"],
            {"shard-0": listing("a"), "shard-1": listing("a")},
            {"shard-0": ["a"], "shard-1": ["a"]},
            id="a cluster two shards list (edited by hand) stays in both: no claim lost",
        ),
    ],
)
def test_which_shard_stages_which_cluster(matched, observed, expected):
    assert assign_shards(matched, observed) == expected


def fleet(
    xr: dict[str, Any] | None = None,
    clusters: list[Any] | None = None,
    shards: dict[str, ObservedShard] | None = None,
):
    return compose_fleet(xr or model_cache(), clusters, shards or {}, now=NOW)


def test_each_shard_is_told_its_clusters_the_cache_spec_and_nothing_of_the_selector():
    xr = model_cache(clusterSelector={"matchLabels": {"team": "ml"}})
    labelled = [read_cluster(inference_cluster(n, labels={"team": "ml"})) for n in NAMES]
    outcome = fleet(xr, labelled)
    assert sorted(outcome.desired) == [shard_key(0), shard_key(1)]
    shard = outcome.desired[shard_key(0)]
    assert isinstance(shard, dict)
    assert shard["kind"] == "ModelCacheShard"
    assert shard["metadata"]["labels"] == {
        "modelfleet.io/modelcache": "qwen",
        "modelfleet.io/namespace": "ml-team",
    }
    assert shard["spec"]["cacheName"] == "qwen"
    assert "clusterSelector" not in shard["spec"]["cache"]
    assert shard["spec"]["cache"]["huggingFace"] == xr["spec"]["huggingFace"]
    assert shard["spec"]["clusters"][0] == {"name": "c000"}
    assert len(shard["spec"]["clustersRevision"]) == 12


def test_a_change_to_a_shards_cluster_changes_its_spec_so_it_looks_again_at_once():
    """Crossplane watches a shard's spec, not the InferenceClusters it reads."""

    def revisions(clusters: list[Any]) -> dict[str, str]:
        desired = fleet(clusters=clusters).desired
        return {k: s["spec"]["clustersRevision"] for k, s in desired.items() if isinstance(s, dict)}

    before = revisions(FLEET)
    after = revisions([read_cluster(inference_cluster("c000", connected=False)), *FLEET[1:]])
    assert {k for k in after if after[k] != before[k]} == {shard_key(0)}


READY_ROW = {
    "name": "gke-us",
    "phase": "Ready",
    "claimName": "modelcache-ml-team-qwen-abcde",
    "path": "p",
    "fingerprint": "f",
}


@pytest.mark.parametrize(
    ("reported", "before", "phase", "staged_handed_over"),
    [
        pytest.param(None, None, "Pending", False, id="new: Pending until its shard reports"),
        pytest.param(
            None,
            "Ready",
            "Ready",
            False,
            id="its shard starting (deleted by hand): the row stays; nothing staged handed over, "
            "its claim went with it",
        ),
        pytest.param("Hydrating", "Ready", "Hydrating", False, id="its shard reports: its row"),
    ],
)
def test_a_clusters_row_comes_from_its_shard_and_never_regresses_while_one_starts(
    reported, before, phase, staged_handed_over
):
    xr, fingerprint = model_cache(), FINGERPRINT
    if before:
        xr["status"] = {"clusters": [READY_ROW | {"phase": before, "fingerprint": fingerprint}]}
    shards = {}
    if reported:
        row = READY_ROW | {"phase": reported, "fingerprint": fingerprint}
        shards[shard_key(0)] = listing("gke-us", rows={"gke-us": row})
    outcome = fleet(xr, [read_cluster(US)], shards)
    assert outcome.status is not None
    (row,) = outcome.status["clusters"]
    assert row["phase"] == phase
    shard = outcome.desired[shard_key(0)]
    assert isinstance(shard, dict)
    assert ("staged" in shard["spec"]["clusters"][0]) is staged_handed_over


def test_the_pin_a_shard_chose_is_the_caches_and_handed_to_every_shard():
    pin = {"commit": "a" * 40, "fingerprint": FINGERPRINT, "cluster": "c033"}
    shards = {
        shard_key(0): listing(*NAMES[:SHARD_SIZE]),
        shard_key(1): listing(*NAMES[SHARD_SIZE:], pinned=pin),
    }
    outcome = fleet(model_cache(), FLEET, shards)
    assert outcome.status is not None and outcome.status["pinnedRevision"] == pin
    for key in (shard_key(0), shard_key(1)):
        shard = outcome.desired[key]
        assert isinstance(shard, dict) and shard["spec"]["pinnedRevision"] == pin


@pytest.mark.parametrize(
    ("xr", "clusters", "reason"),
    [
        pytest.param(model_cache(), None, "Resolving", id="clusters not resolved yet"),
        pytest.param(
            model_cache(sizeGiB=None), [read_cluster(US)], "InvalidSpec", id="spec refused"
        ),
    ],
)
def test_an_uncertain_reconcile_keeps_every_shard(xr, clusters, reason):
    xr["spec"] = {k: v for k, v in xr["spec"].items() if v is not None}
    outcome = fleet(xr, clusters, {shard_key(0): listing("gke-us")})
    assert outcome.keep_everything and not outcome.desired
    assert [c.reason for c in outcome.conditions] == [reason]


def test_a_shards_credentials_warning_is_the_caches():
    warning = {"type": "CredentialsRedacted", "status": "False", "reason": "ExposedByProvider"}
    shards = {
        shard_key(0): listing(*NAMES[:SHARD_SIZE]),
        shard_key(1): listing(*NAMES[SHARD_SIZE:], conditions={"CredentialsRedacted": warning}),
    }
    outcome = fleet(model_cache(), FLEET, shards)
    redacted = {c.type: c for c in outcome.conditions}["CredentialsRedacted"]
    assert (redacted.status, redacted.reason) == (False, "ExposedByProvider")


@given(st.data())
def test_a_mangled_shard_status_never_crashes_the_cache_nor_costs_a_shard(data):
    """Whatever a shard's status says (another shape, rows without names, a pin of another
    kind), the ModelCache keeps every shard whose clusters still match, and says something."""
    first = RUNNER.run(run_function_request(model_cache(), required={CLUSTERS: TWO}))
    shard = desired_resources(first)["shard-0"]
    reported = {
        "clusters": [
            {"name": "gke-us", "phase": "Ready"},
            {"name": "gke-eu", "phase": "Hydrating"},
        ],
        "pinnedRevision": {"commit": "a" * 40, "fingerprint": FINGERPRINT},
        "conditions": [{"type": "ArtifactReady", "status": "False", "reason": "Partial"}],
    }
    shard["status"] = mutate(data, reported)
    rsp = RUNNER.run(
        run_function_request(model_cache(), observed={"shard-0": shard}, required={CLUSTERS: TWO})
    )
    assert not crashed(rsp) and says_something(rsp)
    assert "shard-0" in desired_resources(rsp)


@pytest.mark.parametrize(
    ("row", "artifact_ready"),
    [
        pytest.param(
            {"phase": "Pending", "reason": "ClaimNotFound", "message": "looking for claim x"},
            "ClaimNotFound",
            id="a row's reason is the cache's, whatever its message says",
        ),
        pytest.param(
            {"phase": "Pending", "reason": "TokenSecretMissing", "message": "no Secret hf"},
            "TokenSecretMissing",
            id="a missing token",
        ),
        pytest.param(
            {"phase": "Pending", "message": "gke-us: claim not found (ClaimNotFound)"},
            "Hydrating",
            id="a message is words, never parsed for a reason",
        ),
        pytest.param(
            {"phase": "Pending", "reason": "Mangled"},
            "Hydrating",
            id="a reason the cache does not know is none, and not listed",
        ),
    ],
)
def test_the_cache_reads_why_a_cluster_waits_from_its_rows_reason(row, artifact_ready):
    shards = {
        shard_key(0): listing(
            "gke-eu",
            "gke-us",
            rows={
                "gke-eu": READY_ROW | {"name": "gke-eu", "fingerprint": FINGERPRINT},
                "gke-us": {"name": "gke-us", "fingerprint": FINGERPRINT, **row},
            },
            # What the shard's own condition says is not what the cache reads.
            conditions={"ArtifactReady": {"type": "ArtifactReady", "status": "False"}},
        )
    }
    clusters = [read_cluster(c) for c in TWO]
    outcome = fleet(model_cache(), clusters, shards)
    artifact = {c.type: c for c in outcome.conditions}["ArtifactReady"]
    expected = "Partial" if artifact_ready == "Hydrating" else artifact_ready
    assert (artifact.status, artifact.reason) == (False, expected)
    assert outcome.status is not None
    reported = {r["name"]: r for r in outcome.status["clusters"]}["gke-us"]
    known = row.get("reason") if artifact_ready != "Hydrating" else None
    assert reported.get("reason") == known
