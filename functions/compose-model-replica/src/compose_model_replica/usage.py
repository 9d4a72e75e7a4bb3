"""The Crossplane Usage that keeps a ModelCache from being deleted while a replica uses it.

Deleting a ModelCache deletes its claims; on a workload cluster, pvc-protection only keeps a
claim Terminating until the pods mounting it stop, so the next pod restart would lose the
weights. A `protection.crossplane.io` Usage declares "this ModelReplica uses that
ModelCache": Crossplane's admission webhook then refuses to delete the cache, naming the
replica. With `replayDeletion`, a refused deletion is carried out once the Usage is gone
(when the replica is deleted), so deleting a deployment and its cache together still works.
"""

from typing import Any

from modelfleet_contracts.api import API_VERSION, MODEL_CACHE, MODEL_REPLICA

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
