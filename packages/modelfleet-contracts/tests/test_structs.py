"""structs: the fast Struct conversions give exactly what the SDK's converters give."""

from crossplane.function import resource
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.edge import structs
from modelfleet_devtools.fuzz import struct_of

scalars = st.none() | st.booleans() | st.text(max_size=8) | st.integers(-(2**40), 2**40)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=6), json_values, max_size=5)


@given(objects)
def test_to_dict_is_the_sdk_conversion(data):
    s = struct_of(data)
    assert structs.to_dict(s) == resource.struct_to_dict(s)


@given(objects, objects)
def test_update_is_struct_update_including_replacing_nested_values(first, second):
    expected, actual = struct_pb2.Struct(), struct_of(first)
    expected.update(first)
    expected.update(second)
    structs.update(actual, second)
    assert actual == expected


def test_set_at_writes_one_leaf_and_makes_the_mappings_on_the_way():
    replica = struct_of({"kind": "ModelReplica", "spec": {"replicas": 2, "nodes": 2}})
    structs.set_at(replica, ("spec", "replicas"), 1)
    assert structs.to_dict(replica) == {"kind": "ModelReplica", "spec": {"replicas": 1, "nodes": 2}}
    bare = struct_pb2.Struct()
    structs.set_at(bare, ("spec", "replicas"), 3)
    assert structs.to_dict(bare) == {"spec": {"replicas": 3}}
