"""Properties of compose-model-cache under random specs and a flapping, half-observed world."""

import copy

from cache_world import desired_resources, keys, model_cache, reconcile, rows
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import crashed, mutate, says_something
from modelfleet_devtools.requests import desired_status
from modelfleet_devtools.world import inference_cluster, observed_object

CLUSTERS = [inference_cluster("gke-us"), inference_cluster("gke-eu")]
XR = model_cache(huggingFace={"repo": "Qwen/Qwen3-0.6B", "tokenSecretRef": {"name": "hf"}})
OCI_XR = model_cache(
    source="OCI", oci={"image": "ghcr.io/acme/qwen3:1.0", "pullSecretRef": {"name": "reg"}}
)
del OCI_XR["spec"]["huggingFace"]
COMPOSED = desired_resources(reconcile(XR, CLUSTERS))
OBSERVED = {k: observed_object(v, remote_status={"phase": "Bound"}) for k, v in COMPOSED.items()}
CLAIMS = [keys(c["metadata"]["name"], XR)[0] for c in CLUSTERS]
JOBS = {keys(c["metadata"]["name"], XR)[2]: c["metadata"]["name"] for c in CLUSTERS}


def assert_sound_status(rsp):
    """Every matched cluster has a row with a known phase; the summary counts them."""
    status = desired_status(rsp)
    phases = [r["phase"] for r in status["clusters"]]
    assert set(phases) <= {"Pending", "Hydrating", "Ready", "Failed"}
    assert status["summary"]["ready"] == f"{phases.count('Ready')}/{len(phases)}"
    for row in status["clusters"]:
        assert row["phase"] == "Ready" or row.get("message"), f"{row['name']}: no why"


@given(st.data())
def test_random_specs_never_crash_and_never_go_silent(data):
    xr = copy.deepcopy(data.draw(st.sampled_from([XR, OCI_XR])))
    xr["spec"] = mutate(data, xr["spec"])
    rsp = reconcile(xr, CLUSTERS, OBSERVED, validate=False)
    assert not crashed(rsp)
    assert says_something(rsp)
    desired = desired_resources(rsp)
    if any(c.reason == "InvalidSpec" for c in rsp.conditions):
        assert set(desired) == set(OBSERVED), "an invalid spec keeps everything"
        return
    assert_sound_status(rsp)
    for cluster in rows(rsp):  # still matched under the new spec: its claim stays
        claim = keys(cluster)[0]
        assert claim in desired, f"{claim} dropped while {cluster} still matches"


@given(st.data())
def test_a_flapping_half_observed_world_never_drops_a_claim(data):
    clusters = [
        c | {"status": mutate(data, c["status"])} if data.draw(st.booleans()) else c
        for c in CLUSTERS
    ]
    observed = {
        k: (v | {"status": mutate(data, v["status"])} if data.draw(st.booleans()) else v)
        for k, v in OBSERVED.items()
        if data.draw(st.booleans())
    }
    unresolved = data.draw(st.booleans())
    rsp = reconcile(XR, None if unresolved else clusters, observed, validate=False)
    assert not crashed(rsp)
    desired = desired_resources(rsp)
    if unresolved:
        assert set(desired) == set(observed), "an unresolved requirement keeps everything"
        return
    assert_sound_status(rsp)
    assert set(rows(rsp)) == {c["metadata"]["name"] for c in CLUSTERS}, "both still match"
    for claim in CLAIMS:
        if claim in observed:
            assert claim in desired, f"{claim} dropped while its cluster still matches"
    phases = {r["name"]: r["phase"] for r in rows(rsp).values()}
    for job, cluster in JOBS.items():
        if job in observed and phases.get(cluster) != "Ready":
            assert job in desired, f"{job} dropped before the weights were complete"
