"""Hydration a user can watch: what each Job reported on itself -> status.clusters[] figures,
the account a Job reports with, and one pinned commit for every cluster."""

import pytest
from cache_world import (
    EU,
    US,
    bound,
    complete,
    desired_resources,
    job_status,
    keys,
    manifest_kind,
    model_cache,
    reason,
    reconcile,
    rows,
    with_status,
)
from compose_model_cache.shard.progress import JobReport, hydrating_message
from modelfleet_contracts.hydration import (
    BYTES_DONE,
    BYTES_TOTAL,
    FILES_DONE,
    FILES_TOTAL,
    PINNED_REVISION,
    REVISION,
)
from modelfleet_devtools.requests import desired_status
from modelfleet_devtools.world import inference_cluster

GIB = 1024**3
COMMIT_A = "a" * 40
COMMIT_B = "b" * 40
CLAIM_US, _, JOB_US = keys("gke-us")
CLAIM_EU, _, JOB_EU = keys("gke-eu")


def manifest_of(obj):
    return obj["spec"]["forProvider"]["manifest"]


def reporting(observed_job, **annotations):
    """The observed Job with the annotations the hydrator patched onto it."""
    metadata = observed_job["status"]["atProvider"]["manifest"]["metadata"]
    metadata["annotations"] = {**metadata.get("annotations", {}), **annotations}
    return observed_job


def figures(done, total, files_done=3, files_total=8, revision=COMMIT_A):
    return {
        BYTES_DONE: str(done),
        BYTES_TOTAL: str(total),
        FILES_DONE: str(files_done),
        FILES_TOTAL: str(files_total),
        REVISION: revision,
    }


def hydrating(xr, clusters=(US,), **per_cluster):
    """Reconcile once to compose, then once with claims bound and Jobs running and reporting
    `per_cluster[name]` annotations. Returns (xr with status, response, observed, composed)."""
    rsp = reconcile(xr, list(clusters))
    composed = desired_resources(rsp)
    observed = {}
    for view in clusters:
        name = view["metadata"]["name"]
        claim, _, job = keys(name, xr)
        observed[claim] = bound(composed[claim])
        observed[job] = reporting(job_status(composed[job], active=1), **per_cluster.get(name, {}))
    xr = with_status(xr, rsp)
    rsp = reconcile(xr, list(clusters), observed)
    return with_status(xr, rsp), rsp, observed, composed


def test_a_job_runs_under_the_clusters_hydrator_account_and_is_told_its_name():
    """It reports on itself with the account compose-inference-cluster composed once per
    workload namespace (may get and patch the namespace's Jobs): no access of its own."""
    composed = desired_resources(reconcile(model_cache(), [US]))
    job = manifest_of(composed[JOB_US])
    name = job["metadata"]["name"]
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "modelfleet-hydrator"
    assert pod["automountServiceAccountToken"] is True
    assert f"--job={name}" in pod["containers"][0]["command"]
    assert set(composed) == {keys("gke-us")[0], JOB_US}


def test_figures_reported_on_the_job_reach_the_row_and_the_summary():
    _, rsp, _, _ = hydrating(
        model_cache(),
        [US, EU],
        **{
            "gke-us": figures(int(37.2 * GIB), 120 * GIB),
            "gke-eu": figures(10 * GIB, 120 * GIB, files_done=1),
        },
    )
    us = rows(rsp)["gke-us"]
    assert us["progress"] == "37.2/120.0 GiB"
    assert (us["bytesDone"], us["bytesTotal"]) == (int(37.2 * GIB), 120 * GIB)
    assert us["resolvedRevision"] == COMMIT_A
    assert us["message"] == "downloading 37.2/120.0 GiB, 3/8 files"
    assert rows(rsp)["gke-eu"]["progress"] == "10.0/120.0 GiB"
    assert desired_status(rsp)["summary"]["progress"] == "47.2/240.0 GiB"


def test_the_summary_waits_for_every_cluster_and_a_small_model_reads_in_mib():
    _, rsp, _, _ = hydrating(
        model_cache(), [US, EU], **{"gke-us": figures(5 * 1024**2, 26 * 1024**2)}
    )
    assert rows(rsp)["gke-us"]["progress"] == "5.0/26.0 MiB"
    assert "progress" not in rows(rsp)["gke-eu"]
    assert "progress" not in desired_status(rsp)["summary"], "gke-eu has not reported yet"


FIGURES = ("progress", "bytesDone", "bytesTotal", "resolvedRevision")


@pytest.mark.parametrize(
    ("annotations", "shown"),
    [
        ({}, {}),
        ({BYTES_DONE: "12"}, {}),
        ({BYTES_DONE: "lots", BYTES_TOTAL: "100"}, {"bytesTotal": 100}),
        ({BYTES_DONE: "-5", BYTES_TOTAL: "100"}, {"bytesTotal": 100}),
        ({BYTES_DONE: "500", BYTES_TOTAL: "100"}, {"bytesTotal": 100}),
        ({BYTES_DONE: "1", BYTES_TOTAL: "9" * 40}, {}),
        ({BYTES_DONE: "1.5", BYTES_TOTAL: "2.5"}, {}),
        ({REVISION: "main"}, {}),
        ({REVISION: "A" * 40}, {}),
    ],
    ids=[
        "none",
        "no total",
        "not a number",
        "negative",
        "done past total",
        "absurd total",
        "fractions",
        "a branch, not a commit",
        "upper-case hex",
    ],
)
def test_a_missing_or_malformed_report_is_no_figure_and_changes_nothing_else(annotations, shown):
    _, rsp, _, _ = hydrating(model_cache(), **{"gke-us": annotations})
    _, plain, _, _ = hydrating(model_cache())
    row, plain_row = rows(rsp)["gke-us"], rows(plain)["gke-us"]
    assert {k: row[k] for k in FIGURES if k in row} == shown
    assert {k: v for k, v in row.items() if k not in FIGURES} == plain_row
    assert desired_resources(rsp) == desired_resources(plain)
    assert "pinnedRevision" not in desired_status(rsp)


def test_a_ready_cluster_shows_the_whole_total_and_keeps_it_once_the_job_is_gone():
    xr, rsp, observed, composed = hydrating(model_cache(), **{"gke-us": figures(1, 8 * GIB)})
    observed[JOB_US] = reporting(complete(composed[JOB_US]), **figures(8 * GIB, 8 * GIB, 8, 8))
    rsp = reconcile(xr, [US], observed)
    row = rows(rsp)["gke-us"]
    assert (row["phase"], row["progress"], row["bytesDone"]) == ("Ready", "8.0/8.0 GiB", 8 * GIB)
    del observed[JOB_US]
    rsp = reconcile(with_status(xr, rsp), [US], observed)
    row = rows(rsp)["gke-us"]
    assert (row["phase"], row["progress"], row["resolvedRevision"]) == (
        "Ready",
        "8.0/8.0 GiB",
        COMMIT_A,
    )


def test_the_first_reported_commit_is_pinned_and_handed_to_every_job():
    xr, rsp, _, _ = hydrating(model_cache(), [US, EU], **{"gke-us": figures(1, 10)})
    assert desired_status(rsp)["pinnedRevision"] == {
        "commit": COMMIT_A,
        "fingerprint": rows(rsp)["gke-us"]["fingerprint"],
        "cluster": "gke-us",
    }
    for job in (JOB_US, JOB_EU):
        annotations = manifest_of(desired_resources(rsp)[job])["metadata"]["annotations"]
        assert annotations == {PINNED_REVISION: COMMIT_A}
    # The pin holds when the branch has moved by the time another cluster resolves it.
    again = reconcile(xr, [US, EU])
    assert desired_status(again)["pinnedRevision"]["commit"] == COMMIT_A


def test_a_cluster_on_another_commit_is_told_and_never_reported_ready():
    # Both resolve the branch in the same round, after it moved in between: the first by
    # name (gke-eu) is pinned, gke-us is the odd one out.
    xr, rsp, observed, composed = hydrating(
        model_cache(),
        [US, EU],
        **{"gke-eu": figures(1, 10), "gke-us": figures(1, 10, revision=COMMIT_B)},
    )
    assert desired_status(rsp)["pinnedRevision"]["cluster"] == "gke-eu"
    us = rows(rsp)["gke-us"]
    assert us["phase"] == "Hydrating" and f"fetching commit {COMMIT_B}" in us["message"]
    assert f"pinned to {COMMIT_A} (resolved first on gke-eu)" in us["message"]

    observed[JOB_US] = reporting(complete(composed[JOB_US]), **figures(10, 10, revision=COMMIT_B))
    rsp = reconcile(xr, [US, EU], observed)
    us = rows(rsp)["gke-us"]
    assert us["phase"] == "Failed" and f"staged commit {COMMIT_B}" in us["message"]
    assert reason(rsp, "ArtifactReady") == "Failed"
    assert desired_status(rsp)["summary"]["ready"] == "0/2"

    # Its Job is re-created with the pin, and the cluster hydrates again.
    xr = with_status(xr, rsp)
    del observed[JOB_US]
    rsp = reconcile(xr, [US, EU], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Hydrating"
    job = manifest_of(desired_resources(rsp)[JOB_US])
    assert job["metadata"]["annotations"] == {PINNED_REVISION: COMMIT_A}


def test_a_new_source_starts_a_new_pin_and_an_old_jobs_report_is_ignored():
    xr, rsp, observed, _ = hydrating(model_cache(), **{"gke-us": figures(5, 10)})
    moved = model_cache(huggingFace={"repo": "Qwen/Qwen3-0.6B", "revision": "v2"})
    moved["status"] = xr["status"]
    rsp = reconcile(moved, [US], observed)  # the old Job is still what is observed
    row = rows(rsp)["gke-us"]
    assert "pinnedRevision" not in desired_status(rsp)
    assert "progress" not in row and "resolvedRevision" not in row


def test_an_s3_cache_reports_bytes_but_pins_nothing():
    s3 = model_cache(source="S3", s3={"uri": "s3://models/qwen/"})
    del s3["spec"]["huggingFace"]
    _, rsp, _, _ = hydrating(
        s3, **{"gke-us": {BYTES_DONE: "5", BYTES_TOTAL: "10", REVISION: COMMIT_A}}
    )
    assert rows(rsp)["gke-us"]["bytesDone"] == 5
    assert "pinnedRevision" not in desired_status(rsp)


def test_every_matched_cluster_hydrates_at_once_however_many():
    """No cap on hydrations: each cluster's Job is its shard's, and a shard's few clusters
    fit any response (docs/modelcache.md, Fleets of thousands of clusters)."""
    fleet = [inference_cluster(f"c{i:03d}") for i in range(260)]
    rsp = reconcile(model_cache(), fleet, validate=False)
    composed = desired_resources(rsp)
    jobs = [k for k in composed if manifest_kind(composed[k]) == "Job"]
    assert len(jobs) == len([k for k in composed if k.endswith("-claim")]) == 260
    assert {r["phase"] for r in rows(rsp).values()} == {"Pending"}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param("downloading", "downloading 1.2/2.5 GiB, 0/4 files", id="downloading"),
        pytest.param(
            "downloading; 1 of 4 attempts failed so far",
            "downloading 1.2/2.5 GiB, 0/4 files; 1 of 4 attempts failed so far",
            id="a failed attempt",
        ),
        pytest.param(
            "claim bound; starting the hydration Job",
            "downloading 1.2/2.5 GiB, 0/4 files; claim bound; starting the hydration Job",
            id="a phase that says something else (it read `0/4 files;claim`)",
        ),
    ],
)
def test_a_hydrating_message_keeps_a_space_after_every_separator(message, expected):
    report = JobReport(job="hydrate", files_done=0, files_total=4)
    assert hydrating_message("1.2/2.5 GiB", report, message) == expected
