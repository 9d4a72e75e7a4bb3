"""ModelCache scenarios: a cache, the clusters, what was observed -> composed, reported, said.

What the composed objects look like (schemas, labels, names, the Job's command) is in
test_cache_manifests.py."""

import pytest
from cache_world import (
    EU,
    NO_STORAGE,
    OFFLINE,
    US,
    bound,
    complete,
    desired_resources,
    job_status,
    keys,
    kinds,
    model_cache,
    reason,
    reconcile,
    rows,
    with_status,
)
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import (
    condition_status,
    desired_status,
    events,
    requirement_names,
)
from modelfleet_devtools.world import inference_cluster, observed_object


def staged_on_us() -> tuple[dict, dict]:
    """A cache Ready on gke-us as Crossplane stores it, and what it composed there."""
    xr = model_cache()
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    observed = {claim: bound(composed[claim]), job: complete(composed[job])}
    rsp = reconcile(xr, [US], observed)
    assert reason(rsp, "ArtifactReady") == "Staged"
    return with_status(xr, rsp), observed | {
        k: observed_object(v) for k, v in desired_resources(rsp).items() if k not in observed
    }


@pytest.mark.parametrize(
    ("staged", "artifact_ready"),
    [
        pytest.param(False, "False", id="first call: nothing composed or reported yet"),
        pytest.param(True, "True", id="staged cache: ArtifactReady keeps True"),
    ],
)
def test_unresolved_clusters_keep_everything_and_say_what_is_awaited(staged, artifact_ready):
    xr, observed = staged_on_us() if staged else (model_cache(), {})
    rsp = reconcile(xr, clusters=None, observed=observed)
    assert requirement_names(rsp) == {"inference-clusters"}
    assert set(desired_resources(rsp)) == set(observed)  # not "no cluster matches"
    assert desired_status(rsp) == {
        k: v for k, v in xr.get("status", {}).items() if k != "conditions"
    }
    assert rsp.desired.composite.ready == fnv1.READY_FALSE
    [c] = rsp.conditions
    assert (c.type, condition_status(c), c.reason) == ("ArtifactReady", artifact_ready, "Resolving")
    assert c.message == (
        "waiting for Crossplane to resolve the InferenceClusters matching spec.clusterSelector"
        "; everything composed before is kept as it is"
    )
    assert events(rsp) == [("Normal", f"ArtifactReady Resolving: {c.message}")]


def test_two_clusters_walk_pending_hydrating_ready():
    xr = model_cache()
    claim_us, _, job_us = keys("gke-us")
    claim_eu, _, job_eu = keys("gke-eu")

    # Round 1: nothing observed yet -> claim and Job composed per cluster (the Job runs
    # under the cluster's hydrator account: no access of its own), both Pending.
    rsp = reconcile(xr, [US, EU])
    assert kinds(rsp) == [
        (claim_eu, "PersistentVolumeClaim"),
        (job_eu, "Job"),
        (claim_us, "PersistentVolumeClaim"),
        (job_us, "Job"),
    ]
    assert {n: r["phase"] for n, r in rows(rsp).items()} == {
        "gke-us": "Pending",
        "gke-eu": "Pending",
    }
    assert reason(rsp, "ClustersMatched") == "Matched"
    assert reason(rsp, "ArtifactReady") == "Hydrating"
    assert rsp.desired.composite.ready == fnv1.READY_FALSE
    # Claims are being created: nothing stages yet, and the message says so.
    assert (
        "Normal",
        f"ArtifactReady Hydrating: nothing staging yet: 2 cluster(s) pending (first: gke-eu: "
        f"{rows(rsp)['gke-eu']['message']})",
    ) in events(rsp)
    composed = desired_resources(rsp)

    # Round 2: claims bound, Jobs running -> Hydrating; no repeated events.
    xr = with_status(xr, rsp)
    observed = {
        claim_us: bound(composed[claim_us]),
        claim_eu: bound(composed[claim_eu]),
        job_us: job_status(composed[job_us], active=1),
        job_eu: job_status(composed[job_eu], active=1, failed=1),
    }
    rsp = reconcile(xr, [US, EU], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Hydrating"
    assert "1 of 4 attempts failed" in rows(rsp)["gke-eu"]["message"]
    assert desired_status(rsp)["summary"]["ready"] == "0/2"
    assert not events(rsp)

    # Round 3: one Job complete -> Partial 1/2; the finished Job's Object stays, only
    # watching it (Observe and Delete: its TTL cleans the Job up on the cluster).
    xr = with_status(xr, rsp)
    observed[job_us] = complete(composed[job_us])
    rsp = reconcile(xr, [US, EU], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Ready"
    assert desired_status(rsp)["summary"]["ready"] == "1/2"
    assert reason(rsp, "ArtifactReady") == "Partial"
    assert claim_us in desired_resources(rsp)
    watched = desired_resources(rsp)[job_us]
    assert watched["spec"]["managementPolicies"] == ["Observe", "Delete"]
    template = composed[job_us]["spec"]["forProvider"]["manifest"]["spec"]["template"]
    assert watched["spec"]["forProvider"]["manifest"]["spec"]["template"] == template

    # Round 4: the Job's TTL removed it; its Object keeps what it last saw and Ready stays
    # latched. The other one completes.
    xr = with_status(xr, rsp)
    observed[job_us] = complete(watched)
    observed[job_eu] = complete(composed[job_eu])
    rsp = reconcile(xr, [US, EU], observed)
    assert {r["phase"] for r in rows(rsp).values()} == {"Ready"}
    assert desired_status(rsp)["summary"]["ready"] == "2/2"
    assert reason(rsp, "ArtifactReady") == "Staged"
    assert rsp.desired.composite.ready == fnv1.READY_TRUE
    assert ("Normal", "ArtifactReady Staged: staged on 2 cluster(s)") in events(rsp)
    row = rows(rsp)["gke-us"]
    assert row["claimName"].startswith("modelcache-ml-team-qwen-")
    assert row["path"] == row["fingerprint"]


def test_a_failed_hydration_names_the_jobs_reason_and_warns():
    xr = model_cache()
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    failed = job_status(
        composed[job],
        failed=4,
        conditions=[
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    )
    rsp = reconcile(xr, [US], {claim: bound(composed[claim]), job: failed})
    row = rows(rsp)["gke-us"]
    assert row["phase"] == "Failed"
    assert "BackoffLimitExceeded" in row["message"]
    assert reason(rsp, "ArtifactReady") == "Failed"
    assert any(sev == "Warning" and "BackoffLimitExceeded" in msg for sev, msg in events(rsp))
    assert job in desired_resources(rsp), "a failed Job stays so its failure stays visible"


@pytest.mark.parametrize(
    ("cluster", "why"),
    [
        (NO_STORAGE, "no ready ReadWriteMany storage"),
        (OFFLINE, "not connected"),
    ],
    ids=["cluster without shared storage", "cluster not connected"],
)
def test_matched_clusters_that_cannot_stage_are_listed_pending_with_why(cluster, why):
    rsp = reconcile(model_cache(), [US, cluster])
    name = cluster["metadata"]["name"]
    assert rows(rsp)[name]["phase"] == "Pending"
    assert why in rows(rsp)[name]["message"]
    assert not any(k.startswith(name) for k in desired_resources(rsp))
    assert desired_status(rsp)["summary"]["ready"] == "0/2"


def test_no_matching_cluster_is_reported_and_not_ready():
    rsp = reconcile(
        model_cache(clusterSelector={"matchLabels": {"modelfleet.io/region": "ap"}}), [US]
    )
    assert reason(rsp, "ClustersMatched") == "NoClusters"
    assert reason(rsp, "ArtifactReady") == "NoClusters"
    assert desired_status(rsp)["summary"]["ready"] == "0/0"
    assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_selector_picks_clusters_and_the_requirement_uses_its_labels():
    xr = model_cache(clusterSelector={"matchLabels": {"modelfleet.io/region": "us"}})
    rsp = reconcile(xr, [US, EU])
    assert set(rows(rsp)) == {"gke-us"}
    selector = rsp.requirements.resources["inference-clusters"]
    assert dict(selector.match_labels.labels) == {"modelfleet.io/region": "us"}


def test_storage_class_comes_from_the_cache_or_the_cluster():
    claim, _, _ = keys("gke-us")
    default = desired_resources(reconcile(model_cache(), [US]))[claim]
    override = desired_resources(
        reconcile(model_cache(storage={"storageClassName": "fast-rwx"}), [US])
    )[claim]
    get = lambda o: o["spec"]["forProvider"]["manifest"]["spec"]  # noqa: E731
    assert get(default)["storageClassName"] == "filestore-rwx"
    assert get(override)["storageClassName"] == "fast-rwx"
    assert get(default)["accessModes"] == ["ReadWriteMany"]
    assert get(default)["resources"]["requests"]["storage"] == "10Gi"


def test_retain_keeps_the_claim_when_the_cache_is_deleted():
    claim, _, _ = keys("gke-us")
    obj = desired_resources(reconcile(model_cache(storage={"reclaimPolicy": "Retain"}), [US]))[
        claim
    ]
    assert "Delete" not in obj["spec"]["managementPolicies"]


def test_token_reaches_the_cluster_only_through_provider_kubernetes():
    xr = model_cache(
        huggingFace={
            "repo": "meta-llama/Llama-3.1-8B-Instruct",
            "tokenSecretRef": {"name": "hf-token", "key": "HF_TOKEN"},
        }
    )
    _, creds, job = keys("gke-us", xr)
    composed = desired_resources(reconcile(xr, [US]))
    secret = composed[creds]
    assert secret["spec"]["references"] == [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": "hf-token",
                "namespace": "ml-team",
                "fieldPath": "data.HF_TOKEN",
            },
            "toFieldPath": "data.HF_TOKEN",
        }
    ]
    assert "data" not in secret["spec"]["forProvider"]["manifest"]
    env = composed[job]["spec"]["forProvider"]["manifest"]["spec"]["template"]["spec"][
        "containers"
    ][0]["env"]
    token = next(e for e in env if e["name"] == "HF_TOKEN")
    secret_name = secret["spec"]["forProvider"]["manifest"]["metadata"]["name"]
    assert token["valueFrom"]["secretKeyRef"] == {"name": secret_name, "key": "HF_TOKEN"}


def test_missing_token_secret_is_reported_and_the_claim_stays():
    xr = model_cache(
        huggingFace={
            "repo": "meta-llama/Llama-3.1-8B-Instruct",
            "tokenSecretRef": {"name": "hf-token"},
        }
    )
    claim, creds, _ = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    missing = observed_object(
        composed[creds],
        synced_error='cannot resolve resource references: Secret "hf-token" not found',
    )
    rsp = reconcile(xr, [US], {claim: bound(composed[claim]), creds: missing})
    assert reason(rsp, "ArtifactReady") == "TokenSecretMissing"
    assert "ml-team/hf-token" in rows(rsp)["gke-us"]["message"]
    assert claim in desired_resources(rsp)


def test_bring_your_own_claim_is_observed_only_and_shared_per_cache():
    xr = model_cache(sizeGiB=None, storage={"existingClaimName": "shared-models"})
    del xr["spec"]["sizeGiB"]
    claim, _, _ = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    assert composed[claim]["spec"]["managementPolicies"] == ["Observe"]
    assert composed[claim]["spec"]["forProvider"]["manifest"]["metadata"]["name"] == "shared-models"
    row = rows(reconcile(xr, [US]))["gke-us"]
    assert row["claimName"] == "shared-models"
    assert row["path"].startswith("modelcache-ml-team-qwen-") and row["path"].endswith(
        row["fingerprint"]
    )


def test_missing_existing_claim_names_claim_namespace_and_cluster():
    xr = model_cache(storage={"existingClaimName": "shared-models"})
    del xr["spec"]["sizeGiB"]
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    not_found = observed_object(
        composed[claim],
        synced_error='cannot observe: persistentvolumeclaims "shared-models" not found',
    )
    rsp = reconcile(xr, [US], {claim: not_found})
    assert reason(rsp, "ArtifactReady") == "ClaimNotFound"
    message = rows(rsp)["gke-us"]["message"]
    assert "shared-models" in message and "modelfleet" in message and "gke-us" in message
    assert job not in desired_resources(rsp), "no fallback to another volume"


def ready_world():
    """A cache Ready on gke-us whose Job was already cleaned up."""
    xr = model_cache()
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    observed = {claim: bound(composed[claim]), job: complete(composed[job])}
    xr = with_status(xr, reconcile(xr, [US], observed))
    del observed[job]
    return xr, observed


def test_ready_stays_latched_when_the_job_is_gone_and_the_cluster_flaps():
    xr, observed = ready_world()
    claim, _, job = keys("gke-us")
    flapping = inference_cluster("gke-us", labels={"modelfleet.io/region": "us"}, connected=False)
    rsp = reconcile(xr, [flapping], observed)
    row = rows(rsp)["gke-us"]
    assert row["phase"] == "Ready" and "keeping what is staged" in row["message"]
    assert claim in desired_resources(rsp) and job not in desired_resources(rsp)
    assert not events(rsp), "nothing changed for the user: no event"


def test_a_cluster_that_no_longer_matches_loses_its_objects_and_only_then():
    xr, observed = ready_world()
    moved = model_cache(clusterSelector={"matchLabels": {"modelfleet.io/region": "eu"}})
    moved["status"] = xr["status"]
    rsp = reconcile(moved, [US, EU], observed)
    assert not any(k.startswith("gke-us") for k in desired_resources(rsp))
    assert set(rows(rsp)) == {"gke-eu"}


def test_a_failure_warns_once_not_on_every_reconcile():
    xr = model_cache()
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    failed = job_status(
        composed[job],
        failed=4,
        conditions=[{"type": "Failed", "status": "True", "reason": "DeadlineExceeded"}],
    )
    observed = {claim: bound(composed[claim]), job: failed}
    first = reconcile(xr, [US], observed)
    assert [sev for sev, _ in events(first)].count("Warning") == 1
    again = reconcile(with_status(xr, first), [US], observed)
    assert not events(again)
    assert reason(again, "ArtifactReady") == "Failed"
