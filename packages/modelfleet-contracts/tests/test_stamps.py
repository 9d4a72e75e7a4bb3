"""stamps: a resource written as a copy of its shape with its own values set is exactly the
resource written from plain data; markers that could not be filled faithfully are refused."""

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.edge import structs
from modelfleet_contracts.stamps import Shape, marker

SHAPE = Shape(
    {
        "kind": "Object",
        "metadata": {"labels": {"team": "ml", "cluster": marker("cluster")}},
        "spec": {
            "providerConfigRef": {"name": marker("providerConfig")},
            "containers": [{"name": "a"}, {"name": "b", "args": ["--x", marker("cluster")]}],
        },
    }
)
values = (
    st.none()
    | st.booleans()
    | st.text(max_size=8)
    | st.integers(-5, 5)
    | st.lists(st.text(max_size=3), max_size=2)
)


@given(values, values)
def test_a_stamp_is_written_exactly_as_its_plain_data(cluster, provider_config):
    stamp = SHAPE.stamp({"cluster": cluster, "providerConfig": provider_config})
    data = stamp.to_dict()
    assert data["metadata"]["labels"]["cluster"] == cluster
    assert data["spec"]["containers"][1]["args"] == ["--x", cluster]
    expected, written = struct_pb2.Struct(), struct_pb2.Struct()
    structs.update(expected, data)
    converted: dict = {}
    structs.write_stamp(written, SHAPE.stamp({"cluster": "other", "providerConfig": 1}), converted)
    structs.write_stamp(written, stamp, converted)  # the second copy of the same shape
    assert written == expected
    assert SHAPE.data["metadata"]["labels"]["cluster"] == marker("cluster"), "shape untouched"


@pytest.mark.parametrize(
    "data",
    [{"name": f"{marker('cluster')}-claim"}, {"labels": {marker("cluster"): "x"}}],
    ids=["marker inside a longer string", "marker as a key"],
)
def test_a_value_derived_from_a_marker_is_refused(data):
    with pytest.raises(ValueError):
        Shape(data)


def test_a_stamp_needs_every_value():
    with pytest.raises(ValueError):
        SHAPE.stamp({"cluster": "gke-us"})
