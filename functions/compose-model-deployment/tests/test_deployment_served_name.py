"""The model name clients send: resolved by the scheduler, carried to every replica, shown
in status.servedModelName (the MODEL column) and explained on ServedModelNameResolved."""

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from deployment_world import cache_on, deployment, desired_replicas, schedule
from modelfleet_devtools.requests import conditions, desired_status, events
from modelfleet_devtools.validation import assert_valid
from modelfleet_devtools.world import inference_cluster

GKE = inference_cluster("gke-us")
HF = {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-0.6B", "revision": "main"}}
OCI = {"source": "OCI", "oci": {"image": "ghcr.io/acme/qwen3-0.6b:1.0"}}
S3 = {"source": "S3", "s3": {"uri": "s3://models/team/qwen3-0.6b/"}}
VLLM = {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0"}
IN_ARGS = {**VLLM, "args": ["--max-model-len=8192", "--served-model-name=qwen"]}
CUSTOM = {"framework": "Custom", "command": ["serve"], "args": ["--served-model-name=x"]}

# (case, deployment spec, the cache's spec (None: no cache), name sent, True?, reason)
CASES = [
    ("hf repo by default", {}, HF, "Qwen/Qwen3-0.6B", True, "ModelCacheSource"),
    ("oci repository by default", {}, OCI, "acme/qwen3-0.6b", True, "ModelCacheSource"),
    ("s3 last segment by default", {}, S3, "qwen3-0.6b", True, "ModelCacheSource"),
    ("spec wins over the source", {"servedModelName": "qwen3"}, HF, "qwen3", True, "Spec"),
    ("engine args win over the source", {"engine": IN_ARGS}, HF, "qwen", True, "EngineArgs"),
    (
        "engine args win over a different spec name, reported",
        {"engine": IN_ARGS, "servedModelName": "qwen3"},
        HF,
        "qwen",
        False,
        "ConflictingEngineArgs",
    ),
    (
        "Custom: its flags are not read",
        {"engine": CUSTOM, "servedModelName": "qwen3"},
        HF,
        "qwen3",
        True,
        "Spec",
    ),
    ("no cache, no name: the engine's own", {}, None, None, True, "EngineDefault"),
    ("a cache without a spec read", {}, {}, None, True, "EngineDefault"),
]


@pytest.mark.parametrize(
    ("spec", "cache_spec", "name", "ok", "why"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_the_name_clients_send(spec, cache_spec, name, ok, why):
    body = {"engine": VLLM, **spec}
    if cache_spec is not None:
        body["modelCacheRef"] = {"name": "kimi-k2"}
    xr = deployment(replicas=1, **body)
    rsp = schedule(xr, [GKE], cache=cache_on("gke-us", spec=cache_spec or None))
    [replica] = desired_replicas(rsp).values()
    assert_valid(replica)
    assert replica["spec"].get("servedModelName") == name
    assert desired_status(rsp).get("servedModelName") == name
    resolved = conditions(rsp)["ServedModelNameResolved"]
    assert (resolved.status == fnv1.STATUS_CONDITION_TRUE, resolved.reason) == (ok, why)
    if name:
        assert repr(name) in resolved.message


def test_a_conflict_says_which_name_wins_and_what_to_do_once():
    xr = deployment(
        replicas=1,
        modelCacheRef={"name": "kimi-k2"},
        engine=IN_ARGS,
        servedModelName="qwen3",
    )
    rsp = schedule(xr, [GKE], cache=cache_on("gke-us", spec=HF))
    message = conditions(rsp)["ServedModelNameResolved"].message
    assert "--served-model-name=qwen" in message and "qwen3" in message
    assert "remove one" in message
    said = [(severity, m) for severity, m in events(rsp) if "--served-model-name" in m]
    assert [severity for severity, _ in said] == ["Warning"]
    # Reported on the transition only: the next run, with the condition as written, is quiet.
    xr["status"] = {
        "conditions": [
            {
                "type": "ServedModelNameResolved",
                "status": "False",
                "reason": "ConflictingEngineArgs",
                "message": message,
            }
        ]
    }
    again = schedule(xr, [GKE], cache=cache_on("gke-us", spec=HF))
    assert not [m for _, m in events(again) if "--served-model-name" in m]


def test_a_name_from_engine_args_that_does_not_fit_the_field_is_reported_not_carried():
    engine = {**VLLM, "args": ["--served-model-name", "my model"]}
    xr = deployment(replicas=1, engine=engine)
    rsp = schedule(xr, [GKE])
    [replica] = desired_replicas(rsp).values()
    assert_valid(replica)
    assert "servedModelName" not in replica["spec"]
    assert desired_status(rsp)["servedModelName"] == "my model"


def test_each_clusters_row_lists_the_address_its_replica_reports():
    xr = deployment(replicas=1)
    first = schedule(xr, [GKE])
    [(key, replica)] = desired_replicas(first).items()
    replica["metadata"]["namespace"] = "ml-team"
    address = "http://model-ml-team-kimi-k2-gke-us-1a2b3.modelfleet.svc.cluster.local:8000/v1"
    through = "http://10.0.0.7/ml-team/kimi-k2/v1"
    for reported in ({}, {"address": address}, {"address": address, "gatewayAddress": through}):
        replica["status"] = {"phase": "Ready", "readyReplicas": 1, **reported}
        rsp = schedule(xr, [GKE], observed={key: replica})
        [row] = desired_status(rsp)["clusters"]
        assert row.get("address") == reported.get("address")
        assert row.get("gatewayAddress") == reported.get("gatewayAddress")
