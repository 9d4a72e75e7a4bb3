"""observed: the few facts a function acts on of an observed Object, or of a ModelReplica, are
the same whether read straight from protobuf or from plain data, and a field of another
shape never raises."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.api import MODEL_DEPLOYMENT
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.edge.observed import read_observed, read_replica
from modelfleet_contracts.fields import as_int, list_at, mapping_at, mapping_path
from modelfleet_contracts.labels import NAMESPACE_LABEL, kind_label
from modelfleet_contracts.observed import (
    LAST_APPLIED,
    REDACTED_SECRET_DATA,
    Condition,
    ObservedObject,
    PlacedReplica,
    secret_fields_with_values,
)
from modelfleet_devtools.fuzz import read_both_ways, struct_of

odd = (
    st.none() | st.booleans() | st.text(max_size=6) | st.floats() | st.lists(st.none(), max_size=2)
)
words = st.sampled_from(["Complete", "Failed", "Ready", "True", "False", "not found"]) | odd
condition = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["Complete", "Failed", "Ready"]) | words,
        "status": st.sampled_from(["True", "False", "Unknown"]) | words,
        "reason": words,
        "message": words,
    },
)
conditions = st.lists(condition | odd, max_size=3) | odd
remote = st.dictionaries(
    st.sampled_from(
        ["phase", "conditions", "succeeded", "failed", "active", "readyReplicas", "updatedReplicas"]
    ),
    conditions | st.integers(-3, 5) | st.sampled_from(["Bound", "Pending"]) | odd,
    max_size=5,
)
secret_data = st.dictionaries(
    st.sampled_from(["HF_TOKEN", "redacted"]), st.none() | st.text(max_size=4)
)
applied = st.sampled_from(["{}", '{"data": {"HF_TOKEN": "aGY="}}', '{"data": {}}', "not json"])
manifest_fields = {
    "status": remote,
    "apiVersion": st.sampled_from(["v1", "batch/v1"]) | odd,
    "kind": st.sampled_from(["Secret", "Job"]) | odd,
    "provisioner": st.sampled_from(["", "filestore.csi.storage.gke.io"]) | odd,
    "data": secret_data | odd,
    "stringData": secret_data | odd,
    "metadata": st.fixed_dictionaries(
        {},
        optional={"annotations": st.fixed_dictionaries({}, optional={LAST_APPLIED: applied | odd})},
    )
    | odd,
}
observed = st.fixed_dictionaries(
    {},
    optional={
        "status": st.fixed_dictionaries(
            {},
            optional={
                "conditions": conditions,
                "atProvider": st.fixed_dictionaries(
                    {},
                    optional={"manifest": st.fixed_dictionaries({}, optional=manifest_fields)},
                )
                | odd,
            },
        )
        | odd,
    },
)


def _plain_string(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _plain_count(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if 0 <= value < 2**53 else 0


def observed_facts(obj: dict[str, Any]) -> ObservedObject:
    """The oracle: the same facts as `read_observed`, read from plain data."""
    failure = ""
    for c in list_at(mapping_at(obj, "status"), "conditions"):
        message = _plain_string(c, "message") if isinstance(c, dict) else ""
        if message and c.get("status") == "False":
            failure = message
            break
    own = {
        "ready": condition_true(mapping_at(obj, "status"), "Ready"),
        "failure_message": failure,
    }
    manifest = mapping_path(obj, "status", "atProvider", "manifest")
    echoed = {
        "remote_provisioner": _plain_string(manifest, "provisioner"),
        "exposed_secret_fields": secret_fields_with_values(manifest),
    }
    remote = mapping_at(manifest, "status")
    if not remote:
        return ObservedObject(**own, **echoed)
    return ObservedObject(
        **own,
        **echoed,
        remote_seen=True,
        remote_phase=_plain_string(remote, "phase"),
        remote_conditions=tuple(
            Condition(
                _plain_string(c, "type"),
                _plain_string(c, "status"),
                _plain_string(c, "reason"),
                _plain_string(c, "message"),
            )
            for c in list_at(remote, "conditions")
            if isinstance(c, dict)
        ),
        remote_succeeded=_plain_count(remote, "succeeded"),
        remote_failed=_plain_count(remote, "failed"),
        remote_ready_replicas=_plain_count(remote, "readyReplicas"),
        remote_updated_replicas=_plain_count(remote, "updatedReplicas"),
    )


@given(observed)
def test_protobuf_and_plain_readers_agree_on_any_shape(data):
    fast, oracle = read_both_ways(read_observed, observed_facts, data)
    assert fast == oracle


def test_a_completed_job_and_a_missing_secret_read_as_such():
    job = {
        "status": {
            "conditions": [{"type": "Synced", "status": "True"}],
            "atProvider": {
                "manifest": {
                    "kind": "Job",
                    "status": {
                        "succeeded": 1,
                        "failed": 2,
                        "conditions": [{"type": "Complete", "status": "True"}],
                    },
                }
            },
        }
    }
    facts = read_observed(struct_of(job))
    assert facts.remote_seen and facts.remote_succeeded == 1 and facts.remote_failed == 2
    assert facts.remote_condition("Complete") == Condition("Complete", "True")
    assert facts.remote_condition("Failed") is None

    secret = {
        "status": {
            "conditions": [
                {"type": "Synced", "status": "False", "message": 'secrets "hf" not found'},
            ]
        }
    }
    assert read_observed(struct_of(secret)) == ObservedObject(
        failure_message='secrets "hf" not found'
    )


def test_a_workload_a_storage_class_and_a_release_read_as_such():
    workload = {
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "atProvider": {"manifest": {"status": {"readyReplicas": 2, "updatedReplicas": 3}}},
        },
    }
    facts = read_observed(struct_of(workload))
    assert facts.ready and facts.remote_seen
    assert (facts.remote_ready_replicas, facts.remote_updated_replicas) == (2, 3)

    # A StorageClass has no status: the provisioner says the provider read it.
    storage_class = {
        "status": {"atProvider": {"manifest": {"provisioner": "filestore.csi.storage.gke.io"}}}
    }
    facts = read_observed(struct_of(storage_class))
    assert facts.remote_provisioner == "filestore.csi.storage.gke.io" and not facts.remote_seen

    unknown = {"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}
    assert not read_observed(struct_of(unknown)).ready
    release = {
        "status": {
            "atProvider": {"state": "failed"},
            "conditions": [
                {"type": "Synced", "status": "True"},
                {"type": "Ready", "status": "False", "message": "chart not found"},
            ],
        }
    }
    assert read_observed(struct_of(release)) == ObservedObject(failure_message="chart not found")


SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}}
APPLIED_WITH_TOKEN = '{"kind": "Secret", "data": {"HF_TOKEN": "aGZfeHl6"}}'


@pytest.mark.parametrize(
    ("manifest", "fields"),
    [
        (SECRET | {"data": {"HF_TOKEN": "aGZfeHl6"}}, ("data",)),
        (SECRET | {"data": dict(REDACTED_SECRET_DATA)}, ()),  # --sanitize-secrets
        (SECRET | {"data": {"redacted": "aGZfeHl6"}}, ("data",)),  # a key named so, with a value
        (SECRET | {"data": {}}, ()),
        (SECRET | {"stringData": {"HF_TOKEN": "hf_xyz"}}, ("stringData",)),
        (
            SECRET
            | {"data": dict(REDACTED_SECRET_DATA)}
            | {"metadata": {"annotations": {LAST_APPLIED: APPLIED_WITH_TOKEN}}},
            (f"metadata.annotations[{LAST_APPLIED}]",),
        ),
        (SECRET | {"metadata": {"annotations": {LAST_APPLIED: '{"kind": "Secret"}'}}}, ()),
        (SECRET | {"metadata": {"annotations": {LAST_APPLIED: "{not json"}}}, ()),
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}, ()),
        ({"apiVersion": "example.io/v1", "kind": "Secret", "data": {"a": "b"}}, ()),
    ],
    ids=[
        "values",
        "redaction marker",
        "marker key with a value",
        "empty",
        "stringData",
        "last-applied keeps values",
        "last-applied without values",
        "last-applied unreadable",
        "not a Secret",
        "another group's Secret",
    ],
)
def test_where_an_echoed_secret_still_holds_values(manifest, fields):
    assert secret_fields_with_values(manifest) == fields
    echoed = {"status": {"atProvider": {"manifest": manifest}}}
    assert read_observed(struct_of(echoed)).exposed_secret_fields == fields


# ModelReplicas, as compose-model-deployment reads the ones it composed and the fleet's.
OWNER = kind_label(MODEL_DEPLOYMENT)
replica_text = st.sampled_from(["", "gke-us", "h100", "Ready", "kimi-k2"]) | odd
count = st.integers(-3, 10**4) | st.floats(allow_nan=True, allow_infinity=True) | odd
replica_spec = st.dictionaries(
    st.sampled_from(["clusterName", "nodePool", "replicas", "nodes"]),
    replica_text | count,
    max_size=4,
)
replica_status = st.dictionaries(
    st.sampled_from(["phase", "message", "readyReplicas"]), replica_text | count, max_size=3
)
replica_labels = st.dictionaries(
    st.sampled_from([OWNER, NAMESPACE_LABEL, "other"]), replica_text, max_size=3
)
replica = st.dictionaries(
    st.sampled_from(["metadata", "spec", "status"]),
    st.dictionaries(st.just("labels"), replica_labels | odd) | replica_spec | replica_status | odd,
    max_size=3,
)


def _count(value: Any) -> int:
    return max(0, as_int(value))


def placed_replica(obj: dict[str, Any]) -> PlacedReplica:
    """The oracle: the plain-data reader compose-model-deployment used before this one."""
    spec = mapping_at(obj, "spec")
    status = mapping_at(obj, "status")
    labels = mapping_at(mapping_at(obj, "metadata"), "labels")
    return PlacedReplica(
        cluster=str(spec.get("clusterName") or ""),
        pool=str(spec.get("nodePool") or ""),
        replicas=_count(spec.get("replicas")),
        nodes=max(1, _count(spec.get("nodes"))),
        owner=str(labels.get(OWNER) or ""),
        owner_namespace=str(labels.get(NAMESPACE_LABEL) or ""),
        phase=str(status.get("phase") or ""),
        message=str(status.get("message") or ""),
        ready_replicas=_count(status.get("readyReplicas")),
    )


@given(replica)
def test_a_replica_reads_the_same_from_protobuf_and_plain_data_on_any_shape(data):
    fast, oracle = read_both_ways(read_replica, placed_replica, data)
    assert fast == oracle


def test_a_placed_replica_reads_its_placement_owner_and_progress():
    replica = {
        "metadata": {"labels": {OWNER: "kimi-k2", NAMESPACE_LABEL: "ml-team"}},
        "spec": {"clusterName": "gke-us", "nodePool": "h100", "replicas": 2, "nodes": 2},
        "status": {"phase": "Degraded", "message": "1/2 gangs ready", "readyReplicas": 1},
    }
    assert read_replica(struct_of(replica)) == PlacedReplica(
        cluster="gke-us",
        pool="h100",
        replicas=2,
        nodes=2,
        owner="kimi-k2",
        owner_namespace="ml-team",
        phase="Degraded",
        message="1/2 gangs ready",
        ready_replicas=1,
    )
    assert read_replica(struct_of(replica)).owned_by("kimi-k2", "ml-team")
    # Written by hand, without a size: one node per group, nothing placed yet.
    bare = read_replica(struct_of({"spec": {"clusterName": "gke-us"}}))
    assert (bare.replicas, bare.nodes, bare.owner) == (0, 1, "")
