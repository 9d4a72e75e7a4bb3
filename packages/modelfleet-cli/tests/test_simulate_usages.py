"""Crossplane Usages in the simulated control plane: deleting a resource in use is refused
and the user is told who uses it; with replayDeletion the refused deletion happens once the
last Usage is gone — as Crossplane's admission webhook and Usage controller do."""

from typing import Any

import pytest
from modelfleet_cli.discovery import repository_compositions
from modelfleet_cli.simulate.control_plane import START, ControlPlane
from modelfleet_cli.simulate.fleet import Fleet
from modelfleet_cli.simulate.objects import Key, key_of
from modelfleet_cli.simulate.usages import mark_configured
from modelfleet_contracts.conditions import condition_true

CACHE: Key = ("modelfleet.io/v1alpha1", "ModelCache", "ml-team", "kimi-k2")
CLUSTER: Key = ("modelfleet.io/v1alpha1", "InferenceCluster", "", "gke-us")


def xr(key: Key) -> dict[str, Any]:
    metadata = {"name": key[3], **({"namespace": key[2]} if key[2] else {})}
    return {"apiVersion": key[0], "kind": key[1], "metadata": metadata, "spec": {}}


def usage(
    name: str,
    *,
    of: str = "kimi-k2",
    kind: str = "ModelCache",
    namespace: str = "ml-team",
    usage_kind: str = "Usage",
    replay: bool = True,
    by: str | None = "kimi-k2-gke-us",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "of": {"apiVersion": "modelfleet.io/v1alpha1", "kind": kind, "resourceRef": {"name": of}},
        "replayDeletion": replay,
    }
    if by:
        spec["by"] = {
            "apiVersion": "modelfleet.io/v1alpha1",
            "kind": "ModelReplica",
            "resourceRef": {"name": by},
        }
    else:
        spec["reason"] = "production weights"
    metadata = {"name": name, **({"namespace": namespace} if usage_kind == "Usage" else {})}
    return {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": usage_kind,
        "metadata": metadata,
        "spec": spec,
    }


def never_called(name: str, req: Any) -> Any:
    raise AssertionError("no function runs in these scenarios")


def plane(*usages: dict[str, Any]) -> ControlPlane:
    """A control plane holding the ModelCache, the InferenceCluster and `usages`."""
    cp = ControlPlane(
        Fleet(xrs=[xr(CACHE), xr(CLUSTER)]), repository_compositions(), never_called, {}
    )
    for obj in usages:
        cp.store[key_of(obj)] = obj
    return cp


def delete_usage(cp: ControlPlane, name: str, namespace: str = "ml-team") -> None:
    assert cp.delete(("protection.crossplane.io/v1beta1", "Usage", namespace, name), "test")


DELETIONS = [
    pytest.param([], CACHE, None, id="not in use: deleted"),
    pytest.param(
        [usage("u1")],
        CACHE,
        "in-use by 1 usage(s), including the Usage ml-team/u1 by resource "
        "ModelReplica/kimi-k2-gke-us",
        id="used by a replica: refused, naming the replica",
    ),
    pytest.param(
        [usage("u1", by=None)],
        CACHE,
        "with reason: production weights",
        id="protected with a reason: refused, giving the reason",
    ),
    pytest.param([usage("u1"), usage("u2")], CACHE, "in-use by 2 usage(s)", id="two Usages"),
    pytest.param(
        [usage("u1", namespace="other-team")],
        CACHE,
        None,
        id="a same-named cache of another namespace is in use: deleted",
    ),
    pytest.param(
        [usage("u1", kind="ModelDeployment")], CACHE, None, id="another kind is in use: deleted"
    ),
    pytest.param(
        [usage("c1", of="gke-us", kind="InferenceCluster", usage_kind="ClusterUsage")],
        CLUSTER,
        "in-use by 1 usage(s), including the ClusterUsage c1",
        id="a ClusterUsage of a cluster-scoped InferenceCluster: refused",
    ),
]


@pytest.mark.parametrize(("usages", "target", "refused"), DELETIONS)
def test_deleting_an_object_in_use_is_refused_and_the_user_told(usages, target, refused):
    cp = plane(*usages)
    deleted = cp.delete(target, "kubectl delete")
    assert deleted is (refused is None)
    assert (target in cp.store) is (refused is not None)
    if refused is None:
        assert cp.refusals == []
        return
    [refusal] = cp.refusals
    assert refusal.message.startswith("deletion refused (kubectl delete): This resource is in-use")
    assert refused in refusal.message
    assert any(e.severity == "Warning" and e.message == refusal.message for e in cp.events)


def test_a_refused_deletion_is_replayed_once_the_last_usage_is_gone():
    cp = plane(usage("u1"), usage("u2"))
    assert not cp.delete(CACHE, "kubectl delete")
    delete_usage(cp, "u1")
    assert CACHE in cp.store, "u2 still protects it: the replay is refused again"
    assert len(cp.refusals) == 2
    delete_usage(cp, "u2")
    assert CACHE not in cp.store, "the last Usage gone: the deletion happens"


@pytest.mark.parametrize(
    ("replay", "attempted"),
    [(False, True), (True, False)],
    ids=["replayDeletion false", "never asked to delete"],
)
def test_without_a_refused_deletion_to_replay_the_object_stays(replay, attempted):
    cp = plane(usage("u1", replay=replay))
    if attempted:
        assert not cp.delete(CACHE, "kubectl delete")
    delete_usage(cp, "u1")
    assert CACHE in cp.store
    assert cp.delete(CACHE, "kubectl delete"), "no Usage left: a new deletion goes through"


REPLICA: Key = ("modelfleet.io/v1alpha1", "ModelReplica", "ml-team", "kimi-k2-gke-us")


@pytest.mark.parametrize(
    ("the_usage", "with_user", "ready"),
    [
        pytest.param(usage("u", by=None), False, True, id="resource-in-use-exists"),
        pytest.param(usage("u"), True, True, id="resource-in-use-and-its-user-exist"),
        pytest.param(usage("u"), False, False, id="its-user-is-not-there-yet"),
        pytest.param(usage("u", of="gone", by=None), False, False, id="resource-in-use-absent"),
    ],
)
def test_a_usage_is_ready_once_what_it_names_exists(the_usage, with_user, ready):
    """As Crossplane's Usage controller marks it (what a function reads as the Usage's own
    Ready when it says whether the composed Usage is ready)."""
    cp = plane(the_usage)
    if with_user:
        cp.store[REPLICA] = xr(REPLICA)
    stored = cp.store[key_of(the_usage)]
    mark_configured(cp.store, START)
    assert condition_true(stored.get("status"), "Ready") is ready
