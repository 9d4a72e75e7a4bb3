"""compose-inference-cluster in a world that flaps around a fixed, valid spec: its observed
objects and its own status each as is, with a mutated status or missing for a round, and
the named provider config resolved, gone, mutated or unresolved for a call.

Property: no crash, always a status or a message, and nothing it composed is dropped (the
spec did not change, so everything composed is still asked for).
"""

import functools

from compose_inference_cluster.fn import NAMED_PROVIDER_CONFIG
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_devtools.fuzz import (
    dropped,
    flapped,
    holds_up,
    resolved,
    settled,
    waits_for_crossplane,
)
from modelfleet_devtools.requests import desired_resources
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import PROVISIONERS, cluster, run

PROVIDER_CONFIG = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "ClusterProviderConfig",
    "metadata": {"name": "gke-us-pc"},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}
CLUSTERS = {
    "kubeconfig, managed Filestore, LWS": cluster(
        {"managed": PROVISIONERS[0][1]}, leaderWorkerSet={"install": True}
    ),
    "named provider config, existing class": cluster(
        {"storageClassName": "filestore-rwx"}, connection={"providerConfigName": "gke-us-pc"}
    ),
    "no shared storage": cluster(None),
}


@functools.cache
def connected(name):
    """The cluster with the status a healthy reconcile gave it, and what it composed."""
    required = {NAMED_PROVIDER_CONFIG: [PROVIDER_CONFIG]}
    return settled(
        CLUSTERS[name],
        lambda xr, observed: run(xr, observed, required=required),
        lambda v: observed_object(v, ready=True) if "forProvider" in v.get("spec", {}) else v,
        rounds=3,  # the hydrator's access follows once the Namespace is observed Ready
    )


@given(st.sampled_from(sorted(CLUSTERS)), st.data())
def test_a_flapping_world_never_drops_what_the_unchanged_spec_composed(name, data):
    xr, observed = flapped(data, *connected(name), "cluster")
    config, _ = resolved(data, [PROVIDER_CONFIG])
    required = None if config is None else {NAMED_PROVIDER_CONFIG: config}

    rsp = run(xr, observed, required=required)

    assert holds_up(rsp)
    assert dropped(observed, desired_resources(rsp), observed) == []
    if config is None and "providerConfigName" in xr["spec"]["connection"]:
        assert waits_for_crossplane(rsp, "Connected")
