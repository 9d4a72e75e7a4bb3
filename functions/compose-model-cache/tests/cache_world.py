"""The ModelCache test world: caches, clusters, and one reconcile through the real runner."""

import copy
from datetime import UTC, datetime
from typing import Any

from compose_model_cache.cache.handover import cluster_part as _cluster_part
from compose_model_cache.fingerprint import source_fingerprint
from compose_model_cache.fn import CLUSTERS, run_function
from compose_model_cache.keys import resource_keys
from compose_model_cache.main import NAME
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import MODEL_CACHE_SHARD as SHARD
from modelfleet_contracts.edge.requirements import cluster_requirement
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
# The time a core is called at in these tests (the edge reads it from the request).
NOW = datetime(2026, 1, 1, tzinfo=UTC)


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
            "message": c.message,
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
    """One reconcile of the cache as a user sees it: the ModelCache composes its shards, each
    shard stages the cache on its clusters, and the ModelCache reports what they report.

    `xr`'s status stands for what the cache and its shards reported last; `observed` holds
    the Objects on every cluster (by the keys a shard composes them under) and any Object a
    release before shards composed on the ModelCache. The response: the ModelCache's own
    (status, conditions, events, TTL), with the desired Objects of every shard (and the
    ModelCache's own Objects, if any) in place of the shards. Every composed manifest is
    checked against its schema unless `validate` is off (fuzzing, for speed)."""
    observed = observed or {}
    required = None if clusters is None else {CLUSTERS: clusters}
    legacy = {k: o for k, o in observed.items() if k in xr.get("_legacy", ())}
    first = RUNNER.run(run_function_request(xr, observed=legacy, required=required))
    shards = {k: s for k, s in desired_resources(first).items() if s.get("kind") == SHARD}
    if not shards and set(observed) - set(legacy):
        # Composed nothing (held, or no cluster matches any more) where Objects exist: those
        # were composed by a shard, which the ModelCache observes and keeps while held.
        before = {"shard-0": _shard_of(xr, set(observed) - set(legacy))}
        first = RUNNER.run(
            run_function_request(xr, observed={**legacy, **before}, required=required)
        )
        shards = {k: s for k, s in desired_resources(first).items() if s.get("kind") == SHARD}
    if not shards:
        return _checked(xr, first, validate)
    # The cache's status as the shards would have reported it (a test may mangle it).
    status = xr.get("status") if isinstance(xr.get("status"), dict) else {}
    by_cluster = {
        r["name"]: r
        for r in _listed(status.get("clusters"))
        if isinstance(r, dict) and isinstance(r.get("name"), str)
    }
    observed_shards: dict[str, dict[str, Any]] = {}
    staged: dict[str, fnv1.Resource] = {}
    asked: list[fnv1.RunFunctionResponse] = []  # the shards' responses
    for key, shard in sorted(shards.items()):
        names = [e["name"] for e in shard["spec"]["clusters"]]
        shard = copy.deepcopy(shard)
        shard["metadata"] = {"name": f"{xr['metadata']['name']}-{key}", "namespace": _ns(xr)}
        shard["status"] = {
            "clusters": [by_cluster[n] for n in names if n in by_cluster],
            **({"pinnedRevision": status["pinnedRevision"]} if "pinnedRevision" in status else {}),
            "conditions": _listed(status.get("conditions")),
        }
        own = {k: o for k, o in observed.items() if k not in legacy}
        rsp = RUNNER.run(
            run_function_request(shard, observed=own, required=_named(clusters, names))
        )
        staged.update(rsp.desired.resources)
        asked.append(rsp)
        shard["status"] = with_status(shard, rsp)["status"]
        observed_shards[key] = shard
    final = RUNNER.run(
        run_function_request(xr, observed={**legacy, **observed_shards}, required=required)
    )
    merged = fnv1.RunFunctionResponse()
    merged.CopyFrom(final)
    for key in shards:
        del merged.desired.resources[key]
    for key, composed in staged.items():
        merged.desired.resources[key].CopyFrom(composed)
    # The cache is looked at again as soon as the first of it and its shards is.
    ttls = [r.meta.ttl.ToTimedelta() for r in (final, *asked) if r.meta.HasField("ttl")]
    if ttls:
        merged.meta.ttl.FromTimedelta(min(ttls))
    return _checked(xr, merged, validate)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _named(clusters: list[dict[str, Any]] | None, names: list[str]) -> dict[str, list[Any]] | None:
    """What Crossplane resolves for a shard's requirements: each of its clusters by name
    (nothing yet while the ModelCache's are not resolved either)."""
    if clusters is None:
        return None
    by_name = {c["metadata"]["name"]: c for c in clusters}
    return {cluster_requirement(n): [by_name[n]] if n in by_name else [] for n in names}


def _shard_of(xr: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    """The shard that composed the Objects under `keys`, as the ModelCache observes it."""
    clusters = sorted({_cluster_part(k) for k in keys})
    return {
        "apiVersion": xr["apiVersion"],
        "kind": SHARD,
        "metadata": {"name": f"{xr['metadata']['name']}-shard-0", "namespace": _ns(xr)},
        "spec": {
            "cacheName": xr["metadata"]["name"],
            "cache": {k: v for k, v in xr.get("spec", {}).items() if k != "clusterSelector"},
            "clusters": [{"name": c} for c in clusters],
        },
    }


def _ns(xr: dict[str, Any]) -> str:
    return xr.get("metadata", {}).get("namespace") or "default"


def _checked(
    xr: dict[str, Any], rsp: fnv1.RunFunctionResponse, validate: bool
) -> fnv1.RunFunctionResponse:
    if validate:
        for key, obj in desired_resources(rsp).items():
            # Crossplane names composed resources itself; give them one to validate.
            assert_valid(obj | {"metadata": {"name": key, "namespace": _ns(xr)}})
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
