"""What a function tells Crossplane of each composed resource's readiness, from what is observed
(`readiness.composed_ready`, read from protobuf by `edge.observed.read_seen`)."""

import pytest
from google.protobuf import struct_pb2
from modelfleet_contracts.edge.observed import read_seen
from modelfleet_contracts.readiness import composed_ready


def ready_condition(status: str) -> dict:
    return {"type": "Ready", "status": status, "reason": "Available" if status == "True" else "X"}


@pytest.mark.parametrize(
    ("observed", "ready"),
    [
        pytest.param(None, False, id="not-observed-yet-is-not-ready"),
        pytest.param(
            {"kind": "Object", "status": {"conditions": [ready_condition("True")]}},
            True,
            id="object-whose-remote-object-is-ready",
        ),
        pytest.param(
            {"kind": "Object", "status": {"conditions": [ready_condition("False")]}},
            False,
            id="object-whose-remote-object-is-not-ready",
        ),
        pytest.param(
            {
                "kind": "Object",
                "status": {
                    "conditions": [
                        {"type": "Synced", "status": "False", "message": "not found"},
                    ]
                },
            },
            False,
            id="observe-only-object-of-something-absent-has-no-ready-condition",
        ),
        pytest.param({"kind": "Object"}, False, id="object-without-any-status-yet"),
        pytest.param(
            {"kind": "Release", "status": {"conditions": [ready_condition("True")]}},
            True,
            id="helm-release-deployed",
        ),
        pytest.param(
            {"kind": "Usage", "status": {"conditions": [ready_condition("True")]}},
            True,
            id="usage-in-force",
        ),
        pytest.param(
            {"kind": "ModelReplica", "status": {"conditions": [ready_condition("False")]}},
            False,
            id="model-replica-not-ready",
        ),
        pytest.param(
            {"kind": "ClusterProviderConfig", "status": {"users": 3}},
            True,
            id="provider-config-has-no-readiness-of-its-own-existing-is-enough",
        ),
        pytest.param({"kind": "ClusterProviderConfig"}, True, id="provider-config-without-status"),
        pytest.param(
            {"kind": "Object", "status": {"conditions": "garbled"}},
            False,
            id="conditions-of-another-shape-read-as-not-ready",
        ),
    ],
)
def test_composed_readiness_from_what_is_observed(observed, ready):
    seen = None
    if observed is not None:
        s = struct_pb2.Struct()
        s.update(observed)
        seen = read_seen(s)
    assert composed_ready(seen) is ready
