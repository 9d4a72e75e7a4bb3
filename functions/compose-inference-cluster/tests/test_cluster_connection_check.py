"""How often a cluster's connection is checked: only the workload Namespace's Object carries a
poll interval of its own, so a lost cluster shows on `Connected` within about that long while
everything else stays at the provider's slow poll and watches."""

import pytest
from compose_inference_cluster.core import NAMESPACE
from compose_inference_cluster.fn import run_function
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.objects import POLL_INTERVAL_ANNOTATION
from modelfleet_devtools.requests import conditions, desired_resources, run_function_request

RUNNER = SafeRunner(run_function, "compose-inference-cluster")
KUBECONFIG = {"namespace": "crossplane-system", "name": "gke-us-kubeconfig", "key": "kubeconfig"}


def cluster(**connection: object) -> dict:
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "gke-us"},
        "spec": {
            "connection": {"kubeconfigSecretRef": KUBECONFIG, **connection},
            "storage": {"storageClassName": "filestore-rwx"},
            "leaderWorkerSet": {"install": True, "version": "0.7.0"},
        },
    }


def poll_intervals(xr: dict) -> dict[str, str | None]:
    rsp = RUNNER.run(run_function_request(xr))
    return {
        key: (res.get("metadata", {}).get("annotations") or {}).get(POLL_INTERVAL_ANNOTATION)
        for key, res in desired_resources(rsp).items()
    }


@pytest.mark.parametrize(
    ("case", "connection", "expected"),
    [
        ("the default: checked every 20 s", {}, "20s"),
        ("a platform team that wants it sooner", {"checkInterval": "10s"}, "10s"),
        ("a big fleet checked every few minutes", {"checkInterval": "5m"}, "5m"),
    ],
)
def test_only_the_namespace_object_is_checked_at_the_clusters_interval(case, connection, expected):
    intervals = poll_intervals(cluster(**connection))
    assert intervals.pop(NAMESPACE) == expected, case
    # The provider config, the StorageClass proof, the hydrator's access and the LWS release
    # stay at the provider's --poll (and watches): one often-polled Object per cluster.
    assert intervals, "the cluster composes more than its namespace"
    assert set(intervals.values()) == {None}, intervals


def test_an_interval_that_is_not_a_duration_is_refused_with_a_reason():
    rsp = RUNNER.run(run_function_request(cluster(checkInterval="often")))
    connected = conditions(rsp)["Connected"]
    assert connected.reason == "InvalidSpec"
    assert "checkInterval" in connected.message
