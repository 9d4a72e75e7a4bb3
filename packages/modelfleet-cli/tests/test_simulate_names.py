"""Composed resources' names in simulation are Crossplane's: derived from the XR's UID and the
composition resource name, never one XR's resource stored over another's: a name
taken (two 5-hex-digit suffixes colliding) is derived again, as Crossplane does."""

import sys
from pathlib import Path

import pytest
from modelfleet_cli.composed import ANNOTATION_RESOURCE_NAME
from modelfleet_cli.discovery import repository_compositions
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.clusters import workload_clusters
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_cli.simulate.control_plane import ControlPlane
from modelfleet_cli.simulate.fleet import load_fleet
from modelfleet_cli.simulate.names import (
    MAX_TRIES,
    RANDOM_ALPHABET,
    NameGenerationError,
    child_name,
    composed_name,
    controller_conflict,
)
from modelfleet_contracts.api import MODEL_CACHE_SHARD

sys.path.insert(0, str(Path(__file__).parent))
from quickstart_fleet import write_quickstart_fleet
from simulate_runs import simulate_with_timeline

UID = "75e4a668-035f-4ce8-8c45-f4d3ac850155"

# Crossplane's own expectations for names.ChildName (internal/names/names_test.go, v2.3.4).
CHILD_NAMES = [
    pytest.param("cool-resource-", UID, "database", "cool-resource-38ce86992a27", id="fits"),
    pytest.param("resource", UID, "database", "resource-38ce86992a27", id="dash added"),
    pytest.param(
        "very-long-parent-name-" * 3,
        UID,
        "database",
        "very-long-parent-name-very-long-parent-name-very-l-38ce86992a27",
        id="long prefix cut to 63 characters",
    ),
    pytest.param(
        "very-long-parent-name-without-ending-hyphen" * 2,
        UID,
        "database",
        "very-long-parent-name-without-ending-hyphenvery-lo-38ce86992a27",
        id="long prefix cut, dash added",
    ),
    pytest.param("", UID, "database", "38ce86992a27", id="no prefix"),
    pytest.param("parent-", "uid-123", "database", "parent-5f968d238736", id="one XR"),
    pytest.param("parent-", "uid-456", "database", "parent-bd4f105d0576", id="another XR"),
]


@pytest.mark.parametrize(("prefix", "uid", "resource", "expected"), CHILD_NAMES)
def test_child_names_are_crossplanes(prefix, uid, resource, expected):
    assert child_name(prefix, uid, resource) == expected


def composed(uid: str | None, resource: str | None = "gke-dev-claim") -> dict:
    metadata: dict = {"generateName": "qwen3-0-6b-"}
    if resource:
        metadata["annotations"] = {ANNOTATION_RESOURCE_NAME: resource}
    if uid:
        metadata["ownerReferences"] = [{"uid": uid, "controller": True, "kind": "ModelCache"}]
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": metadata,
    }


def test_a_resource_with_a_controller_uid_gets_its_child_name_whatever_is_taken():
    """Crossplane tries the child name once: it is the resource's own, taken or not."""
    name = composed_name(composed("cp-00007"), "owner", taken=lambda _: True)
    assert name == child_name("qwen3-0-6b-", "cp-00007", "gke-dev-claim")


def test_without_a_controller_uid_a_generated_name_is_retried_until_free():
    taken: set[str] = set()
    first = composed_name(composed(None), "owner", taken.__contains__)
    assert first.startswith("qwen3-0-6b-") and len(first) == len("qwen3-0-6b-") + 5
    assert set(first.removeprefix("qwen3-0-6b-")) <= set(RANDOM_ALPHABET)
    assert composed_name(composed(None), "owner", taken.__contains__) == first, "repeatable"
    taken.add(first)
    second = composed_name(composed(None), "owner", taken.__contains__)
    assert second != first and second.startswith("qwen3-0-6b-")


def test_when_every_try_is_taken_the_reconcile_fails_with_crossplanes_words():
    tried: list[str] = []
    with pytest.raises(NameGenerationError, match='composed resource "gke-dev-claim"'):
        composed_name(composed(None), "owner", lambda n: tried.append(n) or True)
    assert len(tried) == MAX_TRIES


CONFLICTS = [
    pytest.param("cp-1", "cp-1", False, id="our own object: updated"),
    pytest.param(None, "cp-1", False, id="no controller yet: adopted"),
    pytest.param("cp-2", "cp-1", True, id="another XR's object: refused"),
]


@pytest.mark.parametrize(("existing", "applied", "refused"), CONFLICTS)
def test_the_api_server_refuses_a_second_controller(existing, applied, refused):
    message = controller_conflict(composed(existing), composed(applied))
    assert bool(message) == refused
    if refused:
        assert "Only one reference can have Controller set to true" in str(message)


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def test_another_xrs_object_under_the_name_is_kept_and_the_xr_is_warned(functions, tmp_path):
    """Were a name taken by another XR's object, the API server keeps that object; the XR
    gets Crossplane's Warning and its resource is not created over it."""
    fleet = load_fleet(write_quickstart_fleet(tmp_path, ["gke-dev"], ["qwen3-0-6b"]))
    plane = ControlPlane(
        fleet, repository_compositions(), functions, workload_clusters(fleet, {}), []
    )
    plane.run_round()  # the cache composes its shard; the cluster is not connected yet
    [shard] = [o for k, o in plane.store.items() if k[1] == MODEL_CACHE_SHARD]
    taken = composed(None, resource=None)
    taken["metadata"] = {
        # Crossplane names what an XR composes after the root XR, with the XR's own UID.
        "name": child_name("qwen3-0-6b-", shard["metadata"]["uid"], "gke-dev-claim"),
        "namespace": "ml-team",
        "ownerReferences": [{"uid": "someone-else", "controller": True, "kind": "ModelCache"}],
    }
    taken["spec"] = {"forProvider": {"manifest": {"kind": "ConfigMap"}}}
    key = plane._put(taken)
    for _ in range(2):
        plane.run_round()
    assert plane.store[key]["spec"] == {"forProvider": {"manifest": {"kind": "ConfigMap"}}}
    warnings = [e.message for e in plane.events if e.severity == "Warning"]
    assert any(w.startswith('cannot apply composed resource "gke-dev-claim"') for w in warnings)
    assert plane.losses == []


# c041-claim and c326-claim of ModelCache ml-team/qwen3-0-6b derive the same first name
# (both a0afa: the first 5 hex digits of sha256("<XR key>/<resource>")), so c041's claim is
# named again: the smallest fleet with such a collision. Among c000, c001, ... it
# takes 129 clusters x 10 models; quickstart copies of 300 clusters x 10 models run in the
# simulate benchmark (packages/modelfleet-cli/benchmarks), too slow for the suite.
FLEETS = [
    pytest.param(["c041", "c326"], ["qwen3-0-6b"], id="2 clusters whose claims' old names collide"),
]


@pytest.mark.parametrize(("clusters", "models"), FLEETS)
def test_a_fleet_of_quickstart_copies_reaches_ready_without_losing_a_claim(
    functions, tmp_path, clusters, models
):
    timeline, result = simulate_with_timeline(
        functions, write_quickstart_fleet(tmp_path, clusters, models)
    )
    assert result["result"] == "Ready", result["reason"]
    assert result["losses"] == [] and "LOST" not in timeline
    for cluster in clusters:
        claims = [
            o
            for o in result["clusters"][cluster]["objects"]
            if o["kind"] == "PersistentVolumeClaim"
        ]
        assert len(claims) == len(models), cluster
