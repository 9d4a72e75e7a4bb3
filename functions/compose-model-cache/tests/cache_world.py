"""The ModelCache test world: caches, clusters, and one reconcile through the real runner."""

import copy
from typing import Any

from compose_model_cache.fingerprint import source_fingerprint
from compose_model_cache.fn import CLUSTERS, run_function
from compose_model_cache.keys import resource_keys
from compose_model_cache.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.models.modelcache import ModelCacheSpec
from modelfleet_devtools.requests import (
    condition_status,
    conditions,
    desired_resources,
    desired_status,
    run_function_request,
)
from modelfleet_devtools.validation import assert_valid
from modelfleet_devtools.world import inference_cluster, observed_object

RUNNER = SafeRunner(run_function, NAME)


def model_cache(name: str = "qwen", namespace: str = "ml-team", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "source": "HuggingFace",
        "huggingFace": {"repo": "Qwen/Qwen3-0.6B", "revision": "main"},
        "sizeGiB": 10,
    }
    body.update(spec)
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
    }


def keys(cluster: str, xr: dict[str, Any] | None = None) -> tuple[str, str, str]:
    """The keys of the claim, the Secret and the hydration Job on `cluster` of `xr` (by
    default `model_cache()`): the Job's carries the source's fingerprint."""
    spec = ModelCacheSpec.model_validate((xr or model_cache())["spec"])
    return resource_keys(cluster, source_fingerprint(spec))


def with_status(xr: dict[str, Any], rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    """The XR as Crossplane stores it after this response: status and conditions applied."""
    xr = copy.deepcopy(xr)
    status = desired_status(rsp)
    status["conditions"] = [
        {
            "type": c.type,
            "status": condition_status(c),
            "reason": c.reason,
        }
        for c in rsp.conditions
    ]
    xr["status"] = status
    return xr


def reconcile(
    xr: dict[str, Any],
    clusters: list[dict[str, Any]] | None,
    observed: dict[str, dict[str, Any]] | None = None,
    *,
    validate: bool = True,
) -> fnv1.RunFunctionResponse:
    """One reconcile. Every composed manifest is checked against its schema (the Object and
    the remote manifest it carries) unless `validate` is off (fuzzing, for speed)."""
    required = None if clusters is None else {CLUSTERS: clusters}
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
    if validate:
        namespace = xr.get("metadata", {}).get("namespace") or "default"
        for key, obj in desired_resources(rsp).items():
            # Crossplane names composed resources itself; give them one to validate.
            assert_valid(obj | {"metadata": {"name": key, "namespace": namespace}})
    return rsp


def rows(rsp: fnv1.RunFunctionResponse) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in desired_status(rsp).get("clusters", [])}


def reason(rsp: fnv1.RunFunctionResponse, typ: str) -> str:
    return conditions(rsp)[typ].reason


# Clusters the scenarios share.
US = inference_cluster("gke-us", labels={"modelfleet.io/region": "us"})
EU = inference_cluster("gke-eu", labels={"modelfleet.io/region": "eu"})
NO_STORAGE = inference_cluster("onprem", storage_class=None)
OFFLINE = inference_cluster("gke-down", connected=False)


def bound(obj):
    return observed_object(obj, remote_status={"phase": "Bound"}, ready=True)


def job_status(obj, **status):
    return observed_object(obj, remote_status=status, ready=False)


def complete(obj):
    return observed_object(
        obj,
        remote_status={"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]},
        ready=True,
    )


def manifest_kind(obj: dict[str, Any]) -> str:
    """The kind of the remote object a composed Object carries."""
    return str(obj["spec"]["forProvider"]["manifest"]["kind"])


def kinds(rsp):
    return sorted(
        (name, r["spec"]["forProvider"]["manifest"]["kind"])
        for name, r in desired_resources(rsp).items()
    )


__all__ = [
    "EU",
    "NO_STORAGE",
    "OFFLINE",
    "US",
    "bound",
    "complete",
    "desired_resources",
    "job_status",
    "keys",
    "kinds",
    "manifest_kind",
    "model_cache",
    "reason",
    "reconcile",
    "rows",
    "with_status",
]
