"""The Usages a ModelDeployment composes for each of its ModelReplicas: the ModelCache and the
InferenceCluster a replica uses cannot be deleted while it uses them, and a replica dropped
(scale-down, a selector change, a move) takes its Usages with it in the same response."""

import copy
from typing import Any

import pytest
from compose_model_deployment.usage import replica_usages
from deployment_world import (
    RUNNER,
    cache_on,
    deployment,
    desired_replicas,
    desired_usages,
    schedule,
)
from healing_world import Fleet
from modelfleet_contracts.naming import remote_name
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request
from modelfleet_devtools.validation import assert_valid, require_shared_schemas, validate_manifest
from modelfleet_devtools.world import inference_cluster, observed_object

US, EU = inference_cluster("gke-us"), inference_cluster("gke-eu")
CACHED = {"modelCacheRef": {"name": "kimi-k2"}}
REPLICA_US = remote_name("kimi-k2", "gke-us")  # the name the deployment gives its replica
US_CACHE, US_CLUSTER = "replica-gke-us-cache-usage", "replica-gke-us-cluster-usage"
EU_CACHE, EU_CLUSTER = "replica-gke-eu-cache-usage", "replica-gke-eu-cluster-usage"


def observed(rsp: Any) -> dict[str, dict[str, Any]]:
    """Everything the response composes, as Crossplane would observe it next call."""
    return {k: observed_object(r, ready=True) for k, r in desired_resources(rsp).items()}


def protected(usages: dict[str, dict[str, Any]]) -> dict[str, tuple[str, str, str]]:
    """Usage key -> (kind of, name of, ModelReplica by)."""
    return {
        key: (
            u["spec"]["of"]["kind"],
            u["spec"]["of"]["resourceRef"]["name"],
            u["spec"]["by"]["resourceRef"]["name"],
        )
        for key, u in usages.items()
    }


def test_each_replica_gets_a_usage_of_its_cache_and_of_its_cluster_by_itself():
    rsp = schedule(deployment(replicas=2, **CACHED), [US, EU], cache=cache_on("gke-us", "gke-eu"))
    replicas = desired_replicas(rsp)
    # `by` names each ModelReplica as the deployment names it.
    us, eu = (replicas[f"replica-{c}"]["metadata"]["name"] for c in ("gke-us", "gke-eu"))
    assert us == REPLICA_US
    assert protected(desired_usages(rsp)) == {
        US_CACHE: ("ModelCache", "kimi-k2", us),
        US_CLUSTER: ("InferenceCluster", "gke-us", us),
        EU_CACHE: ("ModelCache", "kimi-k2", eu),
        EU_CLUSTER: ("InferenceCluster", "gke-eu", eu),
    }
    # Nothing else is composed: the replicas and their Usages.
    assert set(desired_resources(rsp)) == set(replicas) | set(desired_usages(rsp))


def test_the_usages_say_what_they_protect_and_replay_a_refused_deletion():
    usages = desired_usages(schedule(deployment(**CACHED), [US], cache=cache_on("gke-us")))
    cache, cluster = usages[US_CACHE], usages[US_CLUSTER]
    for usage in (cache, cluster):
        assert usage["apiVersion"] == "protection.crossplane.io/v1beta1"
        assert usage["kind"] == "Usage"
        assert usage["spec"]["by"] == {
            "apiVersion": "modelfleet.io/v1alpha1",
            "kind": "ModelReplica",
            "resourceRef": {"name": REPLICA_US},
        }
        # A refused deletion is carried out once the replica (and so the Usage) is gone.
        assert usage["spec"]["replayDeletion"] is True
        assert usage["metadata"]["labels"] == {
            "modelfleet.io/modeldeployment": "kimi-k2",
            "modelfleet.io/modelreplica": REPLICA_US,
            "modelfleet.io/namespace": "ml-team",
            "modelfleet.io/cluster": "gke-us",
        }
    assert cache["spec"]["of"] == {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "resourceRef": {"name": "kimi-k2"},
    }
    assert cache["spec"]["reason"] == (
        f"ModelReplica ml-team/{REPLICA_US} serves from this cache on cluster gke-us; "
        "delete or scale down the ModelDeployment first"
    )
    # The explicit empty namespace names the cluster-scoped InferenceCluster: without it
    # Crossplane would look for an InferenceCluster in the Usage's namespace, and find none.
    assert cluster["spec"]["of"] == {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "resourceRef": {"name": "gke-us", "namespace": ""},
    }
    assert cluster["spec"]["reason"] == (
        f"ModelReplica ml-team/{REPLICA_US} serves on this cluster; delete the "
        "ModelDeployment or move it off the cluster first"
    )


def test_the_usages_validate_against_crossplanes_crd():
    require_shared_schemas()
    usages = desired_usages(schedule(deployment(**CACHED), [US], cache=cache_on("gke-us")))
    for usage in usages.values():
        # Crossplane names composed resources and puts them in the XR's namespace.
        assert_valid(
            usage | {"metadata": {**usage["metadata"], "name": "x", "namespace": "ml-team"}}
        )
    # The same check rejects what Crossplane's CRD rejects (CEL included), so it can fail.
    stray = copy.deepcopy(usages[US_CACHE])
    del stray["spec"]["by"], stray["spec"]["reason"]
    stray["spec"]["of"]["resourceRef"]["namespace"] = "other-team"
    errors = " ".join(validate_manifest(stray | {"metadata": {"name": "x"}}))
    assert 'either "spec.by" or "spec.reason" must be specified' in errors
    assert 'cross-namespace "spec.of" is not allowed without "spec.by"' in errors


UNRESOLVED = object()  # the requirement was not resolved in this call

# (scenario, deployment spec, clusters, cache, the Usages composed or kept)
CASES = [
    (
        "cache Ready: both protected",
        CACHED,
        [US],
        cache_on("gke-us"),
        {US_CACHE, US_CLUSTER},
    ),
    (
        "cache still staging: protected before the replica serves",
        CACHED,
        [US],
        cache_on("gke-us", phase="Hydrating"),
        {US_CACHE, US_CLUSTER},
    ),
    (
        "cluster disconnected, replica kept: both protected all the same",
        CACHED,
        [inference_cluster("gke-us", connected=False)],
        cache_on("gke-us"),
        {US_CACHE, US_CLUSTER},
    ),
    (
        "cache not found: everything held, the Usages kept",
        CACHED,
        [US],
        None,
        {US_CACHE, US_CLUSTER},
    ),
    (
        "cache unresolved: everything held, the Usages kept",
        CACHED,
        [US],
        UNRESOLVED,
        {US_CACHE, US_CLUSTER},
    ),
    (
        "clusters unresolved: everything held, the Usages kept",
        CACHED,
        UNRESOLVED,
        cache_on("gke-us"),
        {US_CACHE, US_CLUSTER},
    ),
    (
        "invalid spec: everything held, the Usages kept",
        {**CACHED, "engine": {"framework": "Custom"}},
        [US],
        cache_on("gke-us"),
        {US_CACHE, US_CLUSTER},
    ),
    ("modelCacheRef removed: the cache's Usage goes", {}, [US], None, {US_CLUSTER}),
    (
        "cluster deleted: its replica goes, and its Usages with it",
        CACHED,
        [],
        cache_on("gke-us"),
        set(),
    ),
]


@pytest.mark.parametrize(
    ("spec", "clusters", "cache", "composed"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_the_usages_of_a_placed_replica_through_what_can_happen_next(
    spec, clusters, cache, composed
):
    """From a replica placed on gke-us with both Usages observed, one call later."""
    first = schedule(deployment(**CACHED), [US], cache=cache_on("gke-us"))
    assert set(desired_usages(first)) == {US_CACHE, US_CLUSTER}
    xr = deployment(**spec)
    xr["status"] = desired_status(first)
    required: dict[str, Any] = {"model-replicas": []}
    if clusters is not UNRESOLVED:
        required["inference-clusters"] = clusters
    if cache is not UNRESOLVED and "modelCacheRef" in spec:
        required["model-cache"] = [cache] if cache else []
    rsp = RUNNER.run(run_function_request(xr, observed=observed(first), required=required))
    assert set(desired_usages(rsp)) == composed
    # A replica composed or kept keeps its cluster's Usage; a Usage never outlives its replica.
    replicas = {r["metadata"]["name"] for r in desired_replicas(rsp).values()}
    assert {by for _, _, by in protected(desired_usages(rsp)).values()} <= replicas
    assert (US_CLUSTER in composed) == bool(replicas)


def test_scaling_down_drops_the_replica_and_its_usages_in_the_same_response():
    clusters, cache = [US, EU], cache_on("gke-us", "gke-eu")
    two = schedule(deployment(replicas=2, **CACHED), clusters, cache=cache)
    assert set(desired_usages(two)) == {US_CACHE, US_CLUSTER, EU_CACHE, EU_CLUSTER}
    one = schedule(deployment(replicas=1, **CACHED), clusters, cache=cache, observed=observed(two))
    [kept] = desired_replicas(one).values()
    assert {by for _, _, by in protected(desired_usages(one)).values()} == {
        kept["metadata"]["name"]
    }
    assert len(desired_usages(one)) == 2


def test_observed_usages_are_not_read_as_replicas():
    clusters, cache = [US, EU], cache_on("gke-us", "gke-eu")
    xr = deployment(replicas=2, **CACHED)
    first = schedule(xr, clusters, cache=cache)
    with_usages = schedule(xr, clusters, cache=cache, observed=observed(first))
    only_replicas = {k: v for k, v in observed(first).items() if v["kind"] == "ModelReplica"}
    without = schedule(xr, clusters, cache=cache, observed=only_replicas)
    assert desired_status(with_usages) == desired_status(without)
    assert desired_replicas(with_usages) == desired_replicas(without)


def test_a_move_keeps_the_leaving_replicas_usages_until_it_goes_then_drops_them_with_it():
    f = Fleet(
        clusters={n: inference_cluster(n) for n in ("a", "b")},
        cache={"a": "Ready", "b": "Ready"},
        serving={"a": 1},
    )
    f.reconcile()
    both = {"ModelCache", "InferenceCluster"}
    a, b = remote_name("kimi-k2", "a"), remote_name("kimi-k2", "b")
    assert f.used_by() == {a: both}
    f.cache["a"] = "Failed"
    f.reconcile()
    f.wait(61)
    f.reconcile()  # moving: b's replica is made before a's is broken
    assert f.placement() == {"a": 1, "b": 1}
    assert f.used_by() == {a: both, b: both}
    f.serving["b"] = 1
    f.reconcile()  # a's replica is dropped, and its Usages with it
    assert f.placement() == {"b": 1}
    assert f.used_by() == {b: both}


def test_a_usage_whose_cluster_is_not_found_is_kept_while_its_replica_is():
    """The core composes a replica's Usages from what it reads this call: a cluster not found
    keeps the observed Usage of it; the cache's Usage needs only the reference."""
    replicas = {"replica-a": ("kimi-k2-a", "a")}
    desired, kept = replica_usages(
        deployment="kimi-k2",
        namespace="ml-team",
        replicas=replicas,
        cache="kimi-k2",
        clusters=set(),
        observed={"replica-a-cluster-usage"},
    )
    assert set(desired) == {"replica-a-cache-usage"} and kept == ["replica-a-cluster-usage"]
    desired, kept = replica_usages(
        deployment="kimi-k2",
        namespace="ml-team",
        replicas=replicas,
        cache=None,
        clusters=set(),
        observed=set(),
    )
    assert desired == {} and kept == []
