"""Handing the unsharded layout over to the shards, losing nothing.

In the unsharded layout (the v0.1.0 release's) every cluster's claim, credentials Secret and
hydration Job (with its access) is an Object composed on the ModelCache itself. A shard
composes the same remote objects under Objects of its own. Left out of the ModelCache's
desired state, the ModelCache's Objects would be deleted by Crossplane, and their remote
objects by provider-kubernetes: the claim with the weights. So such an Object whose remote
object must stay (a claim, a Secret, a Job still running) is composed again as Observe-only
(provider-kubernetes deletes nothing remote for an Object without the Delete policy) and
left out only once it is observed so and the cluster's shard reports the cluster. What the
unsharded layout deletes anyway (a finished Job, an older source's Job, access no running
Job needs) is left out at once, remote object and all.
"""

import copy
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.api import OBJECT_API_VERSION, OBJECT_KIND
from modelfleet_contracts.observed import ObservedObject

from compose_model_cache.keys import hydration_keys, is_access_key

OBSERVE_ONLY = ("Observe",)


@dataclass(frozen=True)
class LegacyObject:
    """An Object of the unsharded layout, composed on the ModelCache, as observed."""

    facts: ObservedObject
    spec: dict[str, Any]  # its whole spec, to compose it again with another policy

    @property
    def observe_only(self) -> bool:
        return tuple(self.spec.get("managementPolicies") or ()) == OBSERVE_ONLY


def finished(job: ObservedObject) -> bool:
    return bool(
        job.remote_condition("Complete") or job.remote_condition("Failed") or job.remote_succeeded
    )


def observe_only(obj: LegacyObject) -> dict[str, Any]:
    """`obj` composed again, Observe-only: its remote object stays when the Object goes."""
    spec = copy.deepcopy(obj.spec)
    spec["managementPolicies"] = list(OBSERVE_ONLY)
    return {"apiVersion": OBJECT_API_VERSION, "kind": OBJECT_KIND, "spec": spec}


@dataclass
class Handover:
    """What becomes of the old Objects this reconcile."""

    desired: dict[str, dict[str, Any]]  # composed again, Observe-only
    kept: list[str]  # unchanged, for now
    pending: bool  # anything still to hand over: look again soon

    @property
    def done(self) -> bool:
        return not self.desired and not self.kept


def cluster_part(key: str) -> str:
    """The cluster's part (`composed_key(cluster)`) of a key composed for one cluster."""
    for suffix in ("-claim", "-creds"):
        if key.endswith(suffix):
            return key.removesuffix(suffix)
    parts = hydration_keys([key])
    return next(iter(parts), "")


def hand_over(
    legacy: dict[str, LegacyObject],
    clusters: dict[str, str],
    blocked: set[str],
    reported: set[str],
    ready: set[str],
    current_jobs: set[str],
) -> Handover:
    """`legacy`: the old Objects by key. `clusters`: the key part (composed_key) of every
    matched cluster -> its name; an Object of another cluster is left out, as before.
    `blocked`: clusters nothing can be staged on now (everything there is kept as it is).
    `reported`: clusters whose shard reports them; `ready`: of those, the Ready ones.
    `current_jobs`: the keys of old Jobs that hydrate the current source (keys.current_job_keys)."""
    out = Handover({}, [], False)
    running: dict[str, bool] = {}  # cluster part -> an old Job there still runs
    for key, obj in legacy.items():
        if not is_access_key(key) and not key.endswith(("-claim", "-creds")):
            part = cluster_part(key)
            running[part] = running.get(part, False) or not finished(obj.facts)
    for key in sorted(legacy):
        obj, part = legacy[key], cluster_part(key)
        cluster = clusters.get(part)
        if cluster is None:
            continue  # no longer matched: its objects go, as they always did
        if cluster in blocked:
            out.kept.append(key)
            out.pending = True
            continue
        if is_access_key(key):
            # A running Job's pod reports through this access until its shard sees it done.
            if running.get(part) and cluster not in ready:
                out.kept.append(key)
                out.pending = True
            continue
        is_job = not key.endswith(("-claim", "-creds"))
        if is_job and (finished(obj.facts) or key not in current_jobs):
            continue  # a finished Job, an older source's: they went as soon as seen so
        if obj.observe_only and cluster in reported:
            continue  # the shard composes it now; this Object goes, its remote object stays
        out.desired[key] = observe_only(obj)
        out.pending = True
    return out
