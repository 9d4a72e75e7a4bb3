"""Hostile strings in every user field that reaches a container or a path.

Each (field, hostile value) pair is either rejected before any function sees it — by the
XRD's schema and CEL rules (`validate_xr`), or by the API server's object-name rules for
`metadata.name`/`namespace` — or run through the real function and shown to be inert:

- it reaches a container only as one whole argv element (`VALUE` or `--flag=VALUE`) or one
  whole env value, never inside a `sh -c` script or glued to other text;
- every name composed for a workload cluster is a DNS-1123 label of at most 63 characters;
- every path a container sees stays under /mnt/models.

A ModelService's fields reach no container: they name a route's path and the deployments it
asks Crossplane for. Each hostile value there is rejected the same ways, or the function says
so on its `Routed` condition and keeps the route it composed before on the cluster.

The figures (tried / rejected / inert) are printed by `-s` and recorded in docs/reliability.md.
The values, the functions' worlds and the table of fields are in hostile_world.py.
"""

import copy
import posixpath
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from compose_model_replica.core import WORKLOAD
from compose_model_service.core import route_key
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from hostile_world import (
    HOSTILE,
    RUNNERS,
    SERVICE_CLUSTER,
    SERVICE_RUNNER,
    SERVICE_TARGETS,
    SERVICE_XR,
    TARGETS,
    replica_xr,
    required_for,
    service_required,
)
from modelfleet_contracts.mounts import MODEL_MOUNT_PATH
from modelfleet_devtools.fuzz import crashed
from modelfleet_devtools.requests import (
    conditions,
    desired_resources,
    desired_status,
    run_function_request,
)
from modelfleet_devtools.validation import validate_xr
from modelfleet_devtools.world import observed_object

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# `--flag=VALUE`: a fixed flag the function chose, then the user's value, whole.
FIXED_FLAG = re.compile(r"^--[a-z][a-z-]*=")
SHELLS = {"sh", "/bin/sh", "bash", "/bin/bash"}

TALLY: Counter[str] = Counter()

# -- what "inert" means -------------------------------------------------------------------


def _admitted_names(xr: dict[str, Any]) -> list[str]:
    """The API server's own name rules for the XR (the XRD cannot express them)."""
    metadata = xr["metadata"]
    problems = []
    name = metadata.get("name", "")
    if not (DNS_SUBDOMAIN.match(name) and len(name) <= 253):
        problems.append(f"metadata.name {name!r} is not a DNS-1123 subdomain")
    namespace = metadata.get("namespace")
    if namespace is not None and not (DNS_LABEL.match(namespace) and len(namespace) <= 63):
        problems.append(f"metadata.namespace {namespace!r} is not a DNS-1123 label")
    return problems


def _containers(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        for key in ("containers", "initContainers"):
            for c in node.get(key) or []:
                if isinstance(c, dict):
                    yield c
        for value in node.values():
            yield from _containers(value)
    elif isinstance(node, list):
        for value in node:
            yield from _containers(value)


def _remote_manifests(rsp: fnv1.RunFunctionResponse) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(key, manifest, created) of every composed object; Objects give their remote manifest."""
    for key, obj in desired_resources(rsp).items():
        spec = obj.get("spec") or {}
        inner = (spec.get("forProvider") or {}).get("manifest")
        if obj.get("kind") == "Object" and isinstance(inner, dict):
            yield key, inner, spec.get("managementPolicies") != ["Observe"]
        else:
            yield key, obj, True


def _container_strings(rsp: fnv1.RunFunctionResponse) -> set[str]:
    """Every argv element and env name/value composed, to tell the function's own text
    (e.g. a default `--exclude=original/*`) from what a hostile value brought in."""
    found: set[str] = set()
    for _, manifest, _ in _remote_manifests(rsp):
        for c in _containers(manifest.get("spec")):
            found.update(str(a) for a in (c.get("command") or []) + (c.get("args") or []))
            for env in c.get("env") or []:
                found.update(str(env.get(part, "")) for part in ("name", "value"))
    return found


def _argv_violations(container: dict[str, Any], value: str, baseline: set[str]) -> list[str]:
    problems = []
    command = [str(a) for a in container.get("command") or []]
    argv = command + [str(a) for a in container.get("args") or []]
    shell_script = None
    if command and command[0] in SHELLS and "-c" in command[:-1]:
        shell_script = command[command.index("-c") + 1]
    for element in argv:
        if value not in element or element is shell_script or element in baseline:
            continue
        flag = FIXED_FLAG.match(element)
        if element == value or (flag and element[flag.end() :] == value):
            continue
        problems.append(f"argv element {element[:80]!r} embeds the value")
    if shell_script is not None and value in shell_script:
        problems.append(f"the value is inside the shell script {shell_script[:80]!r}")
    for env in container.get("env") or []:
        for part in ("name", "value"):
            text = str(env.get(part, ""))
            if value in text and text != value and text not in baseline:
                problems.append(f"env {part} {text[:80]!r} embeds the value")
    return problems


def _path_violations(container: dict[str, Any]) -> list[str]:
    problems = []
    paths = [m.get("mountPath", "") for m in container.get("volumeMounts") or []]
    paths += [m.get("subPath", "") for m in container.get("volumeMounts") or [] if m.get("subPath")]
    argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    paths += [a.split("=", 1)[1] for a in argv if a.startswith(("--model=", "--cache-dir="))]
    for path in paths:
        if path.startswith("/") and path.startswith(MODEL_MOUNT_PATH):
            if not posixpath.normpath(path).startswith(MODEL_MOUNT_PATH):
                problems.append(f"path {path!r} escapes {MODEL_MOUNT_PATH}")
        elif ".." in path.split("/"):
            problems.append(f"path {path!r} climbs out of its volume")
    return problems


def inert_problems(
    rsp: fnv1.RunFunctionResponse, value: str, baseline: set[str] = frozenset()
) -> list[str]:
    problems: list[str] = []
    for key, manifest, created in _remote_manifests(rsp):
        name = str((manifest.get("metadata") or {}).get("name", ""))
        if created and name and not (DNS_LABEL.match(name) and len(name) <= 63):
            problems.append(f"{key}: composed name {name!r} is not a DNS-1123 label <= 63")
        for container in _containers(manifest.get("spec")):
            problems += [f"{key}: {p}" for p in _argv_violations(container, value, baseline)]
            problems += [f"{key}: {p}" for p in _path_violations(container)]
    for row in desired_status(rsp).get("clusters") or []:
        if ".." in str(row.get("path", "")).split("/"):
            problems.append(f"status path {row['path']!r} climbs out of the claim")
    return problems


CASES = [
    pytest.param(field, function, base, put, hostile, id=f"{field} <- {label}")
    for field, function, base, put in TARGETS
    for label, hostile in HOSTILE.items()
]


_BASELINES: dict[int, set[str]] = {}


def baseline(function: str, base: dict[str, Any]) -> set[str]:
    """What `function` puts in containers for the unmodified `base` (which must be valid)."""
    if id(base) not in _BASELINES:
        assert not validate_xr(base), f"the base {base['kind']} must be valid"
        rsp = RUNNERS[function].run(run_function_request(base, required=required_for(function)))
        assert not crashed(rsp) and desired_resources(rsp)
        _BASELINES[id(base)] = _container_strings(rsp)
    return _BASELINES[id(base)]


def refused_by_the_api_server(xr) -> bool:
    """Whether the API server would refuse `xr` (its XRD's schema, or its names), tallied."""
    if validate_xr(xr):
        TALLY["rejected by the XRD"] += 1
        return True
    if _admitted_names(xr):
        TALLY["rejected by the API server's name rules"] += 1
        return True
    return False


@pytest.mark.parametrize(("field", "function", "base", "put", "hostile"), CASES)
def test_hostile_value_is_rejected_or_inert(field, function, base, put, hostile):
    known = baseline(function, base)
    xr = copy.deepcopy(base)
    put(xr, hostile)
    TALLY["tried"] += 1
    rsp = RUNNERS[function].run(run_function_request(xr, required=required_for(function)))
    assert not crashed(rsp), f"{function} crashed on {field}={hostile!r}"
    if refused_by_the_api_server(xr):
        return
    assert desired_resources(rsp), f"{function} composed nothing for an admissible {field}"
    assert inert_problems(rsp, hostile, known) == []
    TALLY["admitted and inert"] += 1


@pytest.mark.parametrize("label", list(HOSTILE))
def test_a_tampered_cache_path_never_points_a_replica_outside_the_mount(label):
    """The cache's status path is written by compose-model-cache, but anyone allowed to
    write that status could put anything there: the replica must not follow it out."""
    hostile = HOSTILE[label]
    xr = replica_xr(1, "vLLM")
    TALLY["tried"] += 1
    rsp = RUNNERS["compose-model-replica"].run(
        run_function_request(xr, required=required_for("compose-model-replica", hostile))
    )
    assert not crashed(rsp)
    assert inert_problems(rsp, hostile) == []
    if WORKLOAD in desired_resources(rsp):
        TALLY["admitted and inert"] += 1
    else:
        # Refused, and the user is told which path was refused.
        assert desired_status(rsp)["phase"] == "WaitingForCache"
        assert repr(hostile)[:40] in desired_status(rsp)["message"]
        TALLY["refused by the function with a message"] += 1


SERVICE_CASES = [
    pytest.param(field, put, hostile, id=f"ModelService {field} <- {label}")
    for field, put in SERVICE_TARGETS
    for label, hostile in HOSTILE.items()
]
ACCEPTED = {
    "parents": [
        {
            "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway",
                          "name": "inference", "namespace": "gateway-system"},
            "controllerName": "example.io/gateway",
            "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}],
        }
    ]
}  # fmt: skip
_ROUTED: list[tuple[dict[str, Any], dict[str, Any]]] = []


def routed_before() -> tuple[dict[str, Any], dict[str, Any]]:
    """SERVICE_XR's status and its observed route, once routed on SERVICE_CLUSTER."""
    if not _ROUTED:
        assert not validate_xr(SERVICE_XR), "the base ModelService must be valid"
        req = run_function_request(SERVICE_XR, required=service_required(SERVICE_XR))
        rsp = SERVICE_RUNNER.run(req)
        assert not crashed(rsp) and route_key(SERVICE_CLUSTER) in desired_resources(rsp)
        observed = {
            key: observed_object(obj, remote_status=ACCEPTED, ready=True)
            for key, obj in desired_resources(rsp).items()
        }
        _ROUTED.append((desired_status(rsp), observed))
    return _ROUTED[0]


@pytest.mark.parametrize(("field", "put", "hostile"), SERVICE_CASES)
def test_a_hostile_model_name_or_backend_is_said_and_drops_no_route(field, put, hostile):
    status, observed = routed_before()
    xr = copy.deepcopy(SERVICE_XR)
    put(xr, hostile)
    xr["status"] = copy.deepcopy(status)
    TALLY["tried"] += 1
    req = run_function_request(xr, required=service_required(xr), observed=observed)
    rsp = SERVICE_RUNNER.run(req)
    assert not crashed(rsp), f"compose-model-service crashed on {field}={hostile!r}"
    if refused_by_the_api_server(xr):
        return
    routed = conditions(rsp)["Routed"]
    assert routed.reason and routed.message, f"{field}={hostile!r}: Routed says nothing"
    assert route_key(SERVICE_CLUSTER) in desired_resources(rsp), (
        f"{field}={hostile!r} dropped the route: Routed {routed.reason}: {routed.message}"
    )
    assert inert_problems(rsp, hostile) == []
    TALLY["admitted, said on Routed, no route dropped"] += 1


def test_zz_report_the_tally(capsys):
    """Prints the figures for docs/reliability.md (runs last in file order)."""
    with capsys.disabled():
        print(f"\nhostile inputs: {dict(TALLY)}")
    assert sum(v for k, v in TALLY.items() if k != "tried") == TALLY["tried"]


def test_the_inertness_check_catches_shell_text_bad_names_and_escaping_paths():
    """The check above can fail: a function that builds shell text, names an object badly
    or points outside the mount is caught."""
    value = HOSTILE["semicolon"]
    careless = fnv1.RunFunctionResponse()
    container = {
        "name": "c",
        "command": ["/bin/sh", "-c", f"download {value}"],
        "args": [f"--model={MODEL_MOUNT_PATH}/../../etc", f"prefix {value}"],
        "env": [{"name": "REPO", "value": f"x{value}"}],
    }
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "Hydrate_Model"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }
    careless.desired.resources["job"].resource.update(
        {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
         "spec": {"forProvider": {"manifest": manifest}}}
    )  # fmt: skip
    problems = inert_problems(careless, value)
    assert any("shell script" in p for p in problems)
    assert any("argv element" in p for p in problems)
    assert any("env value" in p for p in problems)
    assert any("DNS-1123" in p for p in problems)
    assert any("escapes" in p for p in problems)
