"""An echoed Job's pod template reaches the response as the edge read it (protobuf, never
converted), made composable by the same rule as on plain data: the edge's and the core's
readings of any template agree."""

from typing import Any

import pytest
from compose_model_cache.fn import composable_template
from compose_model_cache.shard.existing import _template_as_composable
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.edge import structs

POD = {"spec": {"containers": [{"name": "hydrate", "image": "i"}], "restartPolicy": "Never"}}
GENERATED = {"controller-uid": "u", "batch.kubernetes.io/job-name": "j", "job-name": "j"}


def as_value(template: Any) -> struct_pb2.Value:
    value = struct_pb2.Value()
    holder = struct_pb2.Struct()
    structs.update(holder, {"t": template})
    value.CopyFrom(holder.fields["t"])
    return value


@pytest.mark.parametrize(
    "template",
    [
        pytest.param(POD, id="no metadata"),
        pytest.param(
            {**POD, "metadata": {"creationTimestamp": None, "labels": GENERATED}},
            id="only what the server generated: no metadata left",
        ),
        pytest.param(
            {**POD, "metadata": {"labels": {**GENERATED, "modelfleet.io/modelcache": "q"}}},
            id="our labels stay, generated ones go",
        ),
        pytest.param(
            {**POD, "metadata": {"annotations": {"a": "b"}, "labels": "not a mapping"}},
            id="labels of another shape go, annotations stay",
        ),
        pytest.param({**POD, "metadata": ["not", "a", "mapping"]}, id="metadata of another shape"),
    ],
)
def test_the_edge_makes_a_template_composable_as_the_core_would(template):
    verbatim = composable_template(as_value(template))
    assert verbatim is not None
    assert structs.to_plain(verbatim.value) == _template_as_composable(template)


@pytest.mark.parametrize("template", [None, {}, "a string", ["a", "list"]])
def test_no_template_is_none(template):
    value = None if template is None else as_value(template)
    assert composable_template(value) is None


LEAF = st.one_of(st.text(max_size=3), st.booleans(), st.none(), st.floats(allow_nan=False))
JSON = st.recursive(
    LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from(["metadata", "labels", "creationTimestamp", *GENERATED, "spec", "x"])
TEMPLATES = st.recursive(
    JSON, lambda inner: st.dictionaries(KEYS, inner, min_size=1, max_size=4), max_leaves=20
).filter(lambda t: isinstance(t, dict) and bool(t))


@given(TEMPLATES)
def test_any_template_reads_the_same_on_both_sides(template):
    verbatim = composable_template(as_value(template))
    assert verbatim is not None
    assert structs.to_plain(verbatim.value) == _template_as_composable(template)
