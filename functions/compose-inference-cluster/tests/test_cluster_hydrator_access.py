"""The hydrator's access, composed once per workload namespace: a ServiceAccount, a Role that
may get and patch the namespace's Jobs, and the RoleBinding, all named `modelfleet-hydrator`.
They are composed only once the Namespace Object is observed Ready (before, the provider would
fail to create them in a namespace the cluster does not have yet), and kept from then on.
`status.hydratorServiceAccount` names it only once all three were observed on a connected
cluster (caches start hydration Jobs under it from then on)."""

from typing import Any

import pytest
from compose_inference_cluster.core import NAMESPACE, PROVIDER_CONFIG, STORAGE, UNAVAILABLE
from compose_inference_cluster.hydrator_access import (
    HYDRATOR_ACCESS,
    ROLE,
    ROLE_BINDING,
    SERVICE_ACCOUNT,
)
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.clusters import read_cluster
from modelfleet_contracts.hydration import HYDRATOR_SERVICE_ACCOUNT
from modelfleet_devtools.requests import conditions as conditions_of
from modelfleet_devtools.requests import desired_resources, desired_status
from modelfleet_devtools.validation import assert_valid
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import cluster, composed_once_connected, run

STORAGE_SPEC = {"storageClassName": "filestore-rwx"}
# The Namespace Object as observed.
UNOBSERVED, CREATING, ACTIVE, UNREACHABLE = "not observed", "not Active", "Active", "unreachable"
# provider-kubernetes's error while it cannot reach the cluster (the Object stays Ready).
NO_ROUTE = "connect failed: Get https://10.0.0.1/api: dial tcp 10.0.0.1:443: i/o timeout"


def remote(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["forProvider"]["manifest"]


def composed(xr: dict[str, Any]) -> dict[str, Any]:
    return composed_once_connected(xr)


def world(
    desired: dict[str, Any], *, namespace: str = ACTIVE, **access: bool | str | None
) -> dict[str, Any]:
    """The provider config, the namespace (as `namespace` says), the StorageClass found, and
    each access Object: True ready, False created but not ready, a string its provider
    error, None (or left out of `access`) not observed."""
    observed = {
        PROVIDER_CONFIG: desired[PROVIDER_CONFIG],
        STORAGE: observed_object(desired[STORAGE], ready=True),
    }
    if namespace != UNOBSERVED:
        observed[NAMESPACE] = observed_object(
            desired[NAMESPACE],
            remote_status={"phase": "Active"} if namespace != CREATING else None,
            ready=namespace != CREATING,
            synced_error=NO_ROUTE if namespace == UNREACHABLE else None,
        )
    observed[STORAGE]["status"]["atProvider"]["manifest"]["provisioner"] = "csi.example.com"
    for key in HYDRATOR_ACCESS:
        state = access.get(key.replace("-", "_").removeprefix("hydrator_"))
        if state is None:
            continue
        error = state if isinstance(state, str) else None
        observed[key] = observed_object(desired[key], ready=state is True, synced_error=error)
    return observed


EVERY = {"service_account": True, "role": True, "role_binding": True}

SCENARIOS = [
    # id, the Namespace, access Objects as observed, reported, cluster Ready
    ("nothing of it observed yet", ACTIVE, {}, None, False),
    (
        "the ServiceAccount there, its Role and binding not yet",
        ACTIVE,
        {"service_account": True},
        None,
        False,
    ),
    (
        "the Role refused by the cluster",
        ACTIVE,
        EVERY | {"role": 'roles.rbac.authorization.k8s.io "modelfleet-hydrator" is forbidden'},
        None,
        False,
    ),
    ("all three there", ACTIVE, EVERY, HYDRATOR_SERVICE_ACCOUNT, True),
    ("all three there, the namespace not Active (not connected)", CREATING, EVERY, None, False),
]


@pytest.mark.parametrize(
    ("namespace", "access", "reported", "ready"),
    [pytest.param(*row[1:], id=row[0]) for row in SCENARIOS],
)
def test_the_hydrator_service_account_is_reported_only_once_observed(
    namespace: str, access: dict[str, Any], reported: str | None, ready: bool
) -> None:
    xr = cluster(STORAGE_SPEC)
    desired = composed(xr)
    rsp = run(xr, world(desired, namespace=namespace, **access))
    assert set(HYDRATOR_ACCESS) <= set(desired_resources(rsp)), "composed at every step"
    status = desired_status(rsp)
    assert status.get("hydratorServiceAccount") == reported
    assert rsp.desired.composite.ready == (fnv1.READY_TRUE if ready else fnv1.READY_FALSE)
    view = read_cluster(
        {"metadata": {"name": "gke-us"}, "status": status | {"conditions": conditions(rsp)}}
    )
    assert view.hydrator_service_account == reported


def conditions(rsp: fnv1.RunFunctionResponse) -> list[dict[str, str]]:
    return [
        {"type": c.type, "status": "True" if c.status == fnv1.STATUS_CONDITION_TRUE else "False"}
        for c in rsp.conditions
    ]


@pytest.mark.parametrize("namespace", ["modelfleet", "inference"])
def test_one_account_role_and_binding_in_the_workload_namespace(namespace: str) -> None:
    desired = composed(cluster(STORAGE_SPEC, workloadNamespace=namespace))
    account, role, binding = (remote(desired[k]) for k in (SERVICE_ACCOUNT, ROLE, ROLE_BINDING))
    for manifest in (account, role, binding):
        assert manifest["metadata"]["name"] == "modelfleet-hydrator"
        assert manifest["metadata"]["namespace"] == namespace
        assert manifest["metadata"]["labels"] == {"modelfleet.io/inferencecluster": "gke-us"}
    assert account["kind"] == "ServiceAccount"
    # Any Job of the namespace (their names carry each cache's source), and only what a Job
    # needs to report on itself: read it, patch its annotations.
    assert role["rules"] == [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "patch"]}
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "modelfleet-hydrator",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "modelfleet-hydrator", "namespace": namespace}
    ]
    for key in HYDRATOR_ACCESS:
        obj = desired[key]
        assert obj["metadata"]["namespace"] == "crossplane-system", key
        assert obj["spec"]["providerConfigRef"]["name"] == "gke-us", key
        assert "managementPolicies" not in obj["spec"], "fully managed: created, kept, deleted"
        assert_valid(obj)
        assert_valid(remote(obj))


def test_a_spec_it_cannot_act_on_keeps_the_hydrators_access() -> None:
    xr = cluster(STORAGE_SPEC)
    desired = composed(xr)
    observed = world(desired, **EVERY)
    xr["spec"]["connection"]["providerConfigName"] = "also-set"  # both: invalid
    rsp = run(xr, observed)
    assert set(HYDRATOR_ACCESS) <= set(desired_resources(rsp))


COMPOSING = [
    # id, the Namespace, access Objects as observed, composed, reported, Connected's reason
    ("a new cluster: nothing observed", UNOBSERVED, {}, False, None, "Connecting"),
    ("its Namespace not Active yet", CREATING, {}, False, None, "Connecting"),
    ("its Namespace Active: composed", ACTIVE, {}, True, None, "Available"),
    ("all three there", ACTIVE, EVERY, True, HYDRATOR_SERVICE_ACCOUNT, "Available"),
    # Crossplane deletes what a function leaves out: what was composed stays composed.
    ("had them, its Namespace un-Ready", CREATING, EVERY, True, None, "Connecting"),
    # Unreachable, the Namespace last seen Active: its status stays as last observed.
    (
        "had them, the cluster unreachable",
        UNREACHABLE,
        EVERY,
        True,
        HYDRATOR_SERVICE_ACCOUNT,
        UNAVAILABLE,
    ),
    ("had them, its Namespace not observed", UNOBSERVED, EVERY, True, None, "Connecting"),
    ("only the Role observed", CREATING, {"role": False}, True, None, "Connecting"),
]


@pytest.mark.parametrize(
    ("namespace", "access", "is_composed", "reported", "reason"),
    [pytest.param(*row[1:], id=row[0]) for row in COMPOSING],
)
def test_the_access_is_composed_once_the_namespace_is_ready_and_kept(
    namespace: str, access: dict[str, Any], is_composed: bool, reported: str | None, reason: str
) -> None:
    xr = cluster(STORAGE_SPEC)
    observed = world(composed(xr), namespace=namespace, **access)
    if not observed.keys() - {STORAGE, PROVIDER_CONFIG}:
        observed = {}  # a new cluster: Crossplane observed nothing yet
    rsp = run(xr, observed)
    desired = desired_resources(rsp)
    assert {NAMESPACE, STORAGE, PROVIDER_CONFIG} <= set(desired)
    assert {key for key in HYDRATOR_ACCESS if key in desired} == (
        set(HYDRATOR_ACCESS) if is_composed else set()
    )
    assert desired_status(rsp).get("hydratorServiceAccount") == reported
    assert conditions_of(rsp)["Connected"].reason == reason
