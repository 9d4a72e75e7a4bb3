"""Label keys every composed object carries, so a platform team can find what an XR owns."""

from modelfleet_contracts.api import GROUP

NAMESPACE_LABEL = f"{GROUP}/namespace"
CLUSTER_LABEL = f"{GROUP}/cluster"
# On a ModelReplica composed to take over the replicas of others: the clusters (comma-separated)
# whose replicas it replaces. Present only while those replicas still exist (a move under way).
REPLACES_ANNOTATION = f"{GROUP}/replaces"


def kind_label(kind: str) -> str:
    """`modelfleet.io/<kind>`, e.g. `modelfleet.io/modelcache`."""
    return f"{GROUP}/{kind.lower()}"


def owner_labels(kind: str, name: str, namespace: str | None = None) -> dict[str, str]:
    """Labels naming the XR that composed an object (and its namespace, when namespaced)."""
    labels = {kind_label(kind): name}
    if namespace:
        labels[NAMESPACE_LABEL] = namespace
    return labels
