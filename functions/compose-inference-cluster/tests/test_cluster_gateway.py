"""A cluster's Gateway (spec.gatewayRef): observed, never created; its address reported in
status.gateway only once Programmed; a missing one said so on GatewayReady, nothing lost."""

import pytest
from compose_inference_cluster.gateway import GATEWAY
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.clusters import read_cluster
from modelfleet_devtools.requests import conditions, desired_resources, desired_status, events
from modelfleet_devtools.validation import assert_valid, require_shared_schemas, validate_xr
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import cluster, run

REF = {"name": "inference", "namespace": "gateway-system", "sectionName": "http"}
PROGRAMMED = {
    "addresses": [{"type": "IPAddress", "value": "10.0.0.7"}],
    "conditions": [
        {"type": "Accepted", "status": "True"},
        {"type": "Programmed", "status": "True"},
    ],
}
PENDING = {"conditions": [{"type": "Programmed", "status": "False", "reason": "Pending"}]}
NO_ADDRESS = {"conditions": [{"type": "Programmed", "status": "True"}]}
ABSENT = "cannot observe external resource: external resource does not exist"


def observed_gateway(xr, remote_status=None, error=None):
    composed = desired_resources(run(xr))[GATEWAY]
    return {GATEWAY: observed_object(composed, remote_status=remote_status, synced_error=error)}


# (case, observed Gateway (remote status, provider error), True?, reason, reported address)
CASES = [
    ("not observed yet", None, False, "Observing", None),
    ("not found on the cluster", (None, ABSENT), False, "GatewayNotFound", None),
    ("not Programmed yet", (PENDING, None), False, "NotProgrammed", None),
    ("Programmed without an address", (NO_ADDRESS, None), False, "NoAddress", None),
    ("Programmed", (PROGRAMMED, None), True, "Programmed", "10.0.0.7"),
]


@pytest.mark.parametrize(
    ("seen", "ok", "reason", "address"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_gateway_is_observed_and_reported_only_as_seen(seen, ok, reason, address):
    xr = cluster({"storageClassName": "filestore-rwx"}, gatewayRef=REF)
    observed = observed_gateway(xr, *seen) if seen else None
    rsp = run(xr, observed)
    obj = desired_resources(rsp)[GATEWAY]
    require_shared_schemas()
    assert_valid(obj)
    assert obj["spec"]["managementPolicies"] == ["Observe"]  # never created nor changed
    manifest = obj["spec"]["forProvider"]["manifest"]
    assert (manifest["kind"], manifest["metadata"]) == (
        "Gateway",
        {"name": "inference", "namespace": "gateway-system"},
    )
    c = conditions(rsp)["GatewayReady"]
    assert (c.status == fnv1.STATUS_CONDITION_TRUE, c.reason) == (ok, reason)
    row = desired_status(rsp)["gateway"]
    assert (row["name"], row["namespace"], row["sectionName"]) == (
        "inference",
        "gateway-system",
        "http",
    )
    assert row.get("address") == address and row["ready"] is ok
    # What a replica reads of it: an address only while Programmed.
    view = read_cluster({"metadata": {"name": "gke-us"}, "status": desired_status(rsp)})
    assert view.gateway is not None and view.gateway.address == address
    if not ok:
        assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_a_missing_gateway_names_itself_and_keeps_everything_else():
    xr = cluster({"storageClassName": "filestore-rwx"}, gatewayRef={"name": "nope"})
    rsp = run(xr, observed_gateway(xr, None, ABSENT))
    message = conditions(rsp)["GatewayReady"].message
    assert "Gateway modelfleet/nope not found" in message and "spec.gatewayRef" in message
    assert any(sev == "Warning" and "nope" in m for sev, m in events(rsp))
    composed = set(desired_resources(rsp))
    assert composed >= set(desired_resources(run(cluster({"storageClassName": "filestore-rwx"}))))


def test_without_a_gateway_ref_nothing_is_observed_or_reported():
    rsp = run(cluster({"storageClassName": "filestore-rwx"}))
    assert GATEWAY not in desired_resources(rsp)
    assert "gateway" not in desired_status(rsp)
    assert "GatewayReady" not in conditions(rsp)


# (case, spec.inferenceExtension, the endpoint picker a replica reads: (port, failure mode))
EXTENSION_CASES = [
    ("not declared", None, None),
    ("declared off", {"enabled": False}, None),
    ("enabled with the defaults", {"enabled": True}, (9002, "FailClose")),
    (
        "enabled, its own port and FailOpen",
        {"enabled": True, "endpointPickerPort": 9102, "failureMode": "FailOpen"},
        (9102, "FailOpen"),
    ),
]


@pytest.mark.parametrize(
    ("extension", "picker"),
    [c[1:] for c in EXTENSION_CASES],
    ids=[c[0] for c in EXTENSION_CASES],
)
def test_the_inference_extension_reaches_replicas_on_the_gateway_row(extension, picker):
    spec = {"gatewayRef": REF} | ({"inferenceExtension": extension} if extension else {})
    xr = cluster({"storageClassName": "filestore-rwx"}, **spec)
    for seen in (None, (PROGRAMMED, None)):  # whatever the Gateway's state
        rsp = run(xr, observed_gateway(xr, *seen) if seen else None)
        view = read_cluster({"metadata": {"name": "gke-us"}, "status": desired_status(rsp)})
        assert view.gateway is not None
        got = view.gateway.inference_pool
        assert (got.port, got.failure_mode) == picker if picker else got is None


ENABLED = {"gatewayRef": REF, "inferenceExtension": {"enabled": True}}
# (case, spec beside storage, what the API server says: None when it admits it)
ADMISSION_CASES = [
    (
        "extension with a Gateway",
        {"gatewayRef": REF, "inferenceExtension": {"enabled": True}},
        None,
    ),
    ("extension declared off, no Gateway", {"inferenceExtension": {"enabled": False}}, None),
    ("extension without a Gateway", {"inferenceExtension": {"enabled": True}}, "gatewayRef"),
    (
        "unknown failure mode",
        {"gatewayRef": REF, "inferenceExtension": {"enabled": True, "failureMode": "Sometimes"}},
        "failureMode",
    ),
]


@pytest.mark.parametrize(
    ("spec", "refused"), [c[1:] for c in ADMISSION_CASES], ids=[c[0] for c in ADMISSION_CASES]
)
def test_the_inference_extension_is_admitted_only_with_a_gateway(spec, refused):
    errors = validate_xr(cluster({"storageClassName": "filestore-rwx"}, **spec))
    if refused is None:
        assert errors == []
    else:
        assert any(refused in e for e in errors), errors
