"""Reading and keeping observed resources without converting all of them: a projection gives
exactly the plain data at its paths, and carrying forward in protobuf gives what the plain
oracle (`carry_forward`) gives on the converted resource."""

from typing import Any

from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.carry import carry_forward_into
from modelfleet_contracts.fields import mapping_at, mapping_path
from modelfleet_contracts.objects import SECRET_VALUE_FIELDS, SERVER_SET_METADATA
from modelfleet_devtools.fuzz import struct_of

scalars = st.none() | st.booleans() | st.text(max_size=8) | st.integers(-(2**40), 2**40)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "status", "uid", "spec"]), inner, max_size=4)
    ),
    max_leaves=20,
)
TOP_KEYS = ["apiVersion", "kind", "metadata", "spec", "status", "extra"]
METADATA_KEYS = ["name", "labels", "uid", "resourceVersion", "managedFields", "finalizers"]
resources = st.dictionaries(
    st.sampled_from(TOP_KEYS),
    json_values | st.dictionaries(st.sampled_from(METADATA_KEYS), json_values, max_size=4),
    max_size=6,
)


def _secret_manifest(spec: Any) -> dict[str, Any] | None:
    """The v1 Secret an Object's spec carries, or None."""
    manifest = mapping_path(spec, "forProvider", "manifest") if isinstance(spec, dict) else {}
    if manifest.get("apiVersion") == "v1" and manifest.get("kind") == "Secret":
        return manifest
    return None


def carry_forward(observed: dict[str, Any]) -> dict[str, Any]:
    """The oracle: an observed composed resource as a desired one, from plain data (same
    identity and spec, no status, no server-set metadata, no Secret values)."""
    metadata = {
        k: v for k, v in mapping_at(observed, "metadata").items() if k not in SERVER_SET_METADATA
    }
    desired: dict[str, Any] = {
        "apiVersion": observed.get("apiVersion"),
        "kind": observed.get("kind"),
    }
    if metadata:
        desired["metadata"] = metadata
    if "spec" in observed:
        spec = observed["spec"]
        secret = _secret_manifest(spec)
        if secret is not None and any(k in secret for k in SECRET_VALUE_FIELDS):
            manifest = {k: v for k, v in secret.items() if k not in SECRET_VALUE_FIELDS}
            spec = spec | {"forProvider": spec["forProvider"] | {"manifest": manifest}}
        desired["spec"] = spec
    return desired


OBSERVED_OBJECT = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "metadata": {"name": "claim", "uid": "1", "managedFields": [{"manager": "x"}]},
    "spec": {"forProvider": {"manifest": {"kind": "PersistentVolumeClaim"}}},
    "status": {
        "conditions": [{"type": "Ready", "status": "True"}],
        "atProvider": {"manifest": {"kind": "PersistentVolumeClaim", "status": {"phase": "Bound"}}},
    },
}


def test_a_projection_converts_only_the_paths_asked_for():
    paths = {"status": {"conditions": None, "atProvider": {"manifest": {"status": None}}}}
    assert structs.project(struct_of(OBSERVED_OBJECT), paths) == {
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "atProvider": {"manifest": {"status": {"phase": "Bound"}}},
        }
    }


def test_a_projection_applies_to_every_row_of_a_list_and_tolerates_odd_rows():
    xr = {"status": {"clusters": [{"name": "a", "message": "long"}, "odd", 3, {"phase": "R"}]}}
    paths = {"status": {"clusters": {"name": None, "phase": None}}}
    assert structs.project(struct_of(xr), paths) == {
        "status": {"clusters": [{"name": "a"}, "odd", 3.0, {"phase": "R"}]}
    }


@given(resources)
def test_a_projection_of_every_key_is_the_whole_conversion_and_adds_nothing(data):
    s = struct_of(data)
    before = s.SerializeToString(deterministic=True)
    assert structs.project(s, {k: None for k in TOP_KEYS}) == structs.to_dict(s)
    assert structs.project(s, {"status": {"a": None}, "metadata": {"uid": None}}) is not None
    assert s.SerializeToString(deterministic=True) == before, "reading must not add keys"


@given(resources)
def test_carrying_forward_in_protobuf_is_carry_forward_of_the_plain_resource(data):
    observed = struct_of(data)
    target = struct_pb2.Struct()
    carry_forward_into(target, observed)
    assert structs.to_dict(target) == carry_forward(structs.to_dict(observed))


def test_a_carried_object_keeps_identity_and_spec_but_no_status_or_server_metadata():
    metadata = OBSERVED_OBJECT["metadata"] | {"labels": {"a": "b"}, "resourceVersion": "9"}
    target = struct_pb2.Struct()
    carry_forward_into(target, struct_of(OBSERVED_OBJECT | {"metadata": metadata}))
    assert structs.to_dict(target) == {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "claim", "labels": {"a": "b"}},
        "spec": {"forProvider": {"manifest": {"kind": "PersistentVolumeClaim"}}},
    }


values = {"data": json_values, "stringData": json_values, "type": scalars}
secret_manifests = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Secret")}, optional=values
) | st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(["v1", "apps/v1"]) | scalars,
        "kind": st.sampled_from(["Secret", "ConfigMap"]) | scalars,
        **values,
    },
)
object_specs = st.fixed_dictionaries(
    {},
    optional={
        "forProvider": st.fixed_dictionaries({}, optional={"manifest": secret_manifests})
        | json_values,
        "references": json_values,
    },
)


@given(resources, object_specs)
def test_carrying_a_secret_object_forward_is_the_same_in_protobuf_and_plain(data, spec):
    observed = struct_of(data | {"spec": spec})
    target = struct_pb2.Struct()
    carry_forward_into(target, observed)
    assert structs.to_dict(target) == carry_forward(structs.to_dict(observed))


SECRET_OBJECT = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "metadata": {"name": "creds"},
    "spec": {
        "references": [{"patchesFrom": {"name": "hf"}, "toFieldPath": "data.HF_TOKEN"}],
        "forProvider": {"manifest": {"apiVersion": "v1", "kind": "Secret", "type": "Opaque"}},
    },
}


def test_a_carried_secret_object_leaves_out_the_values_the_provider_wrote_back():
    """provider-kubernetes stores the values it resolved through patchesFrom in the Object
    (provider-kubernetes#223); a function keeping the Object must not send them back."""
    written_back = struct_of(SECRET_OBJECT)
    manifest = written_back["spec"]["forProvider"]["manifest"]
    manifest["data"] = {"HF_TOKEN": "aGZfc2VjcmV0"}
    manifest["stringData"] = {"HF_TOKEN": "hf_secret"}
    target = struct_pb2.Struct()
    carry_forward_into(target, written_back)
    assert structs.to_dict(target) == SECRET_OBJECT
    assert carry_forward(structs.to_dict(written_back)) == SECRET_OBJECT
    # Another kind's data is the composition's own and is kept.
    config = structs.to_dict(written_back)
    config["spec"]["forProvider"]["manifest"]["kind"] = "ConfigMap"
    assert carry_forward(config)["spec"]["forProvider"]["manifest"]["data"] == {
        "HF_TOKEN": "aGZfc2VjcmV0"
    }
