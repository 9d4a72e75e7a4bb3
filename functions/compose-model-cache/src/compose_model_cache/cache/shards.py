"""Which shard stages the cache on which cluster, and what each shard is told.

A ModelCache composes one ModelCacheShard per `SHARD_SIZE` matched clusters. A cluster stays
in the shard that has it (read back from the shards observed, so nothing else needs to
remember it): moving it would delete its claim under one shard and create it under another.
A new cluster joins the first shard with room, in the order of the shards' keys, then a new
shard. A shard whose clusters all stopped matching is left out, and Crossplane deletes it
with what it composed, as it would a cluster's objects.
"""

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from modelfleet_contracts.api import API_VERSION, MODEL_CACHE, MODEL_CACHE_SHARD
from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.labels import owner_labels

# Clusters per shard. A shard's reconcile applies its clusters' claims, Secrets and Jobs
# (three Objects each): 32 keeps that well inside Crossplane's reconcile deadline on a busy
# control plane, and a shard's request and response small (docs/modelcache.md).
SHARD_SIZE = 32
SHARD_KEY_PREFIX = "shard-"
REVISION_LEN = 12

# What a shard is told of a cluster's previous row (its `staged`), once: enough to keep a
# Ready cluster latched and its figures (shard/plan.py).
STAGED_FIELDS = ("phase", "fingerprint", "bytesTotal", "resolvedRevision")


def shard_key(index: int) -> str:
    return f"{SHARD_KEY_PREFIX}{index}"


def shard_index(key: str) -> int | None:
    tail = key.removeprefix(SHARD_KEY_PREFIX)
    return int(tail) if key.startswith(SHARD_KEY_PREFIX) and tail.isdigit() else None


@dataclass(frozen=True)
class ObservedShard:
    """A shard as observed: the clusters its spec lists, the rows and pin it reports."""

    clusters: tuple[str, ...]
    # Its rows by cluster: the fields the ModelCache decides on (rows.py)...
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    # ...and each row whole, as the edge read it (`Verbatim`), to list as it is reported.
    written: dict[str, Any] = field(default_factory=dict)
    pinned: dict[str, Any] = field(default_factory=dict)
    conditions: dict[str, dict[str, Any]] = field(default_factory=dict)


def assign_shards(
    matched: Iterable[str], observed: dict[str, ObservedShard], size: int = SHARD_SIZE
) -> dict[str, list[str]]:
    """Shard key -> its matched clusters (sorted), every matched cluster in exactly one."""
    wanted = sorted(set(matched))
    matching = set(wanted)
    members: dict[str, list[str]] = {}
    placed: set[str] = set()
    for key in sorted(observed, key=lambda k: (shard_index(k) or 0, k)):
        if shard_index(key) is None:
            continue
        # A cluster two shards list (never composed so; a shard edited by hand) stays in
        # both: leaving it out of one would delete the claim both compose.
        keep = [c for c in observed[key].clusters if c in matching]
        placed.update(keep)
        members[key] = keep
    index = 0
    for cluster in (c for c in wanted if c not in placed):
        while len(members.get(shard_key(index), [])) >= size:
            index += 1
        members.setdefault(shard_key(index), []).append(cluster)
    return {key: sorted(names) for key, names in members.items() if names}


def shard_entry(name: str, staged: dict[str, Any] | None) -> dict[str, Any]:
    """A cluster as a shard's spec lists it: its name, and what was staged there before."""
    entry: dict[str, Any] = {"name": name}
    if staged:
        entry["staged"] = {k: staged[k] for k in STAGED_FIELDS if staged.get(k) is not None}
    return entry


def clusters_revision(views: Iterable[ClusterView]) -> str:
    """A digest of what the shard reads of its clusters. Crossplane watches a shard's spec,
    not the InferenceClusters it reads: this changes when they do, so the shard looks again
    as soon as the ModelCache does, without the ModelCache copying them into every shard."""
    facts = [
        (
            v.name,
            v.connected,
            v.provider_config_name,
            v.workload_namespace,
            v.storage_class_name if v.has_shared_storage else None,
            v.hydrator_service_account,
        )
        for v in sorted(views, key=lambda v: v.name)
    ]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:REVISION_LEN]


def shard_resource(
    cache: str,
    namespace: str,
    spec: dict[str, Any],
    pinned: dict[str, Any] | None,
    entries: list[dict[str, Any]],
    revision: str,
) -> dict[str, Any]:
    """The ModelCacheShard composed for `entries`; Crossplane names it after the cache."""
    shard_spec: dict[str, Any] = {
        "cacheName": cache,
        # Not Crossplane's own fields of the cache (its composition, its resource refs), nor
        # where it is staged (the ModelCache decides that, footprint.py).
        "cache": {
            k: v for k, v in spec.items() if k not in ("clusterSelector", "crossplane", "staging")
        },
        "clusters": entries,
        "clustersRevision": revision,
    }
    if pinned:
        shard_spec["pinnedRevision"] = pinned
    return {
        "apiVersion": API_VERSION,
        "kind": MODEL_CACHE_SHARD,
        "metadata": {"labels": owner_labels(MODEL_CACHE, cache, namespace)},
        "spec": shard_spec,
    }
