"""Valid base XRs of every kind and the case types the XR tables are written in: a case is
a base XR, one change a user might get wrong (or an attacker might try), and for an invalid
one a meaningful part of the message the API server answers with."""

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest
from modelfleet_devtools.validation import validate_xr

DELETE = object()  # marks a field to remove


def inference_cluster() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "gke-us"},
        "spec": {
            "connection": {"providerConfigName": "gke-us"},
            "storage": {"storageClassName": "filestore-rwx"},
            "nodePools": [
                {"name": "h100", "nodeCount": 2, "gpu": {"count": 8, "memoryGiB": 80}},
            ],
        },
    }


def model_cache() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {
            "source": "HuggingFace",
            "huggingFace": {"repo": "Qwen/Qwen3-0.6B", "revision": "main"},
            "sizeGiB": 5,
        },
    }


def model_deployment() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {"replicas": 1, "modelCacheRef": {"name": "qwen"}},
    }


def model_replica() -> dict[str, Any]:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "qwen-gke-us", "namespace": "ml-team"},
        "spec": {"clusterName": "gke-us", "replicas": 1, "nodes": 1, "gpusPerNode": 1},
    }


BASES = {
    "InferenceCluster": inference_cluster,
    "ModelCache": model_cache,
    "ModelDeployment": model_deployment,
    "ModelReplica": model_replica,
}


def apply_changes(xr: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Set (or with DELETE remove) dotted paths such as `spec.huggingFace.repo`."""
    xr = copy.deepcopy(xr)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        node = xr
        for key in parents:
            node = node.setdefault(key, {})
        if value is DELETE:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return xr


@dataclass(frozen=True)
class Invalid:
    name: str
    kind: str
    changes: dict[str, Any]
    error: str  # a meaningful part of the message the user sees
    where: str = ""  # the field the error is reported at, when it matters


@dataclass(frozen=True)
class Valid:
    name: str
    kind: str
    changes: dict[str, Any] = field(default_factory=dict)


HF = "spec.huggingFace"
NO_MATCH = "does not match"


def case_params(cases: list[Invalid]) -> list[Any]:
    return [pytest.param(c, id=c.name) for c in cases]


def assert_rejected(case: Invalid) -> None:
    """The XR the case describes is refused with (a part of) the case's message."""
    xr = apply_changes(BASES[case.kind](), case.changes)
    errors = validate_xr(xr)
    matching = [e for e in errors if case.error in e and case.where in e]
    assert matching, f"expected an error containing {case.error!r} at {case.where!r}, got {errors}"
