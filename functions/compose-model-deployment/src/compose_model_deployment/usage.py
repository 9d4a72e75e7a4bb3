"""The Crossplane Usages that keep a ModelCache, and the InferenceCluster, from being deleted
while a ModelReplica uses them. The ModelDeployment composes them, one pair per ModelReplica it
composes, each `by` that ModelReplica.

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

Why the deployment and not the replica composes them: Crossplane deletes a composed resource
its XR drops with foreground propagation, so a dropped ModelReplica waits for the resources it
controls; and a composed Usage with `by` waits for its `by` to be gone before it goes. A
replica's own Usages `by` itself would wait for each other forever. Composed by the
deployment, they are not the replica's dependents: dropped with it in the same response, each
waits for the replica to go, then goes.
"""

from typing import Any

from modelfleet_contracts.api import (
    API_VERSION,
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
)
from modelfleet_contracts.labels import CLUSTER_LABEL, kind_label, owner_labels

USAGE_API_VERSION = "protection.crossplane.io/v1beta1"
USAGE_KIND = "Usage"
# Suffixes of a ModelReplica's composition-resource-name naming its two Usages.
CACHE_USAGE_SUFFIX = "cache-usage"
CLUSTER_USAGE_SUFFIX = "cluster-usage"


def cache_usage_key(replica_key: str) -> str:
    """The composition-resource-name of the Usage of the cache by the replica `replica_key`."""
    return f"{replica_key}-{CACHE_USAGE_SUFFIX}"


def cluster_usage_key(replica_key: str) -> str:
    """The composition-resource-name of the Usage of the cluster by the replica `replica_key`."""
    return f"{replica_key}-{CLUSTER_USAGE_SUFFIX}"


def replica_usages(
    *,
    deployment: str,
    namespace: str,
    replicas: dict[str, tuple[str, str]],
    cache: str | None,
    clusters: set[str],
    observed: set[str],
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The Usages of the ModelReplicas this response composes or keeps: (desired, kept).

    `replicas`: by composition-resource-name, (its metadata.name, its InferenceCluster).
    `cache`: the referenced ModelCache, found this call (None: the deployment references
    none, so no cache Usage; a reference not found or not resolved holds everything composed
    before, these Usages among them, before this is called). `clusters`: the InferenceClusters
    found this call. `observed`: the names of the Usages observed. A replica's cache Usage is
    composed while it references the cache, its cluster Usage while its InferenceCluster is
    found; one whose InferenceCluster is not found this call is kept as observed (never
    dropped on uncertainty). The Usages of a replica not in `replicas` are left out: dropped
    with it, each waits for it to be gone, then goes.
    """
    desired: dict[str, dict[str, Any]] = {}
    kept: list[str] = []
    for key, (replica, cluster) in sorted(replicas.items()):
        labels = {
            **owner_labels(MODEL_DEPLOYMENT, deployment, namespace),
            kind_label(MODEL_REPLICA): replica,
            CLUSTER_LABEL: cluster,
        }
        on_cache, on_cluster = cache_usage_key(key), cluster_usage_key(key)
        if cache:
            desired[on_cache] = cache_usage(
                replica=replica, namespace=namespace, cache=cache, cluster=cluster, labels=labels
            )
        if cluster in clusters:
            desired[on_cluster] = cluster_usage(
                replica=replica, namespace=namespace, cluster=cluster, labels=labels
            )
        elif on_cluster in observed:
            kept.append(on_cluster)
    return desired, kept


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
