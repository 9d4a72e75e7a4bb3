"""The cross-function contracts, as the functions on both sides rely on them."""

import re
from dataclasses import replace

import pytest
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.clusters import matches_selector, read_cluster, select
from modelfleet_contracts.conditions import Status, listed
from modelfleet_contracts.edge.report import report, set_composite_ready
from modelfleet_contracts.labels import owner_labels
from modelfleet_contracts.models.modelcache import ModelCacheSpec
from modelfleet_contracts.models.modeldeployment import ModelDeploymentSpec
from modelfleet_contracts.mounts import MODEL_MOUNT_PATH, mounted_model_path
from modelfleet_contracts.naming import cache_claim_name, remote_name, workload_name
from modelfleet_contracts.objects import (
    EXTERNAL_NAME_ANNOTATION,
    OBSERVE_ONLY,
    PVC_BOUND,
    kubernetes_object,
    secret_key_patch,
)
from modelfleet_devtools.requests import events
from modelfleet_devtools.world import inference_cluster

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        ("ml-team", "kimi-k2"),
        ("ml-team", "Qwen3.0.6B"),
        ("a" * 63, "b" * 253),
        ("team", "----"),
        ("", ""),
    ],
    ids=["plain", "dots and capitals", "longest names", "only dashes", "empty"],
)
def test_remote_names_are_dns_labels_of_at_most_63_characters(namespace, name):
    for remote in (cache_claim_name(namespace, name), workload_name(namespace, name)):
        assert len(remote) <= 63 and DNS_LABEL.match(remote), remote


def test_two_teams_caches_of_the_same_name_never_share_a_claim():
    assert cache_claim_name("team-a", "llama") != cache_claim_name("team-b", "llama")


def test_names_that_sanitise_alike_still_differ():
    assert remote_name("model", "a.b") != remote_name("model", "a-b")


def test_names_are_stable_across_releases():
    # Changing these re-creates every PVC and workload on every cluster.
    assert cache_claim_name("ml-team", "kimi-k2") == "modelcache-ml-team-kimi-k2-fd904"


def test_owner_labels_name_the_xr_and_its_namespace():
    assert owner_labels("ModelCache", "kimi-k2", "ml-team") == {
        "modelfleet.io/modelcache": "kimi-k2",
        "modelfleet.io/namespace": "ml-team",
    }
    assert owner_labels("InferenceCluster", "gke-us") == {
        "modelfleet.io/inferencecluster": "gke-us"
    }


@pytest.mark.parametrize(
    ("path", "mounted"),
    [
        ("", MODEL_MOUNT_PATH),
        ("abc123", "/mnt/models/abc123"),
        ("/cache/abc/", "/mnt/models/cache/abc"),
    ],
)
def test_weights_are_found_under_the_mount_path(path, mounted):
    assert mounted_model_path(path) == mounted


def test_an_object_wraps_the_manifest_for_the_clusters_provider_config():
    manifest = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}}
    obj = kubernetes_object(
        manifest,
        "gke-us",
        labels={"modelfleet.io/modelcache": "kimi"},
        readiness_query=PVC_BOUND,
        management_policies=OBSERVE_ONLY,
        references=[secret_key_patch("hf-token", "HF_TOKEN", "HF_TOKEN")],
    )
    assert obj["apiVersion"] == "kubernetes.m.crossplane.io/v1alpha1" and obj["kind"] == "Object"
    spec = obj["spec"]
    assert spec["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "gke-us"}
    assert spec["forProvider"]["manifest"] == manifest
    assert spec["readiness"] == {"policy": "DeriveFromCelQuery", "celQuery": PVC_BOUND}
    assert spec["managementPolicies"] == ["Observe"]
    assert spec["references"][0]["patchesFrom"]["fieldPath"] == "data.HF_TOKEN"
    assert spec["references"][0]["toFieldPath"] == "data.HF_TOKEN"
    assert "watch" not in spec  # polled unless asked
    assert kubernetes_object(manifest, "gke-us", watch=True)["spec"]["watch"] is True


def test_an_objects_external_name_is_its_remote_objects_name():
    """Composed, so provider-kubernetes never writes one of its own on a new Object."""
    named = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "modelfleet"}}
    obj = kubernetes_object(named, "gke-us", labels={"modelfleet.io/modelcache": "kimi"})
    assert obj["metadata"]["annotations"] == {EXTERNAL_NAME_ANNOTATION: "modelfleet"}
    assert obj["metadata"]["labels"] == {"modelfleet.io/modelcache": "kimi"}
    unnamed = {"apiVersion": "v1", "kind": "Namespace", "metadata": {}}
    assert "metadata" not in kubernetes_object(unnamed, "gke-us")


@pytest.mark.parametrize(
    ("labels", "selector", "matches"),
    [
        ({"region": "us"}, None, True),
        ({"region": "us"}, {}, True),
        ({"region": "us"}, {"matchLabels": {"region": "us"}}, True),
        ({"region": "eu"}, {"matchLabels": {"region": "us"}}, False),
        (
            {"region": "us"},
            {"matchExpressions": [{"key": "region", "operator": "In", "values": ["us", "eu"]}]},
            True,
        ),
        (
            {"region": "us"},
            {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["us"]}]},
            False,
        ),
        ({}, {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}, False),
        ({}, {"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}, True),
    ],
    ids=[
        "no selector",
        "empty selector",
        "label matches",
        "label differs",
        "In",
        "NotIn",
        "Exists without the label",
        "DoesNotExist without the label",
    ],
)
def test_cluster_selectors_follow_kubernetes_label_selector_rules(labels, selector, matches):
    assert matches_selector(labels, selector) is matches


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        (None, ["a-eu", "b-us", "c-us"]),
        ({}, ["a-eu", "b-us", "c-us"]),
        ({"matchLabels": {"region": "us"}}, ["b-us", "c-us"]),
        (
            {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["us"]}]},
            ["a-eu"],
        ),
    ],
    ids=["no selector", "empty selector", "matchLabels", "matchExpressions"],
)
def test_one_selection_serves_the_cache_and_the_deployment(selector, selected):
    """Both XRs' `spec.clusterSelector` (each its own generated model) select the same
    clusters, by name, and never an InferenceCluster without a name."""
    fleet = [
        read_cluster(inference_cluster(name, labels={"region": name.split("-")[1]}))
        for name in ("c-us", "a-eu", "b-us")
    ]
    fleet.append(replace(fleet[0], name=""))
    cache = ModelCacheSpec.model_validate({"source": "S3", "clusterSelector": selector})
    deployment = ModelDeploymentSpec.model_validate({"clusterSelector": selector})
    for given in (selector, cache.clusterSelector, deployment.clusterSelector):
        assert [v.name for v in select(fleet, given)] == selected


@pytest.mark.parametrize(
    ("cluster", "reachable", "shared_storage"),
    [
        (inference_cluster("gke-us"), True, True),
        (inference_cluster("gke-us", connected=False), False, True),
        (inference_cluster("gke-us", storage_class=None), True, False),
        (inference_cluster("gke-us", storage_ready=False), True, False),
    ],
    ids=["connected with RWX storage", "not connected", "no storage", "storage not ready"],
)
def test_a_cluster_is_read_only_from_what_was_observed(cluster, reachable, shared_storage):
    view = read_cluster(cluster)
    assert view.reachable is reachable
    assert view.has_shared_storage is shared_storage
    assert view.workload_namespace == ("modelfleet" if reachable else None)


def _response() -> fnv1.RunFunctionResponse:
    return response.to(fnv1.RunFunctionRequest())


def test_conditions_emit_events_on_transitions_only():
    staged = Status.true("ArtifactReady", "Staged", "staged on 2 cluster(s)")
    failed = Status.false("ArtifactReady", "Failed", "hydration failed on gke-us")
    hydrating = Status.false("ArtifactReady", "Hydrating", "staging")
    xr_staged = {
        "status": {"conditions": [{"type": "ArtifactReady", "status": "True", "reason": "Staged"}]}
    }

    cases = [
        ({}, staged, [("Normal", "ArtifactReady Staged: staged on 2 cluster(s)")]),
        (xr_staged, staged, []),
        (xr_staged, failed, [("Warning", "ArtifactReady Failed: hydration failed on gke-us")]),
        (xr_staged, hydrating, [("Normal", "ArtifactReady Hydrating: staging")]),
    ]
    for observed_xr, condition, expected in cases:
        rsp = _response()
        report(rsp, observed_xr, condition, progress_reasons=frozenset({"Hydrating"}))
        assert events(rsp) == expected
        assert [c.type for c in rsp.conditions] == ["ArtifactReady"]


def test_composite_readiness_is_always_explicit():
    rsp = _response()
    set_composite_ready(rsp, False)
    assert rsp.desired.composite.ready == fnv1.READY_FALSE
    set_composite_ready(rsp, True)
    assert rsp.desired.composite.ready == fnv1.READY_TRUE


@pytest.mark.parametrize(
    ("items", "limit", "shown"),
    [
        pytest.param([], 3, "", id="nothing"),
        pytest.param(["gke-us"], 3, "gke-us", id="one"),
        pytest.param(["a", "b", "c"], 3, "a, b, c", id="as many as the limit: all named"),
        pytest.param(["a", "b", "c", "d", "e"], 3, "a, b, c and 2 more", id="past it: counted"),
    ],
)
def test_a_list_in_a_message_names_so_many_and_counts_the_rest(items, limit, shown):
    assert listed(items, limit) == shown
