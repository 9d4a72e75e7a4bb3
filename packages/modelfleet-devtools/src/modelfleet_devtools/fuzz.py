"""Hypothesis building blocks for fuzzing functions: random JSON, mutated objects, and a
mutated world (required and observed resources) around a fixed spec.

The quick `ci` profile (150 cases a property) runs with every `uv run pytest`; the `long`
profile runs at least 10,000 cases a property (profiles are set in the root conftest.py):

    MODELFLEET_FUZZ_PROFILE=long uv run pytest functions -k fuzz --hypothesis-show-statistics

See docs/reliability.md for the figures.
"""

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from hypothesis import strategies as st
from modelfleet_contracts.edge import structs
from modelfleet_contracts.outcome import RESOLVING

from modelfleet_devtools.requests import desired_resources, desired_status

# Strings a user or a broken controller could put anywhere, hostile ones included.
NASTY_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "; rm -rf /",
        "$(id)",
        "`id`",
        "a\nb",
        "--help",
        "../../etc/passwd",
        "\u0430dmin",  # Cyrillic a
        "x" * 300,
        "True",
        "0",
        "-1",
        "null",
    ]
)

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**31), max_value=2**31),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    NASTY_STRINGS,
    st.text(max_size=20),
)

JSON = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=8), children, max_size=3),
    ),
    max_leaves=8,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            paths += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            paths += _paths(v, (*prefix, i))
    return paths


def mutate(data: st.DataObject, value: Any, max_changes: int = 3) -> Any:
    """A copy of `value` with up to `max_changes` random edits: a field deleted, replaced by
    random JSON (often of the wrong type), or a new field added."""
    value = copy.deepcopy(value)
    for _ in range(data.draw(st.integers(min_value=1, max_value=max_changes))):
        paths = [p for p in _paths(value) if p]
        if not paths:
            return value
        path = data.draw(st.sampled_from(paths))
        parent = value
        for step in path[:-1]:
            parent = parent[step]
        action = data.draw(st.sampled_from(["delete", "replace", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = data.draw(JSON)
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]][data.draw(st.text(max_size=8))] = data.draw(JSON)
        else:
            parent[path[-1]] = data.draw(JSON)
    return value


def crashed(rsp: fnv1.RunFunctionResponse) -> bool:
    """Whether the runner's last line of defence caught an exception."""
    return any(c.type == "FunctionError" for c in rsp.conditions)


def says_something(rsp: fnv1.RunFunctionResponse) -> bool:
    """A response either composes something, sets a status, or explains with a message."""
    has_status = bool(rsp.desired.composite.resource.fields)
    explained = any(c.message for c in rsp.conditions)
    return bool(rsp.desired.resources) or has_status or explained


def waits_for_crossplane(rsp: fnv1.RunFunctionResponse, condition_type: str) -> bool:
    """The response to an unresolved requirement: not Ready, and `condition_type` (the
    function's main condition) says what Crossplane has not resolved yet."""
    said = next((c for c in rsp.conditions if c.type == condition_type), None)
    return (
        rsp.desired.composite.ready == fnv1.READY_FALSE
        and said is not None
        and said.reason == RESOLVING
        and said.message.startswith("waiting for Crossplane to resolve ")
    )


def mutate_status(data: st.DataObject, obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` whose status (what controllers report, which may flap or be half
    written) has random edits; its identity and spec are untouched."""
    out = copy.deepcopy(dict(obj))
    status = out.get("status")
    out["status"] = mutate(data, status) if isinstance(status, dict) and status else data.draw(JSON)
    return out


def flapping(
    data: st.DataObject, objects: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Observed composed resources as a bad moment may show them: each one present as is,
    present with a mutated status, or missing for this round."""
    world: dict[str, dict[str, Any]] = {}
    for key, obj in objects.items():
        fate = data.draw(st.sampled_from(["same", "flapped", "missing"]), label=f"observed {key}")
        if fate == "same":
            world[key] = copy.deepcopy(dict(obj))
        elif fate == "flapped":
            world[key] = mutate_status(data, obj)
    return world


def resolved(
    data: st.DataObject, items: Iterable[Mapping[str, Any]], *, may_vanish: bool = True
) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """A required-resources answer as Crossplane may give it: unresolved (None) for this
    call, or each item present as is, with a mutated status, or gone. Returns the answer and
    the items still present (identity intact), so a property can tell what still matches."""
    if data.draw(st.integers(0, 9), label="unresolved?") == 0:
        return None, []
    answer: list[dict[str, Any]] = []
    for item in items:
        choices = ["same", "flapped", "gone"] if may_vanish else ["same", "flapped"]
        fate = data.draw(st.sampled_from(choices), label="required item")
        if fate == "same":
            answer.append(copy.deepcopy(dict(item)))
        elif fate == "flapped":
            answer.append(mutate_status(data, item))
    return answer, list(answer)


# One reconcile of an XR: (the XR, its observed composed resources or None) -> the response.
Reconcile = Callable[[dict[str, Any], dict[str, dict[str, Any]] | None], fnv1.RunFunctionResponse]


def settled(
    xr: Mapping[str, Any],
    reconcile: Reconcile,
    observe: Callable[[dict[str, Any]], dict[str, Any]],
    written: Callable[[dict[str, Any], fnv1.RunFunctionResponse], dict[str, Any]] | None = None,
    rounds: int = 2,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The world a fuzz property flaps around, settled in `rounds` reconciles (two by
    default): what the one before the last composed, each resource as `observe` has it once
    done; and the XR with the status the last, which observed them, wrote (`written`: how a
    status is written back; default the desired status as it is). More rounds for a function
    that composes some resources only once others are observed."""
    last = reconcile(dict(xr), None)
    composed: dict[str, dict[str, Any]] = {}
    for _ in range(rounds - 1):
        composed = {k: observe(v) for k, v in desired_resources(last).items()}
        last = reconcile(dict(xr), composed)
    if written is not None:
        return written(dict(xr), last), composed
    return {**xr, "status": desired_status(last)}, composed


def flapped(
    data: st.DataObject, xr: Mapping[str, Any], composed: Mapping[str, Mapping[str, Any]], what: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """A bad moment in a settled world: a copy of the XR (`what`), its own status mutated or
    not, and its composed resources `flapping`."""
    copied = copy.deepcopy(dict(xr))
    if data.draw(st.booleans(), label=f"mutate the {what}'s own status"):
        copied = mutate_status(data, copied)
    return copied, flapping(data, composed)


def holds_up(rsp: fnv1.RunFunctionResponse) -> bool:
    """What every response to a flapping world does: no crash, and something said."""
    return not crashed(rsp) and says_something(rsp)


def dropped(
    observed: Mapping[str, Any], desired: Mapping[str, Any], keys: Iterable[str]
) -> list[str]:
    """Which of `keys` were observed (composed before) but are missing from the desired state."""
    return sorted(k for k in keys if k in observed and k not in desired)


def struct_of(data: Mapping[str, Any]) -> struct_pb2.Struct:
    """`data` as the protobuf Struct a resource arrives in."""
    s = struct_pb2.Struct()
    structs.update(s, data)
    return s


def read_both_ways(
    read: Callable[[struct_pb2.Struct], Any], plain: Callable[[dict[str, Any]], Any], data: Any
) -> tuple[Any, Any]:
    """A fast reader against its plain-data oracle: what `read` gives on the Struct of `data`,
    and what `plain` gives on that Struct converted (numbers as floats, as Crossplane sends
    them). Raises if reading added a key to the Struct."""
    s = struct_of(data)
    before = s.SerializeToString(deterministic=True)
    fast = read(s)
    if s.SerializeToString(deterministic=True) != before:
        raise AssertionError("reading must not add keys")
    return fast, plain(structs.to_dict(s))
