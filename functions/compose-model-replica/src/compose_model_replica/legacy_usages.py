"""Retiring the Usages a ModelReplica composed in releases where it, not its ModelDeployment,
composed them (`model-cache-usage`, `inference-cluster-usage`, each `by` the replica itself).

Such a Usage is controlled by the replica. Crossplane deletes a composed Usage whose `by`
exists only once that `by` is gone, and deletes a replica its deployment drops in the
foreground, so the replica would wait for the Usage and the Usage for the replica, for good.
Left out of the desired state while it still names the replica, the Usage would start that wait
at once.

So a legacy Usage is retired in two steps. First it is composed again so that its `by` names
nothing that exists, with the same `of`, `reason` and `replayDeletion` (it still protects what
it protected, next to the deployment's own Usages of the same cache and cluster): without `by`
where its `of` is in its own namespace (the cache), and, where its `of` is cross-namespace
(the cluster-scoped InferenceCluster, which Crossplane's schema allows only with a `by`), with
a `by` naming a ModelReplica no one can create (an upper-case name). Once observed so, it is
left out, and Crossplane deletes it without waiting for anything. A response that holds
everything as it is (an input not resolved, an invalid spec) holds these Usages as they are.
"""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.outcome import Outcome

# The composition-resource-names under which earlier releases composed the replica's Usages.
LEGACY_USAGE_KEYS = ("model-cache-usage", "inference-cluster-usage")
# The labels a legacy Usage is composed again with: its own, not the ones Crossplane sets.
OWN_LABEL_PREFIX = "modelfleet.io/"
# Prefixed to the replica's name, the `by` of a retired cross-namespace Usage: object names are
# lower-case DNS names, so no ModelReplica is ever called that.
RETIRED_BY_PREFIX = "Retired-"


@dataclass(frozen=True)
class LegacyUsage:
    """What a legacy Usage holds, as observed: its apiVersion, kind, labels, `spec.of`,
    `spec.reason` and `spec.replayDeletion`, and whether it still names a `by`."""

    api_version: str
    kind: str
    labels: dict[str, str]
    of: dict[str, Any]
    reason: str
    replay_deletion: bool
    by: dict[str, Any] | None

    @property
    def cross_namespace(self) -> bool:
        """Its `of` names a namespace (Crossplane's schema then requires a `by`)."""
        ref = self.of.get("resourceRef")
        return isinstance(ref, dict) and "namespace" in ref

    @property
    def retired(self) -> bool:
        """Its `by`, if any, names nothing that can exist: deleted, it waits for nothing."""
        if self.by is None:
            return True
        ref = self.by.get("resourceRef")
        name = ref.get("name") if isinstance(ref, dict) else None
        return isinstance(name, str) and name.startswith(RETIRED_BY_PREFIX)


def read_legacy_usage(observed: dict[str, Any]) -> LegacyUsage | None:
    """A legacy Usage as observed (plain data); None when it is not a Usage with an `of`."""
    spec = observed.get("spec")
    if observed.get("kind") != "Usage" or not isinstance(spec, dict):
        return None
    of = spec.get("of")
    if not isinstance(of, dict):
        return None
    metadata = observed.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    labels = labels if isinstance(labels, dict) else {}
    reason = spec.get("reason")
    by = spec.get("by")
    return LegacyUsage(
        api_version=str(observed.get("apiVersion", "")),
        kind="Usage",
        labels={
            str(k): str(v)
            for k, v in labels.items()
            if str(k).startswith(OWN_LABEL_PREFIX) and isinstance(v, str)
        },
        of=of,
        reason=reason if isinstance(reason, str) else "",
        replay_deletion=spec.get("replayDeletion") is True,
        by=by if isinstance(by, dict) else None,
    )


def retired(usage: LegacyUsage) -> dict[str, Any]:
    """The Usage as composed again: everything it protected, a `by` that names nothing."""
    spec: dict[str, Any] = {"of": usage.of, "replayDeletion": usage.replay_deletion}
    if usage.reason:
        spec["reason"] = usage.reason
    if usage.cross_namespace and usage.by is not None:
        ref = usage.by.get("resourceRef")
        name = ref.get("name") if isinstance(ref, dict) else ""
        spec["by"] = {
            "apiVersion": usage.by.get("apiVersion"),
            "kind": usage.by.get("kind"),
            "resourceRef": {"name": f"{RETIRED_BY_PREFIX}{name}"},
        }
    return {
        "apiVersion": usage.api_version,
        "kind": usage.kind,
        "metadata": {"labels": dict(usage.labels)},
        "spec": spec,
    }


def retire_legacy_usages(out: Outcome, legacy: dict[str, LegacyUsage]) -> Outcome:
    """`out` with each legacy Usage (by composition-resource-name) composed again retired
    while it is not, and left out once it is; `out` as it is when it holds everything."""
    if out.keep_everything:
        return out
    for key, usage in sorted(legacy.items()):
        if not usage.retired:
            out.desired[key] = retired(usage)
    return out
