"""One row per reason of `Connected` and `StorageReady`, with the event it gives: waiting on
what the function itself composed is progress (a Normal event); a missing user-named provider
config, a class the cluster says is absent, or a cluster the provider cannot reach or is
refused by is wrong (a Warning), each under a reason that says which, with the provider's
words. Nothing composed is ever dropped for it. (The providers' messages are worded as
crossplane-runtime and provider-kubernetes word them: modelfleet_contracts.provider_errors.)"""

from typing import Any

import pytest
from compose_inference_cluster.core import NAMESPACE, PROVIDER_CONFIG, STORAGE
from compose_inference_cluster.fn import NAMED_PROVIDER_CONFIG
from modelfleet_devtools.provider_words import (
    OBSERVE_ONLY_ABSENT,
    UNAUTHORIZED,
    connection_refused,
    kubeconfig_secret_gone,
    provider_config_gone,
)
from modelfleet_devtools.requests import (
    condition_status,
    conditions,
    desired_resources,
    desired_status,
    events,
)
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import PROVISIONERS, cluster, cond, run

PC_GONE = provider_config_gone()
KUBECONFIG_GONE = kubeconfig_secret_gone()
REFUSED = connection_refused("/api/v1/namespaces/modelfleet")
CLASS_ABSENT = OBSERVE_ONLY_ABSENT
CREATE_FORBIDDEN = (
    'create failed: cannot create object: storageclasses.storage.k8s.io is forbidden: User "x" '
    'cannot create resource "storageclasses" in API group "storage.k8s.io" at the cluster scope'
)

EXISTING = {"storageClassName": "filestore-rwx"}
MANAGED = {"managed": PROVISIONERS[3][1]}
NAMED = {"providerConfigName": "gke-us"}


def namespace(*, active: bool = False, error: str | None = None):
    def observed(obj: dict[str, Any]) -> dict[str, Any]:
        remote = {"phase": "Active"} if active else None
        return observed_object(obj, remote_status=remote, ready=active, synced_error=error)

    return observed


def storage_class(*, there: bool = False, error: str | None = None):
    """The StorageClass Object: the class echoed once read or created; nothing when failing."""

    def observed(obj: dict[str, Any]) -> dict[str, Any]:
        seen = observed_object(obj, ready=there, synced_error=error)
        if there:
            seen["status"]["atProvider"]["manifest"]["provisioner"] = "nfs.csi.k8s.io"
        elif error:
            seen["status"]["atProvider"] = {}
        return seen

    return observed


def not_reconciled(obj: dict[str, Any]) -> dict[str, Any]:
    return dict(obj)


def world(xr, required, *, pc: bool, ns=None, sc=None) -> dict[str, Any]:
    composed = desired_resources(run(xr, required=required))
    observed = {PROVIDER_CONFIG: composed[PROVIDER_CONFIG]} if pc else {}
    if ns is not None:
        observed[NAMESPACE] = ns(composed[NAMESPACE])
    if sc is not None:
        observed[STORAGE] = sc(composed[STORAGE])
    return observed


def said(rsp, typ: str) -> list[tuple[str, str]]:
    return [(severity, text) for severity, text in events(rsp) if text.startswith(f"{typ} ")]


FOUND = {NAMED_PROVIDER_CONFIG: [{"metadata": {"name": "gke-us"}}]}
ABSENT: dict[str, list] = {NAMED_PROVIDER_CONFIG: []}


@pytest.mark.parametrize(
    ("connection", "required", "pc", "ns", "expected", "severity", "says"),
    [
        pytest.param(
            None,
            None,
            False,
            None,
            "Connecting",
            "Normal",
            "creating ClusterProviderConfig gke-us from Secret crossplane-system/gke-us-kubeconfig",
            id="kubeconfig: the provider config it composes does not exist yet",
        ),
        pytest.param(
            None,
            None,
            True,
            not_reconciled,
            "Connecting",
            "Normal",
            "namespace modelfleet via gke-us: waiting for it to become Active",
            id="kubeconfig: the namespace it composes is not Active yet",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(error=PC_GONE),
            "Connecting",
            "Normal",
            PC_GONE,
            id="kubeconfig: the provider's error predates the provider config it composed",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(error=KUBECONFIG_GONE),
            "Unavailable",
            "Warning",
            KUBECONFIG_GONE,
            id="kubeconfig Secret missing: wrong",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(error=REFUSED),
            "Unavailable",
            "Warning",
            REFUSED,
            id="cluster unreachable: wrong",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(error=UNAUTHORIZED),
            "Unavailable",
            "Warning",
            UNAUTHORIZED,
            id="credentials refused: wrong",
        ),
        pytest.param(
            NAMED,
            ABSENT,
            False,
            None,
            "ProviderConfigNotFound",
            "Warning",
            "ClusterProviderConfig gke-us does not exist",
            id="providerConfigName names a config that does not exist: wrong",
        ),
        pytest.param(
            NAMED,
            FOUND,
            False,
            namespace(),
            "Connecting",
            "Normal",
            "waiting for it to become Active",
            id="providerConfigName found, its namespace not Active yet",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(active=True),
            "Available",
            "Normal",
            "namespace modelfleet is Active via gke-us",
            id="connected",
        ),
        # provider-kubernetes leaves an Object Ready as it last saw it when it can no longer
        # reach the cluster: only Synced turns False, with the error.
        pytest.param(
            None,
            None,
            True,
            namespace(active=True, error=REFUSED),
            "Unavailable",
            "Warning",
            f"namespace modelfleet via gke-us (last seen Active): {REFUSED}",
            id="was Active, the cluster no longer answers: wrong",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(active=True, error=UNAUTHORIZED),
            "Unavailable",
            "Warning",
            f"(last seen Active): {UNAUTHORIZED}",
            id="was Active, its credentials are refused now: wrong",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(active=True, error=KUBECONFIG_GONE),
            "Unavailable",
            "Warning",
            f"(last seen Active): {KUBECONFIG_GONE}",
            id="was Active, the kubeconfig Secret is gone now: wrong",
        ),
        pytest.param(
            None,
            None,
            True,
            namespace(active=True, error=PC_GONE),
            "Available",
            "Normal",
            "namespace modelfleet is Active via gke-us",
            id="Active, with an error from before the provider config it composed existed",
        ),
    ],
)
def test_connected_says_progress_or_what_is_wrong(
    connection, required, pc, ns, expected, severity, says
):
    xr = cluster(MANAGED) if connection is None else cluster(MANAGED, connection=connection)
    observed = world(xr, required, pc=pc, ns=ns)
    rsp = run(xr, observed, required)
    assert cond(rsp, "Connected")[1] == expected
    message = conditions(rsp)["Connected"].message
    assert says in message, message
    assert said(rsp, "Connected") == [(severity, f"Connected {expected}: {message}")]
    assert set(observed) <= set(desired_resources(rsp)), "nothing composed is dropped"


@pytest.mark.parametrize(
    ("storage", "sc", "expected", "severity", "says"),
    [
        pytest.param(
            EXISTING,
            storage_class(error=CLASS_ABSENT),
            (False, "StorageClassNotFound"),
            "Warning",
            f"StorageClass filestore-rwx not found on the cluster: {CLASS_ABSENT}",
            id="existing class: the cluster says it does not exist",
        ),
        pytest.param(
            EXISTING,
            storage_class(error=REFUSED),
            (False, "Unavailable"),
            "Warning",
            f"cannot read StorageClass filestore-rwx from the cluster: {REFUSED}",
            id="existing class: cluster unreachable, not a missing class",
        ),
        pytest.param(
            EXISTING,
            storage_class(error=UNAUTHORIZED),
            (False, "Unavailable"),
            "Warning",
            f"cannot read StorageClass filestore-rwx from the cluster: {UNAUTHORIZED}",
            id="existing class: credentials refused, not a missing class",
        ),
        pytest.param(
            EXISTING,
            storage_class(error=PC_GONE),
            (False, "Creating"),
            "Normal",
            "waiting for StorageClass filestore-rwx",
            id="existing class: the provider's error predates the provider config",
        ),
        pytest.param(
            EXISTING,
            not_reconciled,
            (False, "Creating"),
            "Normal",
            "waiting for StorageClass filestore-rwx",
            id="existing class: not read yet",
        ),
        pytest.param(
            EXISTING,
            storage_class(there=True),
            (True, "Available"),
            "Normal",
            "StorageClass filestore-rwx (ReadWriteMany)",
            id="existing class: read from the cluster",
        ),
        pytest.param(
            MANAGED,
            storage_class(error=CREATE_FORBIDDEN),
            (False, "Unavailable"),
            "Warning",
            f"cannot create StorageClass modelfleet-rwx on the cluster: {CREATE_FORBIDDEN}",
            id="managed class: the cluster refuses it",
        ),
        pytest.param(
            MANAGED,
            storage_class(),
            (False, "Creating"),
            "Normal",
            "waiting for StorageClass modelfleet-rwx",
            id="managed class: being created",
        ),
    ],
)
def test_storage_ready_says_missing_only_on_the_clusters_word(
    storage, sc, expected, severity, says
):
    xr = cluster(storage)
    observed = world(xr, None, pc=True, ns=namespace(active=True), sc=sc)
    rsp = run(xr, observed)
    assert cond(rsp, "StorageReady") == expected
    message = conditions(rsp)["StorageReady"].message
    assert says in message, message
    assert said(rsp, "StorageReady") == [(severity, f"StorageReady {expected[1]}: {message}")]
    assert set(observed) <= set(desired_resources(rsp)), "nothing composed is dropped"
    assert desired_resources(rsp)[STORAGE]["spec"]["forProvider"]["manifest"]["kind"] == (
        "StorageClass"
    )


def with_status(xr: dict[str, Any], rsp) -> dict[str, Any]:
    """The XR as Crossplane stores it after this response: status and conditions applied."""
    status = desired_status(rsp)
    status["conditions"] = [
        {"type": c.type, "status": condition_status(c), "reason": c.reason} for c in rsp.conditions
    ]
    return xr | {"status": status}


@pytest.mark.parametrize(
    "storage", [pytest.param(MANAGED, id="managed class"), pytest.param(None, id="no storage")]
)
def test_a_new_cluster_provisions_without_a_single_warning(storage):
    """A brand-new InferenceCluster from a kubeconfig Secret, as a real control plane brings
    it up: its provider config not there yet; the Namespace's Object tried before the config
    existed; the Namespace not Active yet; all there. Each transition is one Normal event."""
    xr = cluster(storage)
    composed = desired_resources(run(xr))
    pc = {PROVIDER_CONFIG: composed[PROVIDER_CONFIG]}

    def observed(ns, sc=None):
        seen = pc | {NAMESPACE: ns(composed[NAMESPACE])}
        if storage is not None:
            seen[STORAGE] = (sc or storage_class())(composed[STORAGE])
        return seen

    steps = [
        {},
        observed(namespace(error=PC_GONE), storage_class(error=PC_GONE)),
        observed(not_reconciled),
        observed(namespace()),
        observed(namespace(active=True), storage_class(there=True)),
    ]
    said_all = []
    for seen in steps:
        rsp = run(xr, seen)
        said_all += events(rsp)
        xr = with_status(xr, rsp)
    assert rsp.desired.composite.ready
    assert [severity for severity, _ in said_all] == ["Normal"] * len(said_all), said_all
    transitions = [text.split(":")[0] for _, text in said_all]
    assert transitions == [
        "Connected Connecting",
        *(["StorageReady Creating"] if storage else ["StorageReady NotConfigured"]),
        "Connected Available",
        *(["StorageReady Available"] if storage else []),
    ]
