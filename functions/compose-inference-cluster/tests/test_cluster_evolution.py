"""One InferenceCluster per storage option, followed as its observed state evolves.

Each story walks the same timeline: nothing observed yet; the provider config exists but the
Namespace is not Active; the Namespace is Active (and the hydrator's access in it) but the
storage is not there yet; all there; the kubeconfig Secret flaps (the provider cannot read it
for a while); recovered. The hydrator's access is composed from the Namespace's being Active
on and kept through the flap (the composed objects never shrink), and
`Connected`/`StorageReady` and the status say what was observed — never ahead of it.
"""

from dataclasses import dataclass
from typing import Any

import pytest
from compose_inference_cluster.core import NAMESPACE, PROVIDER_CONFIG, STORAGE
from compose_inference_cluster.hydrator_access import HYDRATOR_ACCESS
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import desired_resources, desired_status
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import PROVISIONERS, cluster, composed_once_connected, cond, run

# As crossplane-runtime and provider-kubernetes word them (modelfleet_contracts.provider_errors).
SECRET_GONE = (
    "connect failed: cannot build kube client for provider config: cannot get credentials: "
    'secrets "gke-us-kubeconfig" not found'
)
CLASS_GONE = "observe failed: external resource does not exist"
STEP_NOT_ACTIVE = "provider config exists, namespace not Active"


@dataclass(frozen=True)
class Option:
    name: str
    storage: dict[str, Any] | None
    class_name: str | None  # what status.storage.storageClassName reports


OPTIONS = [
    Option(name, {"managed": managed}, "modelfleet-rwx") for name, managed, _, _ in PROVISIONERS
] + [
    Option("existing class", {"storageClassName": "filestore-rwx"}, "filestore-rwx"),
    Option("no storage", None, None),
]


def storage_observed(option: Option, desired: dict[str, Any], *, there: bool) -> dict[str, Any]:
    """The StorageClass Object as provider-kubernetes reports it."""
    if option.storage and "storageClassName" in option.storage:
        # Observe-only: the provider echoes the class it read; nothing when it is absent.
        obj = observed_object(desired, ready=there, synced_error=None if there else CLASS_GONE)
        if there:
            obj["status"]["atProvider"]["manifest"]["provisioner"] = "filestore.csi.storage.gke.io"
        else:
            obj["status"]["atProvider"] = {}
        return obj
    return observed_object(desired, ready=there)


def namespace_observed(desired: dict[str, Any], *, active: bool, error: str | None = None):
    remote = {"phase": "Active"} if active else None
    return observed_object(desired, remote_status=remote, ready=active, synced_error=error)


def timeline(option: Option, desired: dict[str, Any]):
    """(step, observed) pairs in the order a real cluster produces them."""
    pc = {PROVIDER_CONFIG: desired[PROVIDER_CONFIG]}
    has_storage = STORAGE in desired

    def world(ns_active: bool, storage_there: bool, error: str | None = None):
        observed = pc | {
            NAMESPACE: namespace_observed(desired[NAMESPACE], active=ns_active, error=error)
        }
        if has_storage:
            observed[STORAGE] = storage_observed(option, desired[STORAGE], there=storage_there)
        if ns_active or error:
            # Created once the namespace is there; Ready stays while the provider cannot
            # reach the cluster for a while (it says so on Synced).
            observed |= {
                key: observed_object(desired[key], ready=True, synced_error=error)
                for key in HYDRATOR_ACCESS
            }
        return observed

    return [
        ("nothing observed yet", {}),
        (STEP_NOT_ACTIVE, world(False, False)),
        ("namespace Active, storage not there yet", world(True, False)),
        ("everything there", world(True, True)),
        ("kubeconfig Secret flaps", world(False, True, SECRET_GONE)),
        ("recovered", world(True, True)),
    ]


# Expected (Connected, StorageReady) per step; storage reasons depend on the option.
CONNECTED = {
    "nothing observed yet": (False, "Connecting"),
    STEP_NOT_ACTIVE: (False, "Connecting"),
    "namespace Active, storage not there yet": (True, "Available"),
    "everything there": (True, "Available"),
    "kubeconfig Secret flaps": (False, "Unavailable"),
    "recovered": (True, "Available"),
}


def expected_storage(option: Option, step: str) -> tuple[bool, str]:
    if option.storage is None:
        return (True, "NotConfigured")
    storage_there = step in {"everything there", "kubeconfig Secret flaps", "recovered"}
    if storage_there:
        return (True, "Available")
    observed_missing = step != "nothing observed yet"
    if "storageClassName" in option.storage and observed_missing:
        return (False, "StorageClassNotFound")
    return (False, "Creating")


@pytest.mark.parametrize("option", OPTIONS, ids=[o.name for o in OPTIONS])
def test_connected_and_storage_follow_the_observed_state(option: Option) -> None:
    xr = cluster(option.storage)
    composed = composed_once_connected(xr)
    for step, observed in timeline(option, composed):
        rsp = run(xr, observed)
        status = desired_status(rsp)
        # Not before the Namespace is there (the provider would fail to create them in it).
        access_composed = step not in {"nothing observed yet", STEP_NOT_ACTIVE}
        expected = set(composed) - (set() if access_composed else set(HYDRATOR_ACCESS))
        assert set(desired_resources(rsp)) == expected, step
        assert cond(rsp, "Connected") == CONNECTED[step], step
        assert cond(rsp, "StorageReady") == expected_storage(option, step), step

        # Status never runs ahead of what was observed.
        assert ("providerConfigName" in status) == (step != "nothing observed yet"), step
        assert ("workloadNamespace" in status) == CONNECTED[step][0], step
        # What hydration Jobs run under: once it is there, on a cluster that is connected.
        expected_account = "modelfleet-hydrator" if CONNECTED[step][0] else None
        assert status.get("hydratorServiceAccount") == expected_account, step
        if option.class_name is None:
            assert "storage" not in status, step
        else:
            assert status["storage"] == {
                "storageClassName": option.class_name,
                "accessMode": "ReadWriteMany",
                "ready": expected_storage(option, step)[0],
            }, step
        ready = CONNECTED[step][0] and expected_storage(option, step)[0]
        assert rsp.desired.composite.ready == (fnv1.READY_TRUE if ready else fnv1.READY_FALSE)


def test_the_flapping_secret_is_named_in_the_connected_message() -> None:
    xr = cluster(None)
    composed = composed_once_connected(xr)
    steps = dict(timeline(OPTIONS[-1], composed))
    rsp = run(xr, steps["kubeconfig Secret flaps"])
    message = next(c.message for c in rsp.conditions if c.type == "Connected")
    assert "gke-us-kubeconfig" in message
