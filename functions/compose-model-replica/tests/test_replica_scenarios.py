"""ModelReplica and its ModelCache: composed only once the weights are Ready on its cluster,
mounted where the cache says, and protected by a Usage while in use."""

import copy
from typing import Any

import pytest
from compose_model_replica.core import CLUSTER_USAGE, USAGE, USAGES, WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import (
    desired_resources,
    desired_status,
    run_function_request,
)
from modelfleet_devtools.validation import assert_valid, require_shared_schemas, validate_manifest
from modelfleet_devtools.world import inference_cluster, observed_object
from replica_world import (
    CLAIM,
    GKE,
    RUNNER,
    cache_mount,
    cache_status,
    model_cache,
    pod_templates,
    replica,
    run,
    running,
    workload,
)


@pytest.mark.parametrize(
    ("cache", "says"),
    [
        (
            model_cache("Pending", "claim not bound yet"),
            "is Pending on gke-us: claim not bound yet",
        ),
        (model_cache("Hydrating", "downloading"), "is Hydrating on gke-us: downloading"),
        (model_cache("Failed", "401 from Hugging Face"), "is Failed on gke-us: 401 from Hugging"),
        (cache_status(), "does not stage to cluster gke-us"),
        (cache_status({"name": "other", "phase": "Ready"}), "does not stage to cluster gke-us"),
        (cache_status({"name": "gke-us", "phase": "Ready"}), "reports no claimName"),
        (
            cache_status({"name": "gke-us", "phase": "Ready", "claimName": CLAIM, "path": "../x"}),
            "outside its claim",
        ),
        (
            cache_status(
                {"name": "gke-us", "phase": "Ready", "claimName": CLAIM, "path": "$(HF_TOKEN)"}
            ),
            "unusable path on gke-us: '$(HF_TOKEN)'",
        ),
    ],
    ids=[
        "claim not bound",
        "weights downloading",
        "download failed",
        "cache has not reported any cluster",
        "cache stages elsewhere",
        "ready row without a claim",
        "path escaping the claim",
        "path that is not a directory name",
    ],
)
def test_nothing_is_composed_until_the_cache_is_ready_here_and_the_status_says_why(cache, says):
    for nodes in (1, 2):
        rsp = run(replica(nodes=nodes), cache=cache)
        assert set(desired_resources(rsp)) == set(USAGES)  # no workload, no GPU
        assert desired_status(rsp)["phase"] == "WaitingForCache"
        assert says in desired_status(rsp)["message"]
        assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_a_referenced_cache_that_does_not_exist_waits_and_names_it():
    rsp = RUNNER.run(run_function_request(replica(nodes=2), required={CLUSTER: [GKE], CACHE: []}))
    assert set(desired_resources(rsp)) == {CLUSTER_USAGE}  # no cache to protect, the cluster is
    assert desired_status(rsp)["phase"] == "WaitingForCache"
    assert "ModelCache kimi-k2 not found" in desired_status(rsp)["message"]


def test_claim_and_path_come_from_the_cache_status_as_written():
    # A bring-your-own claim: the name is the user's, nothing we could recompute.
    cache = cache_status(
        {"name": "gke-us", "phase": "Ready", "claimName": "shared-models", "path": "mc-x/f00d"}
    )
    pods = pod_templates(workload(run(replica(nodes=2), cache=cache)))
    assert {role: cache_mount(pod) for role, pod in pods.items()} == {
        "leader": ("shared-models", "/mnt/models/mc-x/f00d"),
        "worker": ("shared-models", "/mnt/models/mc-x/f00d"),
    }


MODEL_PATHS = [
    # (cache path in the status, engine, --model the server gets); the weights are always at
    # /mnt/models/<path>, told to every engine as MODELFLEET_MODEL_PATH
    pytest.param("abc123", {"framework": "vLLM"}, ["--model=/mnt/models/abc123"], id="managed"),
    pytest.param(
        "mc-x/f00d",
        {"framework": "vLLM"},
        ["--model=/mnt/models/mc-x/f00d"],
        id="bring-your-own claim: per-cache sub-directory",
    ),
    pytest.param(
        "abc123",
        {"framework": "vLLM", "args": ["--model", "/mnt/models/abc123/snapshots/v2"]},
        ["--model"],
        id="the user's --model wins",
    ),
    pytest.param(
        "abc123",
        {"framework": "Custom", "command": ["/serve"]},
        [],
        id="Custom: nothing injected in argv, the path in env",
    ),
]


@pytest.mark.parametrize(("path", "engine", "model_args"), MODEL_PATHS)
def test_every_engine_pod_mounts_the_whole_claim_read_only_and_finds_the_weights_under_it(
    path, engine, model_args
):
    cache = cache_status({"name": "gke-us", "phase": "Ready", "claimName": CLAIM, "path": path})
    for nodes in (1, 2):
        pods = pod_templates(workload(run(replica(nodes=nodes, engine=engine), cache=cache)))
        for role, pod in pods.items():
            container = pod["spec"]["containers"][0]
            [mount] = [m for m in container["volumeMounts"] if m["name"] == "model-cache"]
            assert mount == {"name": "model-cache", "mountPath": "/mnt/models", "readOnly": True}
            assert cache_mount(pod) == (CLAIM, f"/mnt/models/{path}"), role
            names = [e["name"] for e in container["env"]]
            assert names.index("MODELFLEET_MODEL_PATH") == 3, role  # after identity, before user
        serving = pods.get("single", pods.get("leader"))["spec"]["containers"][0]
        argv = serving.get("command", []) + serving.get("args", [])
        assert [a for a in argv if a.startswith("--model")] == model_args


# -- the Usage: a ModelCache cannot be deleted while a replica uses it -----------------------


def observed_usage(cache: str) -> dict[str, Any]:
    """The Usage as composed for a replica of `cache`, observed on the control plane."""
    cache_obj = model_cache("Hydrating")
    cache_obj["metadata"]["name"] = cache
    composed = desired_resources(run(replica(modelCacheRef={"name": cache}), cache=cache_obj))
    return observed_object(composed[USAGE], ready=True)


NOT_CONNECTED = inference_cluster("gke-us", connected=False)
UNRESOLVED = object()  # the requirement was not resolved in this call

USAGE_CASES = [
    # (scenario, replica spec, cluster, cache, observed Usage of, running, the Usage protects)
    (
        "cache Ready: the serving replica uses it",
        {},
        GKE,
        model_cache("Ready"),
        None,
        False,
        "kimi-k2",
    ),
    (
        "cache still hydrating: protected before any workload",
        {},
        GKE,
        model_cache("Hydrating"),
        None,
        False,
        "kimi-k2",
    ),
    (
        "cluster not connected: the cache is protected all the same",
        {},
        NOT_CONNECTED,
        model_cache("Ready"),
        None,
        False,
        "kimi-k2",
    ),
    ("cache not found, nothing observed: nothing to protect", {}, GKE, None, None, False, None),
    (
        "cache not found (transiently), Usage observed: kept",
        {},
        GKE,
        None,
        "kimi-k2",
        True,
        "kimi-k2",
    ),
    ("cache requirement unresolved: Usage kept", {}, GKE, UNRESOLVED, "kimi-k2", True, "kimi-k2"),
    (
        "invalid spec: Usage kept",
        {"engine": {"framework": "Custom"}},
        GKE,
        model_cache("Ready"),
        "kimi-k2",
        True,
        "kimi-k2",
    ),
    (
        "replica switched to a cache not Ready yet: the running workload's cache stays protected",
        {"modelCacheRef": {"name": "qwen"}},
        GKE,
        model_cache("Hydrating"),
        "kimi-k2",
        True,
        "kimi-k2",
    ),
    ("no modelCacheRef: no Usage", {"modelCacheRef": None}, GKE, None, None, False, None),
    (
        "modelCacheRef removed by the user: the Usage goes with it",
        {"modelCacheRef": None},
        GKE,
        None,
        "kimi-k2",
        True,
        None,
    ),
]


@pytest.mark.parametrize(
    ("spec", "cluster", "cache", "observed_of", "workload_running", "protects"),
    [pytest.param(*case[1:], id=case[0]) for case in USAGE_CASES],
)
def test_a_usage_protects_the_cache_while_the_replica_uses_it(
    spec, cluster, cache, observed_of, workload_running, protects
):
    xr = replica(nodes=2, **spec)
    if spec.get("modelCacheRef", ...) is None:
        del xr["spec"]["modelCacheRef"]
    observed = running(replica(nodes=2)) if workload_running else {}
    if observed_of:
        observed[USAGE] = observed_usage(observed_of)
    required: dict[str, Any] = {CLUSTER: [cluster]}
    if cache is not UNRESOLVED and "modelCacheRef" in xr["spec"]:
        required[CACHE] = [cache] if cache else []
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
    usage = desired_resources(rsp).get(USAGE)
    if protects is None:
        assert usage is None
        return
    assert usage is not None
    assert usage["apiVersion"] == "protection.crossplane.io/v1beta1" and usage["kind"] == "Usage"
    assert usage["spec"]["of"] == {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "resourceRef": {"name": protects},
    }
    assert usage["spec"]["by"] == {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "resourceRef": {"name": "kimi-k2-gke-us"},
    }
    # A refused deletion is carried out once the replica (and so the Usage) is gone.
    assert usage["spec"]["replayDeletion"] is True
    assert "ModelReplica ml-team/kimi-k2-gke-us" in usage["spec"]["reason"]
    assert usage["metadata"]["labels"]["modelfleet.io/modelreplica"] == "kimi-k2-gke-us"
    assert usage["metadata"]["labels"]["modelfleet.io/namespace"] == "ml-team"
    if workload_running:  # the running workload is never dropped alongside
        assert WORKLOAD in desired_resources(rsp)


def test_the_usage_validates_against_crossplanes_crd():
    require_shared_schemas()
    for cache in (model_cache("Hydrating"), model_cache("Ready")):
        usage = desired_resources(run(replica(nodes=2), cache=cache))[USAGE]
        # Crossplane names composed resources and puts them in the XR's namespace.
        assert_valid(
            usage | {"metadata": {**usage["metadata"], "name": "x", "namespace": "ml-team"}}
        )
    # The same check rejects what Crossplane's CRD rejects (CEL included), so it can fail.
    stray = copy.deepcopy(usage)
    del stray["spec"]["by"], stray["spec"]["reason"]
    stray["spec"]["of"]["resourceRef"]["namespace"] = "other-team"
    errors = " ".join(validate_manifest(stray | {"metadata": {"name": "x"}}))
    assert 'either "spec.by" or "spec.reason" must be specified' in errors
    assert 'cross-namespace "spec.of" is not allowed without "spec.by"' in errors


CLUSTER_USAGE_CASES = [
    # (scenario, cluster requirement, Usage observed, the Usage protects)
    ("cluster connected: the replica placed there protects it", [GKE], False, "gke-us"),
    ("cluster not connected: protected all the same", [NOT_CONNECTED], False, "gke-us"),
    ("cluster not found, nothing observed: nothing to protect", [], False, None),
    ("cluster not found (transiently), Usage observed: kept", [], True, "gke-us"),
    ("cluster requirement unresolved, Usage observed: kept", UNRESOLVED, True, "gke-us"),
]


@pytest.mark.parametrize(
    ("cluster", "observed_usage_of_cluster", "protects"),
    [pytest.param(*case[1:], id=case[0]) for case in CLUSTER_USAGE_CASES],
)
def test_a_usage_protects_the_inference_cluster_the_replica_is_placed_on(
    cluster, observed_usage_of_cluster, protects
):
    xr = replica(nodes=2)
    observed = running(xr)
    if observed_usage_of_cluster:
        composed = desired_resources(run(xr, cache=model_cache("Ready")))
        observed[CLUSTER_USAGE] = observed_object(composed[CLUSTER_USAGE], ready=True)
    required: dict[str, Any] = {CACHE: [model_cache("Ready")]}
    if cluster is not UNRESOLVED:
        required[CLUSTER] = cluster
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
    usage = desired_resources(rsp).get(CLUSTER_USAGE)
    if protects is None:
        assert usage is None
        return
    assert usage is not None and usage["kind"] == "Usage"
    # The explicit empty namespace names the cluster-scoped InferenceCluster: without it
    # Crossplane would look for an InferenceCluster in the Usage's namespace, and find none.
    assert usage["spec"]["of"] == {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "resourceRef": {"name": protects, "namespace": ""},
    }
    assert usage["spec"]["by"]["resourceRef"] == {"name": "kimi-k2-gke-us"}
    assert usage["spec"]["replayDeletion"] is True
    assert "ModelReplica ml-team/kimi-k2-gke-us serves on this cluster" in usage["spec"]["reason"]
    assert WORKLOAD in desired_resources(rsp)  # the running workload is kept alongside


def test_the_cluster_usage_validates_against_crossplanes_crd():
    require_shared_schemas()
    usage = desired_resources(run(replica(nodes=2), cache=model_cache("Ready")))[CLUSTER_USAGE]
    assert_valid(usage | {"metadata": {**usage["metadata"], "name": "x", "namespace": "ml-team"}})
