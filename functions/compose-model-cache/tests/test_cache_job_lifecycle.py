"""A hydration Job from start to its TTL: what its Object is at each step.

Routine work creates and deletes no Object. A Job runs under the cluster's
hydrator ServiceAccount (composed once per workload namespace by compose-inference-cluster),
so it needs no access Objects of its own; it carries `ttlSecondsAfterFinished`, so the
workload cluster removes it an hour after it finished. Its Object is composed in full while
the Job runs; once the Job is seen finished (Complete, or Failed for good) the Object only
watches it (the same manifest, managementPolicies [Observe, Delete]): provider-kubernetes then
neither updates nor re-creates the Job, and once the TTL removed it reports success and keeps
the last echo, so the Object stays, quiet, until the cache, its source or the cluster goes.
Its manifest keeps what the server fixed when the Job was created, as the server has it
(the pod template): with server-side apply the provider dry-runs an apply of it on every
poll, and one without the template it applied before is refused (seen on the real control
plane: `cannot dry run SSA: Job.batch ... is invalid`).
A cluster whose InferenceCluster does not report the hydrator account yet starts no Job: it
waits Pending, and the cache asks to be looked at again soon.
"""

from datetime import timedelta
from typing import Any

import pytest
from cache_world import (
    US,
    bound,
    complete,
    desired_resources,
    job_status,
    keys,
    model_cache,
    reconcile,
    rows,
    with_status,
)
from modelfleet_devtools.world import inference_cluster, observed_object
from previous_release import previous_job

CLAIM, _, JOB = keys("gke-us")
NO_ACCOUNT = inference_cluster(
    "gke-us", labels={"modelfleet.io/region": "us"}, hydrator_access=False
)
FAILED = {
    "failed": 4,
    "conditions": [
        {
            "type": "Failed",
            "status": "True",
            "reason": "BackoffLimitExceeded",
            "message": "Job has reached the specified backoff limit",
        }
    ],
}
DEFAULT_TTL = timedelta(minutes=1)
COMPOSED = desired_resources(reconcile(model_cache(), [US]))
WAITING_FOR_ACCOUNT = (
    "waiting for InferenceCluster gke-us to report its hydrator ServiceAccount "
    "(status.hydratorServiceAccount)"
)


def manifest_of(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["forProvider"]["manifest"]


def the_job(state: str) -> dict[str, Any] | None:
    """The Job's Object as provider-kubernetes reports it in `state`."""
    job = COMPOSED[JOB]
    if state == "not observed":
        return None
    if state == "created, not reported yet":
        # By the previous release (its pod under a ServiceAccount of its own), say.
        obj = observed_object(previous_job(job))
        del obj["status"]["atProvider"]
        return obj
    if state == "running":
        return job_status(job, active=1)
    if state == "complete":
        return complete(job)
    if state == "failed":
        return job_status(job, **FAILED)
    raise ValueError(state)


def form(obj: dict[str, Any] | None, observed: dict[str, Any] | None) -> str:
    """What the Job's desired Object is: absent, the managed Job, the Job only watched, or
    the observed Object carried as it is."""
    if obj is None:
        return "none"
    if observed is not None and obj["spec"] == observed["spec"] and obj != COMPOSED[JOB]:
        return "kept as observed"
    if obj["spec"].get("managementPolicies") == ["Observe", "Delete"]:
        return "watched"
    return "full"


STARTING = "claim bound; starting the hydration Job"
GAVE_UP = "hydration failed (BackoffLimitExceeded): Job has reached the specified backoff limit"
NEW, UNREPORTED = "not observed", "created, not reported yet"

SCENARIOS = [
    # id: cluster, Job state, previous phase -> Job Object, phase, message, look again soon
    # (soon: whenever a download is under way, rows.staging_under_way; not once it ended)
    ("nothing started", US, NEW, None, "full", "Hydrating", STARTING, True),
    ("no hydrator account yet: waits", NO_ACCOUNT, NEW, None,
     "none", "Pending", WAITING_FOR_ACCOUNT, True),
    ("running", US, "running", "Hydrating", "full", "Hydrating", "downloading", True),
    ("running, the account not reported for a moment", NO_ACCOUNT, "running", "Hydrating",
     "full", "Hydrating", "downloading", True),
    ("not reported yet, no account: kept", NO_ACCOUNT, UNREPORTED, "Hydrating",
     "kept as observed", "Hydrating", "downloading", True),
    ("complete: watched", US, "complete", "Hydrating", "watched", "Ready", None, False),
    ("complete, no account reported: watched", NO_ACCOUNT, "complete", "Hydrating",
     "watched", "Ready", None, False),
    ("failed for good: watched, reason shown", US, "failed", "Hydrating",
     "watched", "Failed", GAVE_UP, False),
    ("Ready, its Object gone (an earlier release dropped it)", US, NEW, "Ready",
     "none", "Ready", None, False),
    ("Failed, its Object deleted to retry: a new Job", US, NEW, "Failed",
     "full", "Hydrating", STARTING, True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("cluster", "state", "before", "expected", "phase", "message", "soon"),
    [pytest.param(*row[1:], id=row[0]) for row in SCENARIOS],
)
def test_the_jobs_object_through_its_life(cluster, state, before, expected, phase, message, soon):
    xr = model_cache()
    if before:
        fingerprint = JOB.rpartition("-")[2]
        xr["status"] = {
            "clusters": [{"name": "gke-us", "phase": before, "fingerprint": fingerprint}]
        }
    observed = {CLAIM: bound(COMPOSED[CLAIM])}
    job = the_job(state)
    if job is not None:
        observed[JOB] = job
    rsp = reconcile(xr, [cluster], observed)
    desired = desired_resources(rsp)
    assert desired[CLAIM]["spec"] == COMPOSED[CLAIM]["spec"], "the claim is never touched"
    assert set(desired) <= {CLAIM, JOB}, "no access Objects of its own"
    assert form(desired.get(JOB), job) == expected
    row = rows(rsp)["gke-us"]
    assert row["phase"] == phase
    assert row.get("message") == message
    assert (rsp.meta.ttl.ToTimedelta() < DEFAULT_TTL) == soon


def test_the_claim_and_the_job_are_watched_so_their_changes_are_seen_at_once():
    """A claim binding and a Job completing reach the cache's row as they happen
    (provider-kubernetes watches them), not at its next poll (rare, by design)."""
    observed = {CLAIM: bound(COMPOSED[CLAIM]), JOB: complete(COMPOSED[JOB])}
    finished = desired_resources(reconcile(model_cache(), [US], observed))[JOB]
    for obj in (COMPOSED[CLAIM], COMPOSED[JOB], finished):
        assert obj["spec"]["watch"] is True, manifest_of(obj)["kind"]


def test_a_running_job_runs_under_the_hydrator_account_with_a_ttl():
    job = manifest_of(COMPOSED[JOB])
    assert job["spec"]["ttlSecondsAfterFinished"] == 3600
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "modelfleet-hydrator"
    assert pod["automountServiceAccountToken"] is True


def test_a_finished_jobs_object_is_the_job_observed_and_deleted_with_it():
    observed = {CLAIM: bound(COMPOSED[CLAIM]), JOB: complete(COMPOSED[JOB])}
    watched = desired_resources(reconcile(model_cache(), [US], observed))[JOB]
    full = COMPOSED[JOB]
    # What the server fixes at creation stays (a dry-run apply without the template would
    # be refused); what may change is left out (it is never applied).
    job = manifest_of(full)
    assert manifest_of(watched) == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job["metadata"]["name"], "namespace": "modelfleet"},
        "spec": {
            "podReplacementPolicy": job["spec"]["podReplacementPolicy"],
            "template": job["spec"]["template"],
        },
    }
    assert watched["spec"]["managementPolicies"] == ["Observe", "Delete"]
    assert watched["spec"]["readiness"] == full["spec"]["readiness"], "Ready while Complete"
    assert watched["spec"]["providerConfigRef"] == full["spec"]["providerConfigRef"]
    assert watched["metadata"]["labels"] == full["metadata"]["labels"]


def test_a_finished_job_an_earlier_release_created_is_watched_as_it_exists():
    """Its pod template (under its own ServiceAccount) is fixed: the watching Object carries
    it as the Job has it, never this release's."""
    old = previous_job(COMPOSED[JOB])
    job = complete(old)
    job["spec"] = COMPOSED[JOB]["spec"]  # the Object already asks for this release's Job
    rsp = reconcile(model_cache(), [US], {CLAIM: bound(COMPOSED[CLAIM]), JOB: job})
    watched = desired_resources(rsp)[JOB]
    assert watched["spec"]["managementPolicies"] == ["Observe", "Delete"]
    template = manifest_of(watched)["spec"]["template"]
    assert template == manifest_of(old)["spec"]["template"]


def test_after_its_ttl_the_job_is_not_created_again_and_the_cache_stays_ready():
    """Reconcile after reconcile: the Job completes, its Object only watches it, the TTL
    removes the Job (provider-kubernetes keeps the last echo and Ready), and nothing changes."""
    xr = model_cache()
    observed = {CLAIM: bound(COMPOSED[CLAIM]), JOB: job_status(COMPOSED[JOB], active=1)}
    rsp = reconcile(xr, [US], observed)
    assert form(desired_resources(rsp)[JOB], observed[JOB]) == "full"
    observed[JOB] = complete(desired_resources(rsp)[JOB])
    rsp = reconcile(with_status(xr, rsp), [US], observed)
    watched = desired_resources(rsp)[JOB]
    for _ in range(3):  # the TTL passed: the echo is what was last seen
        xr = with_status(xr, rsp)
        observed[JOB] = complete(watched) | {"status": observed[JOB]["status"]}
        rsp = reconcile(xr, [US], observed)
        assert desired_resources(rsp)[JOB] == watched
        assert rows(rsp)["gke-us"]["phase"] == "Ready"
        assert rsp.desired.composite.ready
