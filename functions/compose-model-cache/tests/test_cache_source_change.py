"""A new source on a cluster that has a Job: the old Job's Objects go, new ones come.

provider-kubernetes finds an Object's remote object by the name in its manifest and deletes
only that one (its Object controller's Observe and Delete). So the Job of a source is composed
under a key that carries the fingerprint, as its name does (and so were, in the previous
release, its ServiceAccount, Role and RoleBinding: previous_release.py): a new source composes
a new Object, and the old ones are left out, for Crossplane to delete, and provider-kubernetes
the old Job (and its access) with them. The claim keeps its key: the weights being served stay
where they are. Nothing is left out while what is observed cannot be trusted (clusters
unresolved, a cluster unreachable, a spec refused).

Earlier releases composed every source's Job under `<cluster>-hydrate`: such an Object stays
while what its manifest asks for is the current source's Job (dropping it would delete that
very Job), and goes like any old source's once it asks for another.
"""

import copy

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
from compose_model_cache.keys import access_keys, legacy_job_key
from modelfleet_devtools.world import inference_cluster, observed_object
from previous_release import previous_objects

NEW_SOURCE = {"huggingFace": {"repo": "Qwen/Qwen3-0.6B", "revision": "v1.0"}}
FAILED = [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]


def job_objects(job_key):
    """The keys of a Job and of the ServiceAccount, Role and RoleBinding the previous release
    composed beside it."""
    return {job_key, *access_keys(job_key).values()}


def at_old_source(job_state, *, previous_release=False):
    """gke-us at the first source, its claim bound and its Job in `job_state` (None: its
    Object is gone, as the previous release dropped a complete Job), as Crossplane stores the
    cache after that reconcile. `previous_release`: the Job and its access as the previous
    release composed them. Returns (the cache, what is observed)."""
    xr = model_cache()
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(xr, [US]))
    objects = previous_objects(job, composed[job]) if previous_release else {job: composed[job]}
    observed = {claim: bound(composed[claim])}
    observed |= {k: observed_object(o) for k, o in objects.items() if k != job}
    states = {
        "running": lambda o: job_status(o, active=1),
        "failed": lambda o: job_status(o, failed=4, conditions=FAILED),
        "complete": complete,
        None: complete,
    }
    observed[job] = states[job_state](objects[job])
    xr = with_status(xr, reconcile(xr, [US], observed, validate=not previous_release))
    if job_state is None:
        observed = {claim: observed[claim]}
    return xr, observed


RELEASES = pytest.mark.parametrize(
    "previous_release", [False, True], ids=["composed by this release", "by the previous one"]
)


def with_source(xr, source):
    moved = copy.deepcopy(xr)
    moved["spec"] |= source
    return moved


@RELEASES
@pytest.mark.parametrize(
    ("job_state", "phase_before"),
    [
        pytest.param("running", "Hydrating", id="old Job still downloading"),
        pytest.param("failed", "Failed", id="old Job failed for good"),
        pytest.param("complete", "Ready", id="old Job complete, still observed"),
        pytest.param(None, "Ready", id="Ready, old Job's Object already gone"),
    ],
)
def test_a_new_source_drops_the_old_jobs_objects_and_composes_new_ones(
    job_state, phase_before, previous_release
):
    xr, observed = at_old_source(job_state, previous_release=previous_release)
    assert xr["status"]["clusters"][0]["phase"] == phase_before
    claim, _, old_job = keys("gke-us")
    moved = with_source(xr, NEW_SOURCE)
    new_claim, _, new_job = keys("gke-us", moved)
    assert new_claim == claim and new_job != old_job

    rsp = reconcile(moved, [US], observed)
    desired = desired_resources(rsp)
    assert not job_objects(old_job) & set(desired), "the old source's Objects are left out"
    assert set(desired) == {claim, new_job}, "a new Job, no access of its own"
    # The claim keeps its key and what it asks for: the copy being served is not touched.
    assert desired[claim]["spec"] == observed[claim]["spec"]
    old_name = observed.get(old_job, {}).get("spec", {}).get("forProvider", {})
    new_name = desired[new_job]["spec"]["forProvider"]["manifest"]["metadata"]["name"]
    assert old_name.get("manifest", {}).get("metadata", {}).get("name") != new_name
    row = rows(rsp)["gke-us"]
    assert (row["phase"], row["message"]) == (
        "Hydrating",
        "claim bound; starting the hydration Job",
    )
    assert row["fingerprint"] == new_job.rpartition("-")[2]


@RELEASES
@pytest.mark.parametrize("job_state", ["running", "failed"])
def test_an_unchanged_source_keeps_the_same_keys(job_state, previous_release):
    """A running Job keeps whatever it runs with; a failed one keeps its Object (watching it:
    its reason stays visible, deleting it retries), and the access the previous release gave
    it goes, once."""
    xr, observed = at_old_source(job_state, previous_release=previous_release)
    rsp = reconcile(xr, [US], observed)
    claim, _, job = keys("gke-us")
    expected = set(observed) if job_state == "running" else {claim, job}
    assert set(desired_resources(rsp)) == expected


UNREACHABLE = inference_cluster("gke-us", labels={"modelfleet.io/region": "us"}, connected=False)


@pytest.mark.parametrize(
    ("source", "clusters"),
    [
        pytest.param(NEW_SOURCE, None, id="new source, clusters not resolved yet"),
        pytest.param(NEW_SOURCE, [UNREACHABLE], id="new source, cluster unreachable"),
        pytest.param({"sizeGiB": None}, [US], id="spec refused (no size, no claim of one's own)"),
    ],
)
@RELEASES
@pytest.mark.parametrize("job_state", ["running", "failed"])
def test_an_uncertain_reconcile_keeps_the_old_jobs_objects(
    job_state, source, clusters, previous_release
):
    xr, observed = at_old_source(job_state, previous_release=previous_release)
    moved = with_source(xr, source)
    moved["spec"] = {k: v for k, v in moved["spec"].items() if v is not None}
    rsp = reconcile(moved, clusters, observed, validate=clusters is not None)
    assert set(observed) <= set(desired_resources(rsp)), "nothing observed is left out"
    assert not job_objects(keys("gke-us", model_cache(**NEW_SOURCE))[2]) & set(
        desired_resources(rsp)
    ), "nothing new is composed where nothing can be staged"


# --- Upgrading from releases that composed every source's Job under `<cluster>-hydrate` ---

LEGACY = legacy_job_key("gke-us")
AT_NEW_SOURCE = with_source(model_cache(), NEW_SOURCE)
RUNNING = {"active": 1}
COMPLETE = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
FAILED_FOR_GOOD = {"failed": 4, "conditions": FAILED}


def job_and_access(xr):
    """The Objects of `xr`'s Job and its access on gke-us, as the previous release composed
    them."""
    job = keys("gke-us", xr)[2]
    return previous_objects(job, desired_resources(reconcile(xr, [US]))[job])


def under_legacy_keys(objects, xr):
    """The same Objects under the keys an earlier release composed them under."""
    own = keys("gke-us", xr)[2]
    return {LEGACY + k.removeprefix(own): obj for k, obj in objects.items()}


def legacy_world(asks_for, remote_status, echoes=None):
    """gke-us as an earlier release left it: its claim bound, and under the legacy keys the
    Objects of the Job of the cache `asks_for` (what their manifests ask for, what
    provider-kubernetes deletes with them), the Job in `remote_status`. `echoes`: the cache
    whose Job provider-kubernetes still echoes (the Object re-pointed, the new Job not
    observed yet); by default the one asked for."""
    claim = keys("gke-us")[0]
    observed = {claim: bound(desired_resources(reconcile(model_cache(), [US]))[claim])}
    for key, obj in under_legacy_keys(job_and_access(asks_for), asks_for).items():
        observed[key] = observed_object(obj)
    echoed = under_legacy_keys(job_and_access(echoes or asks_for), echoes or asks_for)[LEGACY]
    job = observed_object(echoed, remote_status=remote_status, ready=False)
    job["spec"] = copy.deepcopy(observed[LEGACY]["spec"])
    observed[LEGACY] = job
    return observed


def asked_name(obj):
    return obj["spec"]["forProvider"]["manifest"]["metadata"]["name"]


OLD, NEW = model_cache(), AT_NEW_SOURCE  # the cache at its first source, and at a new one
STARTING = ("Hydrating", "claim bound; starting the hydration Job")
LEGACY_JOB, LEGACY_ALL = {LEGACY}, job_objects(LEGACY)


@pytest.mark.parametrize(
    ("cache", "asks_for", "remote_status", "echoes", "composed", "phase"),
    [
        pytest.param(
            OLD, OLD, RUNNING, None, LEGACY_ALL, ("Hydrating", "downloading"),
            id="the current Job mid-download: stays under the legacy keys, with its access",
        ),
        pytest.param(
            OLD, OLD, FAILED_FOR_GOOD, None, LEGACY_JOB, ("Failed", None),
            id="the current Job failed: watched under the legacy key, its reason visible",
        ),
        pytest.param(
            OLD, OLD, COMPLETE, None, LEGACY_JOB, ("Ready", None),
            id="the current Job complete: watched under the legacy key, its access goes",
        ),
        pytest.param(
            NEW, NEW, RUNNING, OLD, LEGACY_ALL, STARTING,
            id="re-pointed at the current Job, still echoing the old: not its state",
        ),
        pytest.param(
            NEW, NEW, COMPLETE, OLD, LEGACY_ALL, STARTING,
            id="re-pointed, still echoing the old Job complete: not Ready",
        ),
        pytest.param(
            NEW, OLD, RUNNING, None, "new", STARTING,
            id="an older source's Job running: left out, the new key composed",
        ),
        pytest.param(
            NEW, OLD, FAILED_FOR_GOOD, None, "new", STARTING,
            id="an older source's Job failed: left out, the new key composed",
        ),
    ],
)  # fmt: skip
def test_a_job_under_the_legacy_key_stays_only_while_it_is_the_current_one(
    cache, asks_for, remote_status, echoes, composed, phase
):
    observed = legacy_world(asks_for, remote_status, echoes)
    rsp = reconcile(cache, [US], observed)
    desired = desired_resources(rsp)
    new_key = keys("gke-us", cache)[2]
    expected = {new_key} if composed == "new" else composed
    assert set(desired) - {keys("gke-us")[0]} == expected
    current_job = asked_name(job_and_access(cache)[new_key])
    assert {asked_name(desired[k]) for k in expected} == {current_job}
    if phase[0] in ("Ready", "Failed"):
        assert desired[LEGACY]["spec"]["managementPolicies"] == ["Observe", "Delete"]
    row = rows(rsp)["gke-us"]
    assert row["phase"] == phase[0]
    if phase[1]:
        assert row["message"] == phase[1]


def test_both_keys_asking_for_the_current_job_both_stay_until_it_is_done():
    """The new key composed while the legacy Object was not observed: two Objects manage
    one Job, and dropping either would delete it. Once it is done both only watch it."""
    observed = legacy_world(model_cache(), RUNNING)
    own = job_and_access(model_cache())
    observed |= {k: observed_object(obj) for k, obj in own.items()}
    observed[keys("gke-us")[2]] = job_status(own[keys("gke-us")[2]], active=1)
    desired = desired_resources(reconcile(model_cache(), [US], observed))
    assert set(observed) <= set(desired)
    done = {
        k: complete(obj) if k in (LEGACY, keys("gke-us")[2]) else obj for k, obj in observed.items()
    }
    desired = desired_resources(reconcile(model_cache(), [US], done))
    assert set(desired) == {keys("gke-us")[0], LEGACY, keys("gke-us")[2]}, "the access goes"
    for key in (LEGACY, keys("gke-us")[2]):
        assert desired[key]["spec"]["managementPolicies"] == ["Observe", "Delete"], key


@pytest.mark.parametrize("remote_status", [RUNNING, FAILED_FOR_GOOD])
def test_an_unreachable_cluster_keeps_an_older_sources_job_under_the_legacy_key(remote_status):
    observed = legacy_world(model_cache(), remote_status)
    rsp = reconcile(AT_NEW_SOURCE, [UNREACHABLE], observed)
    assert set(desired_resources(rsp)) == set(observed), "kept, nothing new composed"
