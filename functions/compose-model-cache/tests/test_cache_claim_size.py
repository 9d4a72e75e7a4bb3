"""Lowering sizeGiB: a claim that exists is never asked to shrink.

Kubernetes refuses to lower a claim's storage request. A claim provider-kubernetes reports
(echoed in its Object's status.atProvider.manifest, as the workload cluster's API server
returns it) with a larger request than sizeGiB keeps its request; its row and the
`ClaimsSized` condition say so, with the sizes and what to do. Growing is composed as asked,
a claim not reported yet is created at sizeGiB, and a request that cannot be read is kept as
it is and said so. Every row goes through fn.run_function, as a gRPC call does.
"""

import copy

import pytest
from cache_world import US, complete, keys, model_cache, reconcile, rows, with_status
from compose_model_cache.shard.claim_size import (
    AS_REQUESTED,
    CLAIMS_SIZED,
    GUIDE,
    SHRINK_REFUSED,
    SIZE_UNREADABLE,
)
from modelfleet_cli.simulate.provider import Providers
from modelfleet_cli.simulate.workload import Pool, WorkloadCluster
from modelfleet_devtools.requests import (
    condition_status,
    conditions,
    desired_resources,
    events,
)
from modelfleet_devtools.world import inference_cluster, observed_object

CLAIM_US = keys("gke-us")[0]
CLAIM_EU = keys("gke-eu")[0]
EU = inference_cluster("gke-eu")


def served_claim(composed, request, *, name=None):
    """The claim Object `composed` as provider-kubernetes reports it once the claim exists,
    requesting `request`: what the API server returns for a bound claim (its uid, binder
    annotations, protection finalizer, defaulted volumeMode, bound volume, capacity)."""
    obj = observed_object(composed, remote_status={"phase": "Bound"}, ready=True)
    echo = obj["status"]["atProvider"]["manifest"]
    echo["metadata"] |= {
        "uid": "0d6f0a52-8b4c-4c43-9a4e-54a1d7c4a3b1",
        "resourceVersion": "81234",
        "creationTimestamp": "2026-11-20T09:12:44Z",
        "finalizers": ["kubernetes.io/pvc-protection"],
        "annotations": {
            "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes",
            "volume.kubernetes.io/storage-provisioner": "filestore.csi.storage.gke.io",
        },
    }
    if name:
        echo["metadata"]["name"] = name
    # (A user's claim, observed only, is composed without a spec: the server's has one.)
    echo.setdefault("spec", {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs-rwx"})
    echo["spec"] |= {"volumeMode": "Filesystem", "volumeName": "pvc-0d6f0a52-8b4c-4c43"}
    echo["spec"]["resources"] = {"requests": {"storage": request}}
    echo["status"] |= {"accessModes": ["ReadWriteMany"], "capacity": {"storage": request}}
    return obj


def staged_world(request, *, clusters=(US,), **spec):
    """A cache staged on `clusters` at 10Gi and Ready there, its Jobs cleaned up, whose
    claims now request `request` (by cluster name, when a mapping: grown since, or spelled
    another way); the XR with that status and `spec` applied."""
    xr = model_cache(sizeGiB=10)
    composed = desired_resources(reconcile(xr, list(clusters)))
    observed = {}
    for view in clusters:
        claim_key, _, job_key = keys(view["metadata"]["name"], xr)
        observed[claim_key] = served_claim(composed[claim_key], "10Gi")
        observed[job_key] = complete(composed[job_key])
    xr = with_status(xr, reconcile(xr, list(clusters), observed))
    for view in clusters:
        name = view["metadata"]["name"]
        claim_key, _, job_key = keys(name, xr)
        del observed[job_key]
        now = request[name] if isinstance(request, dict) else request
        observed[claim_key] = served_claim(composed[claim_key], now)
    return model_cache(**spec) | {"status": xr["status"]}, observed


def requested(rsp, key=CLAIM_US):
    manifest = desired_resources(rsp)[key]["spec"]["forProvider"]["manifest"]
    return manifest["spec"]["resources"]["requests"]["storage"]


def sized(rsp):
    c = conditions(rsp).get(CLAIMS_SIZED)
    return None if c is None else (c.reason, c.message)


@pytest.mark.parametrize(
    ("existing", "size_gib", "composed", "reason", "in_row"),
    [
        pytest.param(
            "200Gi",
            100,
            "200Gi",
            SHRINK_REFUSED,
            ["requests 200Gi, more than sizeGiB 100", "set sizeGiB to 200 or more", "gke-us"],
            id="existing bigger: kept, and said",
        ),
        pytest.param("100Gi", 100, "100Gi", None, [], id="equal: as asked"),
        pytest.param("100Gi", 200, "200Gi", None, [], id="grow: as asked"),
        pytest.param(
            "1Ti", 1000, "1Ti", SHRINK_REFUSED, ["set sizeGiB to 1024 or more"], id="1Ti > 1000Gi"
        ),
        pytest.param("1T", 1000, "1000Gi", None, [], id="1T < 1000Gi: grows"),
        pytest.param(
            "250G",
            200,
            "250G",
            SHRINK_REFUSED,
            ["set sizeGiB to 233 or more"],
            id="decimal G: the least whole GiB that holds it",
        ),
        pytest.param("107374182400", 100, "100Gi", None, [], id="plain bytes, equal"),
        pytest.param(
            "107374182401",
            100,
            "107374182401",
            SHRINK_REFUSED,
            ["set sizeGiB to 101 or more"],
            id="plain bytes, one more",
        ),
        pytest.param(
            "ten gigs",
            100,
            "ten gigs",
            SIZE_UNREADABLE,
            ["requests 'ten gigs', a size this function cannot read", "kept as it is"],
            id="unreadable: kept as it is, and said",
        ),
    ],
)
def test_an_existing_claim_is_never_asked_to_shrink(existing, size_gib, composed, reason, in_row):
    xr, observed = staged_world(existing, sizeGiB=size_gib)
    rsp = reconcile(xr, [US], observed)
    assert requested(rsp) == composed
    row = rows(rsp)["gke-us"]
    assert row["phase"] == "Ready", "the weights are staged whatever the size"
    assert conditions(rsp)["ArtifactReady"].reason == "Staged"
    # Only the request: the claim's class and access modes stay as they are.
    manifest = desired_resources(rsp)[CLAIM_US]["spec"]["forProvider"]["manifest"]
    assert manifest["spec"]["storageClassName"] == "filestore-rwx"
    assert manifest["spec"]["accessModes"] == ["ReadWriteMany"]
    if reason is None:
        assert "message" not in row
        assert sized(rsp) is None, "never reported: no condition"
        return
    assert all(text in row["message"] for text in in_row), row["message"]
    got_reason, message = sized(rsp)
    assert (got_reason, condition_status(conditions(rsp)[CLAIMS_SIZED])) == (reason, "False")
    assert "gke-us" in message and GUIDE in message
    assert str(existing) in message
    assert [sev for sev, text in events(rsp) if text.startswith(CLAIMS_SIZED)] == ["Warning"]


def test_the_message_names_the_clusters_the_sizes_and_what_to_do():
    xr, observed = staged_world(
        {"gke-us": "300Gi", "gke-eu": "150Gi"}, clusters=(US, EU), sizeGiB=120
    )
    rsp = reconcile(xr, [US, EU], observed)
    assert (requested(rsp, CLAIM_US), requested(rsp, CLAIM_EU)) == ("300Gi", "150Gi")
    reason, message = sized(rsp)
    assert reason == SHRINK_REFUSED
    assert "sizeGiB 120 is less than what the existing claim requests on 2 cluster(s)" in message
    assert "gke-eu (150Gi), gke-us (300Gi)" in message
    assert "Set sizeGiB to 300 or more" in message
    assert "delete this cache's Objects for a cluster to recreate its claim at 120Gi" in message
    assert "delete this cache's Objects for gke-eu" in rows(rsp)["gke-eu"]["message"]


def test_one_cluster_kept_the_other_grown():
    xr, observed = staged_world(
        {"gke-us": "300Gi", "gke-eu": "100Gi"}, clusters=(US, EU), sizeGiB=200
    )
    rsp = reconcile(xr, [US, EU], observed)
    assert (requested(rsp, CLAIM_US), requested(rsp, CLAIM_EU)) == ("300Gi", "200Gi")
    _, message = sized(rsp)
    assert "on 1 cluster(s): gke-us (300Gi)" in message and "gke-eu" not in message
    assert "message" not in rows(rsp)["gke-eu"]


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda obj: obj["status"].pop("atProvider"), id="created, not reported yet"),
        pytest.param(
            lambda obj: obj["status"]["atProvider"]["manifest"]["metadata"].update(name="old"),
            id="another claim's echo (a previous name)",
        ),
        pytest.param(
            lambda obj: obj["status"]["atProvider"]["manifest"]["spec"].pop("resources"),
            id="an echo without a request",
        ),
    ],
)
def test_a_claim_not_reported_with_a_size_is_composed_as_asked(edit):
    xr, observed = staged_world("200Gi", sizeGiB=100)
    edit(observed[CLAIM_US])
    rsp = reconcile(xr, [US], observed)
    assert requested(rsp) == "100Gi"
    assert sized(rsp) is None


def test_no_claim_yet_is_created_at_size_gib():
    rsp = reconcile(model_cache(sizeGiB=100), [US])
    assert requested(rsp) == "100Gi"
    assert sized(rsp) is None


def test_a_brought_claim_is_never_written_whatever_its_size():
    xr, observed = staged_world("500Gi", storage={"existingClaimName": "shared-models"})
    del xr["spec"]["sizeGiB"]
    composed = desired_resources(reconcile(xr, [US]))[CLAIM_US]
    observed[CLAIM_US] = served_claim(composed, "500Gi", name="shared-models")
    rsp = reconcile(xr, [US], observed)
    manifest = desired_resources(rsp)[CLAIM_US]["spec"]["forProvider"]["manifest"]
    assert "spec" not in manifest, "Observe-only: names the claim, sets nothing"
    assert sized(rsp) is None
    assert conditions(rsp)["ArtifactReady"].reason == "Staged", "decided, not held on an error"
    row = rows(rsp)["gke-us"]
    assert row["claimName"] == "shared-models" and "message" not in row


def test_a_blocked_cluster_keeps_its_object_and_still_says_so():
    xr, observed = staged_world("200Gi", sizeGiB=100)
    offline = inference_cluster("gke-us", connected=False)
    rsp = reconcile(xr, [offline], observed)
    kept = desired_resources(rsp)[CLAIM_US]
    assert kept["spec"] == observed[CLAIM_US]["spec"], "kept as observed"
    assert requested(rsp) == "10Gi", "what it was composed with before"
    row = rows(rsp)["gke-us"]
    assert "not connected" in row["message"] and "more than sizeGiB 100" in row["message"]
    assert sized(rsp)[0] == SHRINK_REFUSED


def test_the_warning_is_a_transition_and_so_is_the_fix():
    xr, observed = staged_world("200Gi", sizeGiB=100)
    first = reconcile(xr, [US], observed)
    assert sized(first)[0] == SHRINK_REFUSED
    about = [e for e in events(first) if e[1].startswith(CLAIMS_SIZED)]
    assert about == [("Warning", f"{CLAIMS_SIZED} {SHRINK_REFUSED}: {sized(first)[1]}")]

    again = reconcile(with_status(xr, first), [US], observed)
    assert sized(again)[0] == SHRINK_REFUSED
    assert [e for e in events(again) if e[1].startswith(CLAIMS_SIZED)] == []

    raised = copy.deepcopy(with_status(xr, again))
    raised["spec"]["sizeGiB"] = 200
    fixed = reconcile(raised, [US], observed)
    assert requested(fixed) == "200Gi"
    assert sized(fixed)[0] == AS_REQUESTED
    assert condition_status(conditions(fixed)[CLAIMS_SIZED]) == "True"
    assert [sev for sev, text in events(fixed) if text.startswith(CLAIMS_SIZED)] == ["Normal"]

    quiet = reconcile(with_status(raised, fixed), [US], observed)
    assert sized(quiet)[0] == AS_REQUESTED
    assert [e for e in events(quiet) if e[1].startswith(CLAIMS_SIZED)] == []


def test_modelfleet_simulate_takes_the_kept_size_and_refuses_the_shrink():
    """With `modelfleet simulate`'s cluster and provider-kubernetes: a claim created at
    200Gi; what the function composes for sizeGiB 100 applies (Synced), the smaller request
    it composed before this rule is refused as a real API server refuses it."""
    c = WorkloadCluster("gke-us", [Pool("h100", 1, 8)], {"filestore-rwx"}, hydration_rounds=1)
    c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "modelfleet"}})
    providers = Providers({c.name: c}, lambda pc: c.name, lambda ns, n: None)
    claim = desired_resources(reconcile(model_cache(sizeGiB=200), [US]))[CLAIM_US]
    providers.sync(claim)
    c.tick()
    providers.observe(claim)
    assert claim["status"]["atProvider"]["manifest"]["status"]["phase"] == "Bound"

    rsp = reconcile(model_cache(sizeGiB=100), [US], {CLAIM_US: claim})
    assert sized(rsp)[0] == SHRINK_REFUSED

    def synced(composed):
        obj = copy.deepcopy(claim) | {"spec": composed["spec"]}
        providers.sync(obj)
        return next(x for x in obj["status"]["conditions"] if x["type"] == "Synced")

    assert synced(desired_resources(rsp)[CLAIM_US])["status"] == "True"
    refused = synced(desired_resources(reconcile(model_cache(sizeGiB=100), [US]))[CLAIM_US])
    assert refused["status"] == "False"
    assert "field can not be less than previous value" in refused["message"]
