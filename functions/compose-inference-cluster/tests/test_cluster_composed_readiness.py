"""What compose-inference-cluster tells Crossplane of each composed resource's readiness: the
provider configs once they exist (they have no readiness of their own), the namespace and
StorageClass Objects once provider-kubernetes reports them Ready (an Observe-only class only
once found), the LeaderWorkerSet Release once deployed; none before it is observed.
The hydrator's access Objects are composed from the Namespace's being Ready on."""

import pytest
from compose_inference_cluster.core import (
    HELM_PROVIDER_CONFIG,
    LWS,
    NAMESPACE,
    PROVIDER_CONFIG,
    STORAGE,
)
from compose_inference_cluster.fn import run_function
from compose_inference_cluster.hydrator_access import HYDRATOR_ACCESS
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import (
    composed_readiness,
    desired_resources,
    run_function_request,
)
from modelfleet_devtools.world import NOT_OBSERVED, observed_in_states

RUNNER = SafeRunner(run_function, "compose-inference-cluster")
KUBECONFIG = {"namespace": "crossplane-system", "name": "gke-us-kubeconfig", "key": "kubeconfig"}
MANAGED = {"managed": {"provisioner": "NFS", "nfs": {"server": "10.0.0.2", "share": "/exports"}}}
EXISTING = {"storageClassName": "filestore-rwx"}
CONFIGS = (PROVIDER_CONFIG, HELM_PROVIDER_CONFIG)
ALL = (*CONFIGS, NAMESPACE, STORAGE, LWS, *HYDRATOR_ACCESS)


def cluster(storage: dict) -> dict:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "gke-us"},
        "spec": {
            "connection": {"kubeconfigSecretRef": KUBECONFIG},
            "storage": storage,
            "leaderWorkerSet": {"install": True},
        },
    }


def run(xr, observed=None):
    return RUNNER.run(run_function_request(xr, observed=observed))


@pytest.mark.parametrize(
    ("storage", "states", "expected"),
    [
        pytest.param(
            MANAGED,
            dict.fromkeys(ALL, NOT_OBSERVED),
            # The hydrator's access follows once the Namespace is Active (core.py).
            dict.fromkeys(set(ALL) - set(HYDRATOR_ACCESS), "False"),
            id="first-reconcile-nothing-observed-provider-configs-included",
        ),
        pytest.param(MANAGED, {}, dict.fromkeys(ALL, "True"), id="everything-observed-ready"),
        pytest.param(
            MANAGED,
            dict.fromkeys(ALL, None),
            dict.fromkeys(CONFIGS, "True")
            | dict.fromkeys((NAMESPACE, STORAGE, LWS, *HYDRATOR_ACCESS), "False"),
            id="provider-configs-have-no-ready-condition-existing-is-enough",
        ),
        pytest.param(
            MANAGED,
            {NAMESPACE: False},
            dict.fromkeys(ALL, "True") | {NAMESPACE: "False"},
            id="workload-namespace-not-active-yet",
        ),
        pytest.param(
            MANAGED,
            {LWS: False},
            dict.fromkeys(ALL, "True") | {LWS: "False"},
            id="leaderworkerset-release-not-deployed",
        ),
        pytest.param(
            EXISTING,
            {STORAGE: None},
            dict.fromkeys(ALL, "True") | {STORAGE: "False"},
            id="observe-only-class-not-found",
        ),
        pytest.param(EXISTING, {}, dict.fromkeys(ALL, "True"), id="observe-only-class-found"),
    ],
)
def test_composed_readiness_follows_what_is_observed(storage, states, expected):
    xr = cluster(storage)
    first = desired_resources(run(xr))
    assert set(first) == set(ALL) - set(HYDRATOR_ACCESS)
    composed = desired_resources(run(xr, observed_in_states(first, {NAMESPACE: True})))
    assert set(composed) == set(ALL)
    rsp = run(xr, observed_in_states(composed, states))
    assert composed_readiness(rsp) == expected
