"""The suite-wide audit catches what it is there to catch: planted leaks and invalid manifests.

Each scenario uses its own `Audit`, so the planted problems here never fail the real run.
"""

import json
import logging
import sys
from pathlib import Path

import pytest
import yaml
from crossplane.function import resource
from modelfleet_contracts.edge.requirements import cluster_requirement
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.observed import LAST_APPLIED
from modelfleet_devtools import audit
from modelfleet_devtools.requests import conditions, desired_resources, run_function_request
from modelfleet_devtools.secrets import HF_TOKEN, TEST_TOKENS, encodings, secret
from modelfleet_devtools.validation import validate_manifest
from modelfleet_devtools.world import inference_cluster, observed_object

sys.path.insert(0, str(Path(__file__).parents[1] / "functions/compose-model-cache/tests"))

from cache_world import RUNNER as CACHE_RUNNER
from cache_world import model_cache
from compose_model_cache.fn import CLUSTERS

VALID_CACHE = model_cache(huggingFace={"repo": "Qwen/Qwen3-0.6B", "tokenSecretRef": {"name": "hf"}})
USER_SECRET = secret("hf", "ml-team", {"HF_TOKEN": HF_TOKEN})


def careless_core(req, rsp):
    """A function that copies whatever it observes into its desired state."""
    for name, observed in req.observed.resources.items():
        rsp.desired.resources[name].resource.update(resource.struct_to_dict(observed.resource))


def logging_core(req, rsp):
    logging.getLogger("modelfleet.careless").debug("request was %s", req)


@pytest.mark.parametrize("form", encodings(HF_TOKEN), ids=["as is", "base64"])
def test_a_token_in_cli_output_is_a_leak(form):
    found = audit.Audit()
    assert found.record_text("modelfleet render", f"data:\n  HF_TOKEN: {form}\n") == ["HF_TOKEN"]
    assert not found.record_text("modelfleet render", "data: {}\n")
    assert found.failed and len(found.leaks) == 1
    assert "modelfleet render" in str(found.leaks[0])


def test_a_function_copying_the_observed_secret_into_its_response_is_caught():
    found = audit.Audit()
    req = run_function_request(VALID_CACHE, observed={"user-secret": USER_SECRET})
    with audit.paused():
        rsp = SafeRunner(careless_core, "careless").run(req)
    found.record_call("careless", req, rsp)
    assert found.planted_requests == 1
    assert [leak.detail for leak in found.leaks] == ["HF_TOKEN value found"]


def test_a_function_logging_its_request_is_caught():
    found = audit.Audit()
    tap = audit._LogTap(found)
    careless = logging.getLogger("modelfleet.careless")
    # Kept off the root logger: pytest would capture the planted token into the report.
    careless.addHandler(tap)
    careless.propagate = False
    level = careless.level
    careless.setLevel(logging.DEBUG)
    try:
        req = run_function_request(VALID_CACHE, observed={"user-secret": USER_SECRET})
        with audit.paused():
            SafeRunner(logging_core, "chatty").run(req)
    finally:
        careless.removeHandler(tap)
        careless.propagate = True
        careless.setLevel(level)
    assert found.log_records >= 1
    assert any(leak.source == "log" for leak in found.leaks)


@pytest.mark.parametrize("connected", [True, False], ids=["composes", "keeps what it composed"])
def test_compose_model_cache_never_copies_the_token_it_is_tempted_with(connected):
    """The token sits in the control-plane Secret and everywhere provider-kubernetes run
    without --sanitize-secrets puts it: the echoed remote Secret's data and last-applied
    annotation, and (its releases) the Object's own manifest. The function composes the
    reference only, warns about the exposure, and keeps a blocked cluster's Object without
    the values."""
    clusters = [inference_cluster("gke-us")]
    # The cache's shard composes the cluster's Objects: it is what the token tempts.
    cache = CACHE_RUNNER.run(run_function_request(VALID_CACHE, required={CLUSTERS: clusters}))
    shard = desired_resources(cache)["shard-0"]
    shard["metadata"] |= {"name": "qwen-7xk2p", "namespace": "ml-team"}
    named = {cluster_requirement("gke-us"): clusters}
    first = CACHE_RUNNER.run(run_function_request(shard, required=named))
    composed = desired_resources(first)
    creds = next(k for k in composed if k.endswith("creds"))
    echoed = observed_object(composed[creds], ready=True)
    remote = echoed["status"]["atProvider"]["manifest"]
    written = composed[creds]["spec"]["forProvider"]["manifest"] | {"data": USER_SECRET["data"]}
    remote["data"] = USER_SECRET["data"]
    remote["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(written)}
    echoed["spec"]["forProvider"]["manifest"] = written
    observed = {**composed, creds: echoed}
    clusters = [inference_cluster("gke-us", connected=connected)]
    req = run_function_request(
        shard,
        observed=observed,
        required={cluster_requirement("gke-us"): clusters, "user-secret": [USER_SECRET]},
    )
    found = audit.Audit()
    rsp = CACHE_RUNNER.run(req)
    found.record_call("compose-model-cache", req, rsp)
    assert found.planted_requests == 1
    assert found.leaks == []
    assert found.invalid == []
    assert found.manifests_validated == len(composed)
    assert conditions(rsp)["CredentialsRedacted"].reason == "ExposedByProvider"
    assert creds in desired_resources(rsp)


def test_an_invalid_manifest_fails_the_audit_only_for_an_admissible_xr():
    def bad_job(req, rsp):
        rsp.desired.resources["job"].resource.update(
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": {}}
        )

    runner = SafeRunner(bad_job, "bad")
    found = audit.Audit()
    req = run_function_request(VALID_CACHE)
    with audit.paused():
        rsp = runner.run(req)
    found.record_call("bad", req, rsp)
    assert found.manifests_validated == 1
    assert found.invalid and "template" in found.invalid[0].detail

    rejected_by_the_xrd = audit.Audit()
    xr = model_cache(sizeGiB="huge")
    req = run_function_request(xr)
    with audit.paused():
        rsp = runner.run(req)
    rejected_by_the_xrd.record_call("bad", req, rsp)
    assert rejected_by_the_xrd.responses_skipped_invalid_xr == 1
    assert not rejected_by_the_xrd.failed


def echoing(remote):
    """An observed Object echoing `remote` (`status.atProvider.manifest`)."""
    desired = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "spec": {"forProvider": {"manifest": remote}},
    }
    return observed_object(desired, remote_status={})


JOB_ECHO = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "hydrate"},
    "spec": {
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
        }
    },
}


@pytest.mark.parametrize(
    ("echo", "held_to_the_schemas"),
    [
        pytest.param(JOB_ECHO, True, id="a Job as an API server returns it"),
        pytest.param(
            JOB_ECHO | {"spec": {"template": {"spec": {"containers": [{"image": ["i"]}]}}}},
            False,
            id="a Job no API server returns",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"r": None}},
            True,
            id="a Secret whose data provider-kubernetes redacted",
        ),
    ],
)
def test_an_observed_object_echoing_what_no_api_server_returns_is_no_admissible_input(
    echo, held_to_the_schemas
):
    """A function may copy what the remote API server returned (compose-model-cache keeps an
    existing Job's template); an echo no API server returns is no input it is held to."""

    def bad_job(req, rsp):
        rsp.desired.resources["job"].resource.update(
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": {}}
        )

    found = audit.Audit()
    req = run_function_request(VALID_CACHE, observed={"job": echoing(echo)})
    with audit.paused():
        rsp = SafeRunner(bad_job, "bad").run(req)
    found.record_call("bad", req, rsp)
    assert bool(found.invalid) == held_to_the_schemas
    assert found.responses_skipped_invalid_xr == (0 if held_to_the_schemas else 1)


def test_every_test_token_is_distinct_and_long_enough_to_never_match_by_chance():
    values = list(TEST_TOKENS.values())
    assert len(set(values)) == len(values)
    assert all(len(v) >= 20 for v in values)


def test_every_token_value_in_an_example_secret_is_audited():
    """The examples' Secrets hold placeholders; the audit must know each of them, or an
    example rendered in the tests could leak one unnoticed."""
    examples = Path(__file__).parents[1] / "examples"
    values = []
    for path in sorted(examples.glob("*/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Secret":
                values += [str(v) for v in (doc.get("stringData") or {}).values()]
    assert values, "the gated-model and s3 examples carry a Secret"
    assert set(values) <= set(TEST_TOKENS.values())


@pytest.mark.parametrize("metadata", [None, [], "x"], ids=["null", "list", "string"])
def test_a_manifest_whose_metadata_is_not_a_mapping_is_reported_not_a_crash(metadata):
    """Found by the audit: `validate_manifest` raised on `metadata: null` (a fuzzed
    required resource) instead of reporting it."""
    manifest = {"apiVersion": "modelfleet.io/v1alpha1", "kind": "ModelCache", "metadata": metadata}
    errors = validate_manifest(manifest)
    assert errors and all(e.startswith("ModelCache <unnamed>") for e in errors)
