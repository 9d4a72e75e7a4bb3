"""Usages an earlier release composed on the replica (`by` the replica itself) are retired
without a deadlock: composed again with a `by` that names nothing that exists (none for the
cache's; an impossible ModelReplica name for the cluster's cross-namespace one, which Crossplane's
schema requires to have a `by`), left out once observed so, and held as they are by a response
that holds everything. Every composed Usage is validated against Crossplane's CRD."""

from typing import Any

import pytest
from compose_model_replica.core import WORKLOAD
from modelfleet_devtools.requests import desired_resources
from replica_world import model_cache, replica, run, running

CACHE_USAGE, CLUSTER_USAGE = "model-cache-usage", "inference-cluster-usage"
OF = {
    CACHE_USAGE: {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "resourceRef": {"name": "kimi-k2"},
    },
    CLUSTER_USAGE: {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "resourceRef": {"name": "gke-us", "namespace": ""},
    },
}
BY = {
    "apiVersion": "modelfleet.io/v1alpha1",
    "kind": "ModelReplica",
    "resourceRef": {"name": "kimi-k2-gke-us"},
}


LIVE, RETIRED = "the replica", "retired"
# What a Usage's `by` names, as the test reads it.
RETIRED_BY = {**BY, "resourceRef": {"name": "Retired-kimi-k2-gke-us"}}


def legacy_usage(key: str, *, by: str) -> dict[str, Any]:
    """A Usage as the previous release composed it on the replica (`by` LIVE), or as retired
    (RETIRED), as observed."""
    spec: dict[str, Any] = {"of": OF[key], "reason": f"in use ({key})", "replayDeletion": True}
    if by == LIVE:
        spec["by"] = BY
    elif key == CLUSTER_USAGE:
        spec["by"] = RETIRED_BY
    return {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {
            "name": f"kimi-k2-gke-us-{key[:5]}",
            "labels": {
                "modelfleet.io/modelreplica": "kimi-k2-gke-us",
                "modelfleet.io/namespace": "ml-team",
                "crossplane.io/composite": "kimi-k2-gke-us",
            },
        },
        "spec": spec,
    }


def named_by(usage: dict[str, Any]) -> str | None:
    """What the Usage's `by` names: LIVE, RETIRED (nothing that can exist) or None (no `by`)."""
    by = usage["spec"].get("by")
    if by is None:
        return None
    return LIVE if by == BY else RETIRED if by == RETIRED_BY else repr(by)


# (case, the cache's phase (None: not resolved yet), the legacy Usages observed (key -> what
# `by` names), what is desired of them (key -> what `by` names; absent: left out))
CASES = [
    (
        "serving: both still name the replica: composed again retired",
        "Ready",
        {CACHE_USAGE: LIVE, CLUSTER_USAGE: LIVE},
        {CACHE_USAGE: None, CLUSTER_USAGE: RETIRED},
    ),
    (
        "serving: both retired: left out, deleted without a wait",
        "Ready",
        {CACHE_USAGE: RETIRED, CLUSTER_USAGE: RETIRED},
        {},
    ),
    (
        "one of each: the live one is retired, the retired one goes",
        "Ready",
        {CACHE_USAGE: LIVE, CLUSTER_USAGE: RETIRED},
        {CACHE_USAGE: None},
    ),
    (
        "the cache not Ready (the workload kept): still retired",
        "Hydrating",
        {CLUSTER_USAGE: LIVE},
        {CLUSTER_USAGE: RETIRED},
    ),
    (
        "the cache not resolved yet: everything held as it is",
        None,
        {CACHE_USAGE: LIVE, CLUSTER_USAGE: RETIRED},
        {CACHE_USAGE: LIVE, CLUSTER_USAGE: RETIRED},
    ),
]


@pytest.mark.parametrize(
    ("cache_phase", "observed_usages", "desired_usages"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_legacy_usages_are_retired_without_a_wait(
    cache_phase: str | None,
    observed_usages: dict[str, str],
    desired_usages: dict[str, str | None],
) -> None:
    xr = replica()
    observed = {
        **running(xr),
        **{key: legacy_usage(key, by=by) for key, by in observed_usages.items()},
    }
    cache = model_cache(cache_phase) if cache_phase else None
    desired = desired_resources(run(xr, cache=cache, observed=observed))
    usages = {k: v for k, v in desired.items() if v.get("kind") == "Usage"}
    assert {k: named_by(u) for k, u in usages.items()} == desired_usages
    for key, usage in usages.items():
        # Still protecting what it protected, as it did.
        assert usage["spec"]["of"] == OF[key]
        assert usage["spec"]["reason"] == f"in use ({key})"
        assert usage["spec"]["replayDeletion"] is True
        assert usage["metadata"]["labels"]["modelfleet.io/modelreplica"] == "kimi-k2-gke-us"
    assert WORKLOAD in desired  # serving goes on


def test_a_replica_without_legacy_usages_composes_no_usage() -> None:
    xr = replica()
    desired = desired_resources(run(xr, cache=model_cache("Ready"), observed=running(xr)))
    assert not [k for k, v in desired.items() if v.get("kind") == "Usage"]
