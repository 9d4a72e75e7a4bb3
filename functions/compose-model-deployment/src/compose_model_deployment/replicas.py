"""Reading ModelReplicas: only the few fields placement needs (there may be a thousand)."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.api import MODEL_DEPLOYMENT
from modelfleet_contracts.fields import as_int, mapping_at
from modelfleet_contracts.labels import NAMESPACE_LABEL, kind_label


def _count(value: Any) -> int:
    return max(0, as_int(value))


@dataclass(frozen=True)
class PlacedReplica:
    cluster: str
    pool: str
    replicas: int
    nodes: int
    owner: str
    owner_namespace: str
    phase: str = ""
    message: str = ""
    ready_replicas: int = 0

    def owned_by(self, deployment: str, namespace: str) -> bool:
        return self.owner == deployment and self.owner_namespace == namespace


def read_replica(obj: dict[str, Any]) -> PlacedReplica:
    spec = mapping_at(obj, "spec")
    status = mapping_at(obj, "status")
    labels = mapping_at(mapping_at(obj, "metadata"), "labels")
    return PlacedReplica(
        cluster=str(spec.get("clusterName") or ""),
        pool=str(spec.get("nodePool") or ""),
        replicas=_count(spec.get("replicas")),
        nodes=max(1, _count(spec.get("nodes"))),
        owner=str(labels.get(kind_label(MODEL_DEPLOYMENT)) or ""),
        owner_namespace=str(labels.get(NAMESPACE_LABEL) or ""),
        phase=str(status.get("phase") or ""),
        message=str(status.get("message") or ""),
        ready_replicas=_count(status.get("readyReplicas")),
    )
