"""A ModelReplica reads as the same PlacedReplica straight from protobuf as from plain data,
whatever shape its fields have, and reading never adds a key."""

from typing import Any

from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.api import MODEL_DEPLOYMENT
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.observed import read_replica
from modelfleet_contracts.fields import as_int, mapping_at
from modelfleet_contracts.labels import NAMESPACE_LABEL, kind_label
from modelfleet_contracts.observed import PlacedReplica

OWNER = kind_label(MODEL_DEPLOYMENT)
odd = (
    st.none() | st.booleans() | st.text(max_size=6) | st.floats() | st.lists(st.none(), max_size=2)
)
text = st.sampled_from(["", "gke-us", "h100", "Ready", "kimi-k2"]) | odd
count = st.integers(-3, 10**4) | st.floats(allow_nan=True, allow_infinity=True) | odd
spec = st.dictionaries(
    st.sampled_from(["clusterName", "nodePool", "replicas", "nodes"]), text | count, max_size=4
)
status = st.dictionaries(
    st.sampled_from(["phase", "message", "readyReplicas"]), text | count, max_size=3
)
labels = st.dictionaries(st.sampled_from([OWNER, NAMESPACE_LABEL, "other"]), text, max_size=3)
replica = st.dictionaries(
    st.sampled_from(["metadata", "spec", "status"]),
    st.dictionaries(st.just("labels"), labels | odd) | spec | status | odd,
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


def struct_of(data: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    structs.update(s, data)
    return s


@given(replica)
def test_protobuf_and_plain_readers_agree_on_any_shape(data):
    s = struct_of(data)
    before = s.SerializeToString(deterministic=True)
    # Plain data as Crossplane sends it: numbers are floats.
    assert read_replica(s) == placed_replica(structs.to_dict(s))
    assert s.SerializeToString(deterministic=True) == before, "reading must not add keys"


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
