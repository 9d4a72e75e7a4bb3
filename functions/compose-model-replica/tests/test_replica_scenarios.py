"""ModelReplica and its ModelCache: composed only once the weights are Ready on its cluster,
mounted where the cache says; the Usages that protect them are its ModelDeployment's."""

from typing import Any

import pytest
from compose_model_replica.core import WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import (
    desired_resources,
    desired_status,
    run_function_request,
)
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
        assert desired_resources(rsp) == {}  # no workload, no GPU
        assert desired_status(rsp)["phase"] == "WaitingForCache"
        assert says in desired_status(rsp)["message"]
        assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_a_referenced_cache_that_does_not_exist_waits_and_names_it():
    rsp = RUNNER.run(run_function_request(replica(nodes=2), required={CLUSTER: [GKE], CACHE: []}))
    assert desired_resources(rsp) == {}
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
    # (cache path in the status, engine, the model `vllm serve` is given); the weights are
    # always at /mnt/models/<path>, told to every engine as MODELFLEET_MODEL_PATH
    pytest.param("abc123", {"framework": "vLLM"}, "/mnt/models/abc123", id="managed"),
    pytest.param(
        "mc-x/f00d",
        {"framework": "vLLM"},
        "/mnt/models/mc-x/f00d",
        id="bring-your-own claim: per-cache sub-directory",
    ),
    pytest.param(
        "abc123",
        {"framework": "vLLM", "args": ["--model", "/mnt/models/abc123/snapshots/v2"]},
        "/mnt/models/abc123/snapshots/v2",
        id="the user's --model wins",
    ),
    pytest.param(
        "abc123",
        {"framework": "vLLM", "args": ["/mnt/models/abc123/snapshots/v2", "--dtype=half"]},
        "/mnt/models/abc123/snapshots/v2",
        id="the user's positional model wins",
    ),
    pytest.param(
        "abc123",
        {"framework": "Custom", "command": ["/serve"]},
        None,
        id="Custom: nothing injected in argv, the path in env",
    ),
]


def served_model(argv: list[str]) -> str | None:
    """The model `vllm serve` serves from this argv, read as vLLM reads it: `--model` (which
    it moves to the front), else the positional argument; None for another command."""
    if argv[:2] != ["vllm", "serve"]:
        return None
    rest = argv[2:]
    given = [a for a in rest if a == "--model" or a.startswith("--model=")]
    assert len(given) <= 1, "one --model at most"
    positional = rest[0] if rest and not rest[0].startswith("-") else None
    if given:
        assert positional is None, "vLLM refuses a positional model beside --model"
        flag = given[0]
        return flag.split("=", 1)[1] if "=" in flag else rest[rest.index(flag) + 1]
    return positional


@pytest.mark.parametrize(("path", "engine", "model"), MODEL_PATHS)
def test_every_engine_pod_mounts_the_whole_claim_read_only_and_finds_the_weights_under_it(
    path, engine, model
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
            argv = container.get("command", []) + container.get("args", [])
            if role != "worker" or engine["framework"] == "vLLM":
                # Every vLLM pod, workers too, loads the same model.
                assert served_model(argv) == model, role


# -- Usages: composed by the ModelDeployment, not by the replica ------------------------------


def earlier_usage(of_kind: str, of_name: str) -> dict[str, Any]:
    """A Usage `by` this replica as an earlier version of this function composed it, observed."""
    usage = {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"labels": {"modelfleet.io/modelreplica": "kimi-k2-gke-us"}},
        "spec": {
            "of": {
                "apiVersion": "modelfleet.io/v1alpha1",
                "kind": of_kind,
                "resourceRef": {"name": of_name},
            },
            "by": {
                "apiVersion": "modelfleet.io/v1alpha1",
                "kind": "ModelReplica",
                "resourceRef": {"name": "kimi-k2-gke-us"},
            },
            "reason": "ModelReplica ml-team/kimi-k2-gke-us serves from this cache",
            "replayDeletion": True,
        },
    }
    return observed_object(usage, ready=True)


NOT_CONNECTED = inference_cluster("gke-us", connected=False)
UNRESOLVED = object()  # the requirement was not resolved in this call
EARLIER = {
    "model-cache-usage": earlier_usage("ModelCache", "kimi-k2"),
    "inference-cluster-usage": earlier_usage("InferenceCluster", "gke-us"),
}

NO_USAGE_CASES = [
    # (scenario, replica spec, cluster, cache, workload running, Usages composed before kept)
    ("cache Ready, serving", {}, [GKE], [model_cache("Ready")], True, False),
    ("cache still hydrating", {}, [GKE], [model_cache("Hydrating")], False, False),
    ("cluster not connected", {}, [NOT_CONNECTED], [model_cache("Ready")], True, False),
    ("cluster not found", {}, [], [model_cache("Ready")], True, False),
    ("cache not found", {}, [GKE], [], True, False),
    ("no modelCacheRef", {"modelCacheRef": None}, [GKE], None, False, False),
    # Everything composed before is held as it is while an input cannot be acted on.
    ("cache requirement unresolved: held", {}, [GKE], UNRESOLVED, True, True),
    ("invalid spec: held", {"engine": {"framework": "Custom"}}, [GKE], None, True, True),
]


@pytest.mark.parametrize(
    ("spec", "cluster", "cache", "workload_running", "held"),
    [pytest.param(*case[1:], id=case[0]) for case in NO_USAGE_CASES],
)
def test_the_replica_composes_no_usage_and_retires_earlier_ones(
    spec, cluster, cache, workload_running, held
):
    """Its ModelDeployment composes the Usages `by` it (compose-model-deployment's usage.py):
    one `by` the replica and controlled by it would keep the replica Terminating forever once
    its deployment drops it. Usages an earlier version composed here are composed again with a
    `by` that no longer names the replica (legacy_usages.py; test_replica_legacy_usages.py
    follows them to their end), unless everything is held as it is."""
    xr = replica(nodes=2, **spec)
    if spec.get("modelCacheRef", ...) is None:
        del xr["spec"]["modelCacheRef"]
    running_now = running(replica(nodes=2)) if workload_running else {}
    for observed in ({}, {**running_now, **EARLIER}):
        required: dict[str, Any] = {CLUSTER: cluster}
        if cache is not UNRESOLVED and "modelCacheRef" in xr["spec"]:
            required[CACHE] = cache if cache is not None else [model_cache("Ready")]
        rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
        usages = {k: r for k, r in desired_resources(rsp).items() if r["kind"] == "Usage"}
        assert set(usages) == (set(EARLIER) if observed else set()), usages
        names_the_replica = {
            k: (u["spec"].get("by") or {}).get("resourceRef") == {"name": "kimi-k2-gke-us"}
            for k, u in usages.items()
        }
        assert names_the_replica == dict.fromkeys(usages, held), usages
        if workload_running and observed:  # the running workload is never dropped alongside
            assert WORKLOAD in desired_resources(rsp)
