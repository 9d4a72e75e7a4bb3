"""A provider-kubernetes that echoes the credentials Secret's values is reported, with the fix,
on the `CredentialsRedacted` condition and a Warning event on the transition only; the
values themselves never appear in anything the function returns."""

import base64
import json
from typing import Any

import pytest
from cache_world import model_cache, reconcile, with_status
from compose_model_cache.shard.credentials import CREDENTIALS_REDACTED, EXPOSED, REDACTED
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.observed import LAST_APPLIED, REDACTED_SECRET_DATA
from modelfleet_devtools.requests import condition_status, conditions, desired_resources, events
from modelfleet_devtools.secrets import HF_TOKEN, encodings
from modelfleet_devtools.world import inference_cluster, observed_object

XR = model_cache(huggingFace={"repo": "Qwen/Qwen3-0.6B", "tokenSecretRef": {"name": "hf"}})
CLUSTERS = [inference_cluster("gke-us"), inference_cluster("gke-eu")]
ENCODED = base64.b64encode(HF_TOKEN.encode()).decode()


def _echoed(creds: dict[str, Any], how: str) -> dict[str, Any]:
    """The creds Object as provider-kubernetes reports it after copying the token."""
    obj = observed_object(creds, ready=True)
    manifest = obj["status"]["atProvider"]["manifest"]
    applied = json.dumps(creds["spec"]["forProvider"]["manifest"] | {"data": {"HF_TOKEN": ENCODED}})
    if how == "unsanitized":  # the provider's default: the values as they are
        manifest["data"] = {"HF_TOKEN": ENCODED}
    elif how == "sanitized":  # --sanitize-secrets (with server-side apply: no annotation)
        manifest["data"] = dict(REDACTED_SECRET_DATA)
    elif how == "sanitized, client-side apply":  # the annotation keeps the applied values
        manifest["data"] = dict(REDACTED_SECRET_DATA)
        manifest.setdefault("metadata", {})["annotations"] = {LAST_APPLIED: applied}
    elif how == "annotation without values":
        manifest["data"] = dict(REDACTED_SECRET_DATA)
        manifest.setdefault("metadata", {})["annotations"] = {
            LAST_APPLIED: json.dumps(creds["spec"]["forProvider"]["manifest"])
        }
    return obj


def _world(how: dict[str, str]) -> dict[str, dict[str, Any]]:
    """What is observed once the first reconcile's Objects exist; `how` per cluster."""
    composed = desired_resources(reconcile(XR, CLUSTERS))
    observed = {k: observed_object(v) for k, v in composed.items()}
    for cluster, echo in how.items():
        key = f"{cluster}-creds"
        observed[key] = _echoed(composed[key], echo)
    return observed


def _credentials(rsp: fnv1.RunFunctionResponse) -> tuple[str, str, str] | None:
    c = conditions(rsp).get(CREDENTIALS_REDACTED)
    return (condition_status(c), c.reason, c.message) if c else None


def _about_credentials(rsp: fnv1.RunFunctionResponse) -> list[tuple[str, str]]:
    return [(sev, msg) for sev, msg in events(rsp) if CREDENTIALS_REDACTED in msg]


@pytest.mark.parametrize(
    ("how", "status", "fix_mentions", "clusters"),
    [
        ({"gke-us": "unsanitized"}, "False", ["--sanitize-secrets"], ["gke-us"]),
        (
            {"gke-us": "unsanitized", "gke-eu": "unsanitized"},
            "False",
            ["--sanitize-secrets"],
            ["gke-eu", "gke-us"],
        ),
        (
            {"gke-us": "sanitized", "gke-eu": "sanitized, client-side apply"},
            "False",
            ["--enable-server-side-apply", LAST_APPLIED],
            ["gke-eu"],
        ),
        ({"gke-us": "sanitized", "gke-eu": "sanitized"}, None, [], []),
        ({"gke-us": "annotation without values"}, None, [], []),
        ({}, None, [], []),  # not echoed yet
    ],
    ids=[
        "one cluster unsanitized",
        "both unsanitized",
        "annotation keeps values",
        "sanitized",
        "annotation without values",
        "nothing echoed",
    ],
)
def test_echoed_values_are_reported_with_the_fix(how, status, fix_mentions, clusters):
    rsp = reconcile(XR, CLUSTERS, _world(how))
    reported = _credentials(rsp)
    if status is None:
        assert reported is None and _about_credentials(rsp) == []
        return
    assert reported is not None
    assert reported[:2] == (status, EXPOSED)
    message = reported[2]
    assert f"cluster(s) {', '.join(clusters)}:" in message
    assert all(fix in message for fix in fix_mentions)
    assert "docs/modelcache.md#tokens-and-provider-kubernetes" in message
    assert _about_credentials(rsp) == [("Warning", f"{CREDENTIALS_REDACTED} {EXPOSED}: {message}")]
    # Reported beside the cache's own conditions, which it does not change.
    assert conditions(rsp)["ArtifactReady"].reason == "Hydrating"


@pytest.mark.parametrize(
    "how",
    [{"gke-us": "unsanitized"}, {"gke-us": "sanitized, client-side apply"}],
    ids=["data", "annotation"],
)
def test_the_value_never_appears_in_the_response(how):
    rsp = reconcile(XR, CLUSTERS, _world(how))
    assert _credentials(rsp) is not None
    wire = rsp.SerializeToString()
    assert not [form for form in encodings(HF_TOKEN) if form.encode() in wire]


def test_the_warning_is_emitted_on_the_transition_only_and_the_fix_is_one_too():
    exposed = _world({"gke-us": "unsanitized"})
    first = reconcile(XR, CLUSTERS, exposed)
    assert [sev for sev, _ in _about_credentials(first)] == ["Warning"]

    again = reconcile(with_status(XR, first), CLUSTERS, exposed)
    assert _credentials(again) == _credentials(first)
    assert _about_credentials(again) == []

    fixed = reconcile(with_status(XR, again), CLUSTERS, _world({"gke-us": "sanitized"}))
    assert _credentials(fixed) is not None and _credentials(fixed)[:2] == ("True", REDACTED)
    assert [sev for sev, _ in _about_credentials(fixed)] == ["Normal"]

    quiet = reconcile(with_status(XR, fixed), CLUSTERS, _world({"gke-us": "sanitized"}))
    assert _credentials(quiet) is not None and _credentials(quiet)[:2] == ("True", REDACTED)
    assert _about_credentials(quiet) == []


def test_a_kept_credentials_object_goes_back_without_the_values_the_provider_wrote_back():
    """A cluster that cannot stage keeps its Objects unchanged (never destructive); the
    provider's releases store the copied token in the Object's own manifest
    (provider-kubernetes#223), and keeping the Object must not send it back."""
    observed = _world({"gke-us": "sanitized"})
    observed["gke-us-creds"]["spec"]["forProvider"]["manifest"]["data"] = {"HF_TOKEN": ENCODED}
    blocked = [inference_cluster("gke-us", connected=False), inference_cluster("gke-eu")]
    rsp = reconcile(XR, blocked, observed)
    kept = desired_resources(rsp)["gke-us-creds"]
    assert kept["spec"]["references"] == observed["gke-us-creds"]["spec"]["references"]
    assert "data" not in kept["spec"]["forProvider"]["manifest"]
    wire = rsp.SerializeToString()
    assert not [form for form in encodings(HF_TOKEN) if form.encode() in wire]
