"""Reading an observed composed resource's few facts (`ObservedObject`, or a ModelReplica's
`PlacedReplica`), and a referenced ModelCache's rows (`StagedCache`), straight from the
protobuf Struct, tolerantly: a field of another shape reads as absent (empty string, zero),
never raises."""

from typing import Any

from google.protobuf import json_format, struct_pb2

from modelfleet_contracts.api import MODEL_DEPLOYMENT
from modelfleet_contracts.edge.structs import to_plain
from modelfleet_contracts.fields import as_int
from modelfleet_contracts.labels import NAMESPACE_LABEL, REPLACES_ANNOTATION, kind_label
from modelfleet_contracts.observed import (
    CacheRow,
    Condition,
    ObservedObject,
    PlacedReplica,
    StagedCache,
    secret_fields_with_values,
)
from modelfleet_contracts.readiness import Seen
from modelfleet_contracts.served_names import natural_model_name

_OWNER_LABEL = kind_label(MODEL_DEPLOYMENT)


def _struct(fields: Any, key: str) -> Any:
    """`fields[key]`'s Struct fields when it is a Struct, else None (`get`: never inserts)."""
    v = fields.get(key)
    return v.struct_value.fields if v is not None and v.HasField("struct_value") else None


def _string(fields: Any, key: str) -> str:
    v = fields.get(key)
    return v.string_value if v is not None else ""  # "" when the value is not a string


def _number(fields: Any, key: str) -> float | None:
    v = fields.get(key)
    return v.number_value if v is not None and v.HasField("number_value") else None


def _count(fields: Any, key: str) -> int:
    n = _number(fields, key)
    return int(n) if n is not None and 0 <= n < 2**53 else 0


def _text(fields: Any, key: str) -> str:
    """`str(value or "")` of the plain value: a string as it is, any other value that is
    not empty or zero as its text."""
    v = fields.get(key)
    if v is None:
        return ""
    text = v.string_value  # "" for a value of another kind: a non-empty one is the string
    if text or v.HasField("string_value"):
        return text
    plain = to_plain(v)
    return str(plain) if plain else ""


def _conditions(fields: Any) -> list[Any]:
    v = fields.get("conditions")
    if v is None or not v.HasField("list_value"):
        return []
    return [c.struct_value.fields for c in v.list_value.values if c.HasField("struct_value")]


def _own_state(status: Any) -> tuple[bool, str]:
    """(its first Ready condition is "True", the message of its first False condition that
    has one), of a resource's own `status.conditions`."""
    ready: bool | None = None
    failure = ""
    for c in _conditions(status):
        state = _string(c, "status")
        if state == "False" and not failure:
            failure = _string(c, "message")
        # A condition's type is read only until the first Ready one is found.
        if ready is None and _string(c, "type") == "Ready":
            ready = state == "True"
    return bool(ready), failure


def read_seen(s: struct_pb2.Struct) -> Seen:
    """Its kind and whether its own Ready condition is True: what its readiness is decided on."""
    status = _struct(s.fields, "status")
    ready = _own_state(status)[0] if status is not None else False
    return Seen(kind=_string(s.fields, "kind"), ready=ready)


def read_observed(s: struct_pb2.Struct) -> ObservedObject:
    """The facts of an observed resource, read from its Struct without converting it."""
    status = _struct(s.fields, "status")
    if status is None:
        return ObservedObject()
    ready, failure = _own_state(status)
    at_provider = _struct(status, "atProvider")
    manifest = _struct(at_provider, "manifest") if at_provider is not None else None
    if manifest is None:
        return ObservedObject(ready=ready, failure_message=failure)
    provisioner = _string(manifest, "provisioner")
    exposed = _exposed_secret_fields(manifest)
    remote = _struct(manifest, "status")
    if not remote:
        return ObservedObject(
            ready=ready,
            failure_message=failure,
            remote_provisioner=provisioner,
            exposed_secret_fields=exposed,
        )
    return ObservedObject(
        ready=ready,
        failure_message=failure,
        remote_seen=True,
        remote_phase=_string(remote, "phase"),
        remote_conditions=tuple(
            Condition(
                _string(c, "type"),
                _string(c, "status"),
                _string(c, "reason"),
                _string(c, "message"),
            )
            for c in _conditions(remote)
        ),
        remote_succeeded=_count(remote, "succeeded"),
        remote_failed=_count(remote, "failed"),
        remote_ready_replicas=_count(remote, "readyReplicas"),
        remote_updated_replicas=_count(remote, "updatedReplicas"),
        remote_provisioner=provisioner,
        exposed_secret_fields=exposed,
        remote_addresses=tuple(
            _string(a, "value") for a in _structs(remote, "addresses") if _string(a, "value")
        ),
        remote_parent_conditions=tuple(
            _condition(c) for parent in _structs(remote, "parents") for c in _conditions(parent)
        ),
    )


def _structs(fields: Any, key: str) -> list[Any]:
    """The Struct items of the list at `fields[key]` (items of another kind skipped)."""
    v = fields.get(key)
    if v is None or not v.HasField("list_value"):
        return []
    return [i.struct_value.fields for i in v.list_value.values if i.HasField("struct_value")]


def _condition(c: Any) -> Condition:
    return Condition(
        _string(c, "type"), _string(c, "status"), _string(c, "reason"), _string(c, "message")
    )


def _exposed_secret_fields(manifest: Any) -> tuple[str, ...]:
    """`secret_fields_with_values` of an echoed manifest; only a Secret's (a few keys) is
    converted to plain data."""
    if _string(manifest, "kind") != "Secret":
        return ()
    echoed = struct_pb2.Struct()
    for key, value in manifest.items():
        echoed.fields[key].CopyFrom(value)
    return secret_fields_with_values(json_format.MessageToDict(echoed))


def read_replica(s: struct_pb2.Struct) -> PlacedReplica:
    """What the scheduler reads of a ModelReplica, from its Struct without converting it."""
    fields = s.fields
    spec = _struct(fields, "spec") or {}
    status = _struct(fields, "status") or {}
    metadata = _struct(fields, "metadata")
    labels = (_struct(metadata, "labels") if metadata is not None else None) or {}
    annotations = (_struct(metadata, "annotations") if metadata is not None else None) or {}
    replaces = _string(annotations, REPLACES_ANNOTATION)
    return PlacedReplica(
        cluster=_text(spec, "clusterName"),
        pool=_text(spec, "nodePool"),
        replicas=max(0, as_int(_number(spec, "replicas"))),
        nodes=max(1, as_int(_number(spec, "nodes"))),
        owner=_text(labels, _OWNER_LABEL),
        owner_namespace=_text(labels, NAMESPACE_LABEL),
        phase=_text(status, "phase"),
        message=_text(status, "message"),
        ready_replicas=max(0, as_int(_number(status, "readyReplicas"))),
        replaces=tuple(sorted({c.strip() for c in replaces.split(",") if c.strip()})),
        address=_string(status, "address"),
        gateway_address=_string(status, "gatewayAddress"),
    )


def read_model_cache(s: struct_pb2.Struct, *, cluster: str | None = None) -> StagedCache:
    """A ModelCache's `status.clusters`, from its Struct without converting it: every row's
    name and phase (the scheduler), or, given `cluster`, the first row of that cluster, whole
    (a replica, which mounts its own; the rows after it are not read); its cluster selector;
    and the model's id at its source (`spec`), the default served model name."""
    spec = _struct(s.fields, "spec")
    chosen = spec.get("clusterSelector") if spec is not None else None
    plain = to_plain(chosen) if chosen is not None and chosen.HasField("struct_value") else None
    selector = plain if isinstance(plain, dict) and plain else None
    natural = _natural_name(s)
    status = _struct(s.fields, "status")
    listed = status.get("clusters") if status is not None else None
    if listed is None or not listed.HasField("list_value"):
        return StagedCache(selector=selector, natural_name=natural)
    phases: dict[str, str] = {}
    for item in listed.list_value.values:
        if not item.HasField("struct_value"):
            continue
        row = item.struct_value.fields
        # A name is an identity: one of another type is no cluster's ("" as if absent).
        name = _string(row, "name")
        if cluster is None:
            phases[name] = _text(row, "phase")
        elif name == cluster:
            here = CacheRow(
                phase=_text(row, "phase"),
                message=_text(row, "message"),
                claim_name=_text(row, "claimName"),
                path=_text(row, "path"),
            )
            return StagedCache(
                phases={name: here.phase}, row=here, selector=selector, natural_name=natural
            )
    return StagedCache(phases=phases, selector=selector, natural_name=natural)


def _natural_name(s: struct_pb2.Struct) -> str:
    spec = _struct(s.fields, "spec")
    if spec is None:
        return ""

    def field(block: str, key: str) -> str:
        fields = _struct(spec, block)
        return _string(fields, key) if fields is not None else ""

    return natural_model_name(
        _string(spec, "source"),
        hf_repo=field("huggingFace", "repo"),
        oci_image=field("oci", "image"),
        s3_uri=field("s3", "uri"),
    )
