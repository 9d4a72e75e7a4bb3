"""What compose-model-service reads besides its XR, as the few facts it decides on (fn.py reads
them from the required resources; tests build them directly)."""

from dataclasses import dataclass, field
from functools import cached_property

from modelfleet_contracts.clusters import ClusterView


@dataclass(frozen=True)
class ServingRow:
    """One row of a ModelDeployment's `status.clusters`: its ModelReplica on that cluster."""

    cluster: str
    replicas: int = 0
    phase: str = ""
    message: str = ""
    address: str = ""  # the replica's in-cluster URL, once a serving group answers


@dataclass(frozen=True)
class DeploymentView:
    """A referenced ModelDeployment: the name it serves and where, and the cache it reads."""

    name: str
    served_model_name: str = ""  # its status.servedModelName ("" when it reports none)
    cache_name: str = ""  # its spec.modelCacheRef.name ("" when it reads no cache)
    rows: tuple[ServingRow, ...] = ()

    @cached_property
    def _by_cluster(self) -> dict[str, ServingRow]:
        rows: dict[str, ServingRow] = {}
        for r in self.rows:
            rows.setdefault(r.cluster, r)  # the first row of a cluster, as listed
        return rows

    def row(self, cluster: str) -> ServingRow | None:
        return self._by_cluster.get(cluster)

    @cached_property
    def placed_on(self) -> frozenset[str]:
        """The clusters it has serving groups placed on."""
        return frozenset(r.cluster for r in self.rows if r.cluster and r.replicas > 0)


@dataclass(frozen=True)
class ClusterFacts:
    """An InferenceCluster as a ModelService reads it: the shared view, and the reason and
    message of its GatewayReady condition ("" when it has none)."""

    view: ClusterView
    gateway_reason: str = ""
    gateway_message: str = ""


@dataclass(frozen=True)
class RivalService:
    """Another ModelService, for the one-name-per-cluster rule: its model name, when it was
    created, and the clusters its status lists."""

    namespace: str
    name: str
    model_name: str
    created: str = ""  # metadata.creationTimestamp (RFC 3339 sorts as text)
    clusters: frozenset[str] = field(default_factory=frozenset)

    @property
    def seniority(self) -> tuple[str, str, str]:
        """Older first; the namespace and name break a tie (an empty timestamp sorts last)."""
        return (self.created or "~", self.namespace, self.name)
