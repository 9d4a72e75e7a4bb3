"""The Crossplane Usages that keep a ModelCache, and the InferenceCluster, from being deleted
while a replica uses them.

Deleting a ModelCache deletes its claims; on a workload cluster, pvc-protection only keeps a
claim Terminating until the pods mounting it stop, so the next pod restart would lose the
weights. A `protection.crossplane.io` Usage declares "this ModelReplica uses that
ModelCache": Crossplane's admission webhook then refuses to delete the cache, naming the
replica. With `replayDeletion`, a refused deletion is carried out once the Usage is gone
(when the replica is deleted), so deleting a deployment and its cache together still works.

Deleting an InferenceCluster deletes what it composed on the cluster, its workload Namespace
among them, and with it every claim and workload there: the replica's Usage of its
InferenceCluster refuses that while the replica is placed there. The Usage is namespaced (a
namespaced XR composes nothing cluster-scoped) and names the cluster-scoped InferenceCluster
with an explicit empty namespace, which Crossplane reads as "cluster-scoped" (without it, the
Usage's own namespace would be assumed and nothing would be protected).
"""

from typing import Any

from modelfleet_contracts.api import API_VERSION, INFERENCE_CLUSTER, MODEL_CACHE, MODEL_REPLICA

USAGE_API_VERSION = "protection.crossplane.io/v1beta1"
USAGE_KIND = "Usage"


def cache_usage(
    *, replica: str, namespace: str, cache: str, cluster: str, labels: dict[str, str]
) -> dict[str, Any]:
    """A namespaced Usage (in the replica's namespace, like the cache): `by` the ModelReplica
    `replica`, `of` the ModelCache `cache`."""
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": USAGE_KIND,
        "metadata": {"labels": dict(labels)},
        "spec": {
            "of": {"apiVersion": API_VERSION, "kind": MODEL_CACHE, "resourceRef": {"name": cache}},
            "by": {
                "apiVersion": API_VERSION,
                "kind": MODEL_REPLICA,
                "resourceRef": {"name": replica},
            },
            "reason": (
                f"ModelReplica {namespace}/{replica} serves from this cache on cluster {cluster}; "
                "delete or scale down the ModelDeployment first"
            ),
            "replayDeletion": True,
        },
    }


def cluster_usage(
    *, replica: str, namespace: str, cluster: str, labels: dict[str, str]
) -> dict[str, Any]:
    """A namespaced Usage (in the replica's namespace): `by` the ModelReplica `replica`, `of`
    the cluster-scoped InferenceCluster `cluster`."""
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": USAGE_KIND,
        "metadata": {"labels": dict(labels)},
        "spec": {
            "of": {
                "apiVersion": API_VERSION,
                "kind": INFERENCE_CLUSTER,
                "resourceRef": {"name": cluster, "namespace": ""},
            },
            "by": {
                "apiVersion": API_VERSION,
                "kind": MODEL_REPLICA,
                "resourceRef": {"name": replica},
            },
            "reason": (
                f"ModelReplica {namespace}/{replica} serves on this cluster; delete the "
                "ModelDeployment or move it off the cluster first"
            ),
            "replayDeletion": True,
        },
    }
