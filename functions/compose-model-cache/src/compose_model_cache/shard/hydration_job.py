"""The current source's hydration Job on one cluster: managed while it runs, only watched
(Observe and Delete) once it finished, kept as observed while it cannot be decided about, or
waiting to start (for the cluster's hydrator account)."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.outcome import Outcome

from compose_model_cache.keys import access_keys
from compose_model_cache.rows import FAILED, PENDING, READY, ClusterPhase
from compose_model_cache.shard.existing import Existing, keeping_fixed_fields
from compose_model_cache.shard.manifests import CacheRef


@dataclass(frozen=True)
class OnCluster:
    """What a cluster's composition is decided on, besides the cache."""

    view: ClusterView
    blocked: str | None  # why nothing can be staged there now (why_cannot_stage)
    job_keys: tuple[str, ...]  # of the current source's Job (keys.current_job_keys)
    # The current source's Job as observed; None when its Object still echoes another Job
    # (re-pointed by an earlier release, the new one not observed yet): never its state.
    job: ObservedObject | None
    hydration: list[str]  # observed keys of its hydration Jobs (any source) and their access


def compose_job(
    cache: CacheRef,
    here: OnCluster,
    phase: ClusterPhase,
    observed: dict[str, ObservedObject],
    outcome: Outcome,
    values: dict[str, Any],
    existing: dict[str, Existing],
) -> ClusterPhase:
    """The current source's hydration Job on a cluster that can stage; the phase, or why the
    Job waits to start.

    While the Job runs it is composed in full. Once it is seen finished (Complete, or Failed
    for good) its Object turns Observe-and-Delete (manifests.finished_job_object):
    it stays, so nothing is deleted on the control plane when a hydration ends; Kubernetes
    deletes the Job after its TTL, and the Object, which no longer creates, does not bring it
    back. `Ready` stays latched through status.clusters[].fingerprint (phases.py), a failed
    Job's reason through the Object's last echo. Were the status ever lost, a Job composed
    again finds the completion marker and fetches nothing. A cluster that staged before its
    Object was kept (earlier releases dropped it) gets none.

    Jobs started by earlier releases ran under access of their own (a ServiceAccount, Role
    and RoleBinding named after the Job, keys.access_keys): a Job's pod template is fixed,
    so a running one keeps them until it finishes; then they are left out, deleted once.
    A changed source gets a new Job under a new key (keys.py): the old source's Objects are
    left out, whatever their state, and deleted with their Job."""
    desired, view = outcome.desired, here.view
    job_key, *twins = here.job_keys
    # Every Object asking for the Job (keys.current_job_keys): they go, or only watch, together.
    asking = [k for k in here.job_keys if k in observed]
    legacy_access = [a for k in here.job_keys for a in access_keys(k).values() if a in observed]
    if phase.phase in (READY, FAILED):
        for key in asking:
            # As the Job exists (its fixed fields as the server has them): the Object's
            # provider dry-runs an apply of it on every poll (manifests.finished_job_object).
            found = existing.get(key)
            if view.hydrator_service_account or (found and found.name == cache.job_name):
                desired[key] = keeping_fixed_fields(cache.finished_job_shape.stamp(values), found)
            else:
                outcome.kept.append(key)  # nothing to compose its template from: as it is
        return phase
    if phase.problem:
        # The claim or the token went missing: never cut a running download.
        outcome.kept += asking + legacy_access
        return phase
    if job_key not in observed and not view.hydrator_service_account:
        # Its Jobs run under the cluster's hydrator account: wait until it is there, and look
        # again soon (Crossplane does not watch InferenceClusters).
        outcome.recheck_soon = True
        return ClusterPhase(
            PENDING,
            f"waiting for InferenceCluster {view.name} to report its hydrator "
            "ServiceAccount (status.hydratorServiceAccount)",
        )
    found = existing.get(job_key)
    if view.hydrator_service_account or (found and found.name == cache.job_name):
        # A Job that exists keeps its pod template (its account with it) as it is.
        desired[job_key] = keeping_fixed_fields(cache.job_shape.stamp(values), found)
        outcome.kept += twins  # another Object asking for the same Job goes with it, not before
    else:
        # Observed but not echoed yet, and no account to compose a template with: as it is.
        outcome.kept += asking
    outcome.kept += legacy_access
    return phase
