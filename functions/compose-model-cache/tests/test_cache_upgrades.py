"""Upgrading the function while Jobs exist: a Job's pod template is fixed at creation.

A Job an earlier version created keeps its template (and every other field the API server
refuses to change), as the API server returned it; its metadata and mutable spec are composed
fresh. A new Job (another cluster, another source) gets the current template. Each row checks
the proposed update as provider-kubernetes applies it (a JSON merge patch onto the Job) and
as the API server then validates it: no immutable field changes.
"""

import copy

import pytest
from cache_world import (
    EU,
    US,
    bound,
    complete,
    desired_resources,
    keys,
    model_cache,
    reconcile,
    rows,
    with_status,
)
from compose_model_cache.keys import access_keys
from modelfleet_cli.simulate.provider import Providers
from modelfleet_cli.simulate.workload import Pool, WorkloadCluster
from modelfleet_contracts.hydration import BYTES_DONE, BYTES_TOTAL, PINNED_REVISION, REVISION
from modelfleet_contracts.immutable import (
    CLAIM_SPEC_IMMUTABLE,
    JOB_GENERATED_TEMPLATE_LABELS,
    JOB_SPEC_IMMUTABLE,
)
from modelfleet_devtools.world import inference_cluster, observed_object
from previous_release import previous_access, previous_job

CLAIM_US, _, JOB_US = keys("gke-us")
CLAIM_EU, _, JOB_EU = keys("gke-eu")
OLD_IMAGE = "ghcr.io/modelfleet/model-hydrator:0.0.9"
UID = "5b0e8e0c-1c1f-4f43-9a43-2f3c1f0d9e21"
COMMIT = "c" * 40


def manifest_of(obj):
    return obj["spec"]["forProvider"]["manifest"]


def container_of(obj):
    return manifest_of(obj)["spec"]["template"]["spec"]["containers"][0]


def composed_by_an_earlier_version(obj):
    """The same Job Object as an earlier version composed it: another image, a hydrator not
    told its Job's name (no `--job=`, as before progress reporting), its pod under the Job's
    own ServiceAccount and no TTL (as the previous release: previous_release.py)."""
    old = previous_job(obj)
    container = container_of(old)
    container["image"] = OLD_IMAGE
    container["command"] = [a for a in container["command"] if not a.startswith("--job=")]
    return old


def served(observed):
    """`observed` with its Job echoed as the API server returns it: the selector and the
    template labels generated from the Job's uid and name, defaults filled in, and the empty
    `creationTimestamp` it echoes in a template."""
    echo = observed["status"]["atProvider"]["manifest"]
    name = echo["metadata"]["name"]
    echo["metadata"] |= {"uid": UID, "resourceVersion": "4711", "generation": 1}
    spec = echo["spec"]
    spec |= {"completions": 1, "parallelism": 1, "completionMode": "NonIndexed", "suspend": False}
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}
    template = spec["template"]
    template["metadata"]["creationTimestamp"] = None
    template["metadata"]["labels"] |= {
        "controller-uid": UID,
        "batch.kubernetes.io/controller-uid": UID,
        "job-name": name,
        "batch.kubernetes.io/job-name": name,
    }
    pod = template["spec"]
    pod |= {
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }
    for container in pod["containers"]:
        container |= {
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
    return observed


def merge_patch(target, patch):
    """RFC 7386, as client-side apply sends a manifest: mappings merge, the rest replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def immutable_changes(now, desired_manifest):
    """The spec fields the API server would refuse to change, applying the manifest."""
    updated = merge_patch(now, desired_manifest)
    fixed = (*JOB_SPEC_IMMUTABLE, "selector") if now["kind"] == "Job" else CLAIM_SPEC_IMMUTABLE
    return [f for f in fixed if updated["spec"].get(f) != now["spec"].get(f)]


def running_world(remote_status, *, refused=False):
    """gke-us with its claim bound and a Job an earlier version created, in `remote_status`,
    beside the access it runs with; `refused`: this version already asked for its own
    template once and was refused (the Object carries the new manifest, Synced=False).
    Returns (xr, observed, composed now)."""
    xr = model_cache()
    composed = desired_resources(reconcile(xr, [US]))
    old = composed_by_an_earlier_version(composed[JOB_US])
    job = observed_object(old, remote_status=remote_status, ready=False)
    if refused:
        job["spec"]["forProvider"]["manifest"] = copy.deepcopy(manifest_of(composed[JOB_US]))
        job["status"]["conditions"][0] |= {
            "status": "False",
            "reason": "ReconcileError",
            "message": f'cannot apply object: Job.batch "{manifest_of(old)["metadata"]["name"]}"'
            " is invalid: spec.template: Invalid value: ...: field is immutable",
        }
    observed = {CLAIM_US: bound(composed[CLAIM_US]), JOB_US: served(job)}
    observed |= {k: observed_object(o) for k, o in previous_access(JOB_US, old).items()}
    return xr, observed, composed


@pytest.mark.parametrize(
    ("remote_status", "refused", "phase"),
    [
        pytest.param({"active": 1}, False, "Hydrating", id="running"),
        pytest.param({"active": 1, "failed": 2}, False, "Hydrating", id="running, retried"),
        pytest.param(
            {"active": 1},
            True,
            "Hydrating",
            id="running, refused once already (Synced=False): recovers",
        ),
    ],
)
def test_an_existing_job_keeps_what_cannot_change_and_gets_the_rest_fresh(
    remote_status, refused, phase
):
    xr, observed, composed = running_world(remote_status, refused=refused)
    rsp = reconcile(xr, [US], observed)
    assert rows(rsp)["gke-us"]["phase"] == phase

    job_now = observed[JOB_US]["status"]["atProvider"]["manifest"]
    desired = manifest_of(desired_resources(rsp)[JOB_US])
    assert immutable_changes(job_now, desired) == []
    # The template is the one the Job runs, not this version's, and not the server's own.
    container = desired["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == OLD_IMAGE
    assert not any(a.startswith("--job=") for a in container["command"])
    assert container["terminationMessagePath"] == "/dev/termination-log"  # a server default
    template_metadata = desired["spec"]["template"]["metadata"]
    assert not JOB_GENERATED_TEMPLATE_LABELS & set(template_metadata["labels"])
    assert "creationTimestamp" not in template_metadata
    assert "selector" not in desired["spec"]
    # Metadata and the mutable spec are this version's: the TTL too, so the workload side
    # cleans the Job up once it finishes.
    current = manifest_of(composed[JOB_US])
    assert desired["metadata"] == current["metadata"]
    fields = ("backoffLimit", "activeDeadlineSeconds", "podReplacementPolicy")
    for field in (*fields, "ttlSecondsAfterFinished"):
        assert desired["spec"][field] == current["spec"][field]
    # It runs under its own ServiceAccount still (fixed in its template), which stays.
    assert desired["spec"]["template"]["spec"]["serviceAccountName"] == job_now["metadata"]["name"]
    assert set(access_keys(JOB_US).values()) <= set(desired_resources(rsp))


def test_the_pinned_revision_still_reaches_a_job_created_by_an_earlier_version():
    xr, observed, _ = running_world({"active": 1})
    echo = observed[JOB_US]["status"]["atProvider"]["manifest"]
    echo["metadata"]["annotations"] = {BYTES_DONE: "1", BYTES_TOTAL: "10", REVISION: COMMIT}
    rsp = reconcile(xr, [US], observed)
    desired = manifest_of(desired_resources(rsp)[JOB_US])
    assert desired["metadata"]["annotations"] == {PINNED_REVISION: COMMIT}
    assert desired["spec"]["template"]["spec"]["containers"][0]["image"] == OLD_IMAGE
    assert immutable_changes(echo, desired) == []


def test_a_cluster_without_a_job_gets_the_current_template_beside_an_old_one():
    xr, observed, _ = running_world({"active": 1})
    eu = desired_resources(reconcile(xr, [US, EU]))
    observed[CLAIM_EU] = bound(eu[CLAIM_EU])
    rsp = reconcile(xr, [US, EU], observed)
    desired = desired_resources(rsp)
    assert container_of(desired[JOB_US])["image"] == OLD_IMAGE
    assert container_of(desired[JOB_EU]) == container_of(eu[JOB_EU])
    assert (
        f"--job={manifest_of(eu[JOB_EU])['metadata']['name']}"
        in (container_of(desired[JOB_EU])["command"])
    )
    assert rows(rsp)["gke-eu"]["phase"] == "Hydrating"


def test_a_job_not_reported_yet_gets_the_current_template():
    xr, observed, composed = running_world({"active": 1})
    del observed[JOB_US]["status"]["atProvider"]  # created, not observed yet
    rsp = reconcile(xr, [US], observed)
    assert container_of(desired_resources(rsp)[JOB_US]) == container_of(composed[JOB_US])


def test_a_new_source_gets_a_new_job_with_the_current_template():
    _, observed, composed = running_world({"active": 1})
    moved = model_cache(huggingFace={"repo": "Qwen/Qwen3-0.6B", "revision": "v2"})
    rsp = reconcile(moved, [US], observed)
    assert JOB_US not in desired_resources(rsp), "the old source's Job is left out"
    desired = manifest_of(desired_resources(rsp)[keys("gke-us", moved)[2]])
    name = desired["metadata"]["name"]
    assert name != manifest_of(composed[JOB_US])["metadata"]["name"]
    container = desired["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] != OLD_IMAGE
    assert f"--job={name}" in container["command"]
    assert "--revision=v2" in container["command"]


def test_a_ready_cluster_with_an_old_job_stays_ready_and_its_job_is_not_updated():
    xr, observed, composed = running_world({"active": 1})
    old = composed_by_an_earlier_version(composed[JOB_US])
    observed[JOB_US] = served(complete(old))
    rsp = reconcile(xr, [US], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Ready"
    watched = desired_resources(rsp)[JOB_US]
    assert watched["spec"]["managementPolicies"] == ["Observe", "Delete"], "watched, not updated"
    echo = observed[JOB_US]["status"]["atProvider"]["manifest"]
    assert immutable_changes(echo, manifest_of(watched)) == [], "a dry-run apply is accepted"
    # ... and stays Ready once its Object no longer sees it (gone by hand: it had no TTL).
    xr = with_status(xr, rsp)
    observed[JOB_US] = complete(watched)
    observed[JOB_US]["status"]["atProvider"]["manifest"] = served(complete(old))["status"][
        "atProvider"
    ]["manifest"]
    rsp = reconcile(xr, [US], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Ready"


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda echo: echo.update(kind="Pod"), id="another kind"),
        pytest.param(lambda echo: echo.update(apiVersion="acme.io/v1"), id="another group"),
        pytest.param(lambda echo: echo["metadata"].pop("name"), id="no name"),
        pytest.param(lambda echo: echo["spec"].pop("template"), id="no template"),
        pytest.param(lambda echo: echo.update(spec="Job"), id="a spec that is no mapping"),
    ],
)
def test_an_echo_that_is_no_job_is_no_existing_job(edit):
    xr, observed, composed = running_world({"active": 1})
    edit(observed[JOB_US]["status"]["atProvider"]["manifest"])
    rsp = reconcile(xr, [US], observed)
    assert container_of(desired_resources(rsp)[JOB_US]) == container_of(composed[JOB_US])


def test_modelfleet_simulate_takes_the_update_it_refuses_without_the_rule():
    """With `modelfleet simulate`'s cluster and provider-kubernetes: the Job an earlier
    version created runs; what this version composes for it applies (Synced), what it would
    compose for a new Job of that name is refused as a real API server refuses it."""
    c = WorkloadCluster("gke-us", [Pool("h100", 1, 8)], {"filestore-rwx"}, hydration_rounds=9)
    c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "modelfleet"}})
    providers = Providers({c.name: c}, lambda pc: c.name, lambda ns, n: None)
    xr = model_cache()
    composed = desired_resources(reconcile(xr, [US]))
    observed = {
        CLAIM_US: composed[CLAIM_US],
        JOB_US: composed_by_an_earlier_version(composed[JOB_US]),
    }
    for obj in observed.values():
        providers.sync(obj)
    c.tick()
    for obj in observed.values():
        providers.observe(obj)
    rsp = reconcile(xr, [US], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Hydrating"

    def synced(job):
        obj = copy.deepcopy(observed[JOB_US]) | {"spec": job["spec"]}
        providers.sync(obj)
        return next(x for x in obj["status"]["conditions"] if x["type"] == "Synced")

    assert synced(desired_resources(rsp)[JOB_US])["status"] == "True"
    refused = synced(composed[JOB_US])
    assert refused["status"] == "False" and "field is immutable" in refused["message"]


RENAMED = inference_cluster("gke-us", storage_class="filestore-rwx-v2")


@pytest.mark.parametrize(
    ("spec", "cluster"),
    [
        pytest.param({}, RENAMED, id="the cluster's class renamed"),
        pytest.param({"storage": {"storageClassName": "premium-rwx"}}, US, id="class edited"),
    ],
)
def test_an_existing_claim_keeps_its_class_and_its_size_follows_the_spec(spec, cluster):
    xr = model_cache()
    composed = desired_resources(reconcile(xr, [US]))
    claim = observed_object(composed[CLAIM_US], remote_status={"phase": "Bound"}, ready=True)
    echo = claim["status"]["atProvider"]["manifest"]
    echo["spec"] |= {"volumeMode": "Filesystem", "volumeName": "pvc-5b0e8e0c"}  # the server's
    observed = {CLAIM_US: claim, JOB_US: complete(composed[JOB_US])}
    xr = with_status(xr, reconcile(xr, [US], observed))
    del observed[JOB_US]  # cleaned up once Ready

    changed = model_cache(sizeGiB=20, **spec) | {"status": xr["status"]}
    rsp = reconcile(changed, [cluster], observed)
    assert rows(rsp)["gke-us"]["phase"] == "Ready"
    desired = manifest_of(desired_resources(rsp)[CLAIM_US])
    assert immutable_changes(echo, desired) == []
    assert desired["spec"]["storageClassName"] == "filestore-rwx"
    assert desired["spec"]["resources"] == {"requests": {"storage": "20Gi"}}
    assert "volumeName" not in desired["spec"], "the binder's, never composed"


def test_a_claim_that_agrees_is_composed_as_it_is():
    xr = model_cache()
    composed = desired_resources(reconcile(xr, [US]))
    claim = bound(composed[CLAIM_US])
    rsp = reconcile(xr, [US], {CLAIM_US: claim})
    assert desired_resources(rsp)[CLAIM_US] == composed[CLAIM_US]


# --- Upgrading from the release that gave every Job access Objects of its own ---

ACCESS_US = set(access_keys(JOB_US).values())
COMPLETE = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
FAILED = {"failed": 4, "conditions": [{"type": "Failed", "status": "True"}]}


@pytest.mark.parametrize(
    ("remote_status", "phase_before", "job", "access_stays", "phase"),
    [
        pytest.param({"active": 1}, "Hydrating", "full", True, "Hydrating",
                     id="running: keeps running, with its own access, until it finishes"),
        pytest.param(COMPLETE, "Hydrating", "watched", False, "Ready",
                     id="complete: watched; its access dropped once"),
        pytest.param(FAILED, "Failed", "watched", False, "Failed",
                     id="failed for good: watched, its reason shown; its access dropped once"),
        pytest.param(None, "Ready", None, False, "Ready",
                     id="Ready, its Job and access dropped by the previous release: nothing"),
    ],
)  # fmt: skip
def test_an_upgrade_from_the_previous_release_loses_nothing(
    remote_status, phase_before, job, access_stays, phase
):
    xr, observed, composed = running_world(remote_status or COMPLETE)
    fingerprint = JOB_US.rpartition("-")[2]
    xr["status"] = {
        "clusters": [{"name": "gke-us", "phase": phase_before, "fingerprint": fingerprint}]
    }
    if remote_status is None:
        observed = {CLAIM_US: observed[CLAIM_US]}
    rsp = reconcile(xr, [US], observed)
    desired = desired_resources(rsp)
    assert manifest_of(desired[CLAIM_US]) == manifest_of(composed[CLAIM_US]), "claim untouched"
    assert (set(desired) >= ACCESS_US) is access_stays
    assert not (ACCESS_US - set(desired)) or not (ACCESS_US & set(desired)), "all or none"
    if access_stays:  # carried as they are: the running Job's pod uses them
        for key in ACCESS_US:
            assert desired[key]["spec"] == observed[key]["spec"], key
    policies = desired[JOB_US]["spec"].get("managementPolicies") if job else None
    assert {"full": None, "watched": ["Observe", "Delete"], None: None}[job] == policies
    if job:  # as the Job exists: what the provider applies (or dry-runs) is accepted
        echo = observed[JOB_US]["status"]["atProvider"]["manifest"]
        assert immutable_changes(echo, manifest_of(desired[JOB_US])) == []
    assert (JOB_US in desired) is (job is not None)
    assert rows(rsp)["gke-us"]["phase"] == phase
