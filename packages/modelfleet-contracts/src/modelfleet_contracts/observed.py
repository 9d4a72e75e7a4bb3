"""What functions act on of an observed composed resource, as small plain facts.

An observed provider-kubernetes Object carries its manifest twice (as composed, and echoed
with the remote object), server bookkeeping and conditions: hundreds of values, of which a
function decides on a handful. The edge (`edge.observed.read_observed`) takes those few
straight from the protobuf Struct; a core decides on these facts only. Other managed
resources (a Helm Release, a ProviderConfig) read the same way: their own conditions are
there, the Object-only facts read as absent. A ModelReplica, which a ModelDeployment
composes, reads as a `PlacedReplica` (`edge.observed.read_replica`); a referenced ModelCache,
which the scheduler and every replica read, as a `StagedCache` (`edge.observed.read_model_cache`).
"""

import json
from dataclasses import dataclass, field
from typing import Any

# What provider-kubernetes run with `--sanitize-secrets` writes in place of the `data` of a
# v1 Secret it echoes in `status.atProvider.manifest` (`setAtProvider` in its source: the
# whole field, `{"redacted": null}`); without the flag the values are copied as they are.
REDACTED_SECRET_DATA: dict[str, None] = {"redacted": None}
# Client-side apply (provider-kubernetes' default) keeps the applied manifest, with the values
# `patchesFrom` copied into it, in this annotation of the remote object.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class ObservedObject:
    """An observed composed resource: its own readiness and why it is failing, and the remote
    object as provider-kubernetes last saw it (`status.atProvider.manifest`)."""

    ready: bool = False  # its own first `Ready` condition is "True"
    # The message of its first False condition (Synced/Ready) that has one.
    failure_message: str = ""
    remote_seen: bool = False  # the remote status is a non-empty mapping
    remote_phase: str = ""
    remote_conditions: tuple[Condition, ...] = ()
    remote_succeeded: int = 0  # a Job's
    remote_failed: int = 0
    remote_ready_replicas: int = 0  # a Deployment's or LeaderWorkerSet's
    remote_updated_replicas: int = 0
    # A StorageClass has no status: one the provider read from the cluster has a provisioner.
    remote_provisioner: str = ""
    # Where the echoed remote Secret still holds values (`secret_fields_with_values`).
    exposed_secret_fields: tuple[str, ...] = ()
    # A Gateway's `status.addresses[].value`, in order.
    remote_addresses: tuple[str, ...] = ()
    # An HTTPRoute's `status.parents[].conditions`, every parent's, in order.
    remote_parent_conditions: tuple[Condition, ...] = ()

    def parent_condition(self, typ: str, status: str = "True") -> Condition | None:
        for c in self.remote_parent_conditions:
            if c.type == typ and c.status == status:
                return c
        return None

    def remote_condition(self, typ: str, status: str = "True") -> Condition | None:
        for c in self.remote_conditions:
            if c.type == typ and c.status == status:
                return c
        return None


@dataclass(frozen=True)
class PlacedReplica:
    """A ModelReplica as the scheduler reads it, whether composed by the deployment at hand
    (observed) or by any other (required): where it is placed, what it holds, whose it is
    and how it is doing. There may be a thousand; nothing else of them is read."""

    cluster: str
    pool: str
    replicas: int
    nodes: int
    owner: str  # the ModelDeployment that composed it
    owner_namespace: str
    phase: str = ""
    message: str = ""
    ready_replicas: int = 0
    # The clusters whose replicas this one takes over (a move under way), from its
    # `modelfleet.io/replaces` annotation.
    replaces: tuple[str, ...] = ()
    address: str = ""  # where it answers, once it serves (its status.address)
    gateway_address: str = ""  # the same through its cluster's Gateway (status.gatewayAddress)

    def owned_by(self, deployment: str, namespace: str) -> bool:
        return self.owner == deployment and self.owner_namespace == namespace


@dataclass(frozen=True)
class CacheRow:
    """One cluster's row of a ModelCache's `status.clusters`, as compose-model-cache writes it:
    how far staging is there and, once Ready, where consumers mount the weights."""

    phase: str = ""
    message: str = ""
    claim_name: str = ""
    path: str = ""


@dataclass(frozen=True)
class StagedCache:
    """A referenced ModelCache as its consumers read it, from its `status.clusters` rows
    (there may be a thousand), its cluster selector and its source: the scheduler decides on
    every cluster's phase and on which clusters the cache can ever stage to, a replica on its
    own cluster's row; the scheduler also reads the model's id at its source, the default
    served model name. Nothing else of the cache is read."""

    # The phase of each cluster read ("" when unreported), by name; a row without a name is
    # listed under "" (it counts as reported, and matches no cluster).
    phases: dict[str, str] = field(default_factory=dict)
    # The whole row of the one cluster a reader asked for; None when not asked or not listed.
    row: CacheRow | None = None
    # Its `spec.clusterSelector` as written; None when absent or empty (every cluster).
    selector: dict[str, Any] | None = None
    # The id its source knows the model by (`served_names.natural_model_name`); "" if none.
    natural_name: str = ""


def _holds_values(mapping: Any) -> bool:
    """A Secret's `data`/`stringData` holds values: it is anything but empty or the marker."""
    return isinstance(mapping, dict) and bool(mapping) and mapping != REDACTED_SECRET_DATA


def secret_fields_with_values(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The fields of an echoed remote object that still hold a v1 Secret's values: `data`,
    `stringData`, and the last-applied annotation when the manifest it keeps holds some.
    Names only: a caller reports where values are, never what they are."""
    if manifest.get("apiVersion") != "v1" or manifest.get("kind") != "Secret":
        return ()
    found = [name for name in ("data", "stringData") if _holds_values(manifest.get(name))]
    metadata = manifest.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    applied = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    if isinstance(applied, str):
        try:
            kept = json.loads(applied)
        except ValueError:
            kept = None
        if isinstance(kept, dict) and any(
            _holds_values(kept.get(name)) for name in ("data", "stringData")
        ):
            found.append(f"metadata.annotations[{LAST_APPLIED}]")
    return tuple(found)
