"""A cache's phase on one cluster, derived from what provider-kubernetes observed there.

`Ready` is latched per fingerprint: once the Job for the current source completed, the
cluster stays Ready even after the Job is cleaned up. Only a new source (new fingerprint)
starts over.
"""

from dataclasses import dataclass

from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.provider_errors import reference_absent, remote_absent

from compose_model_cache.rows import (
    CLAIM_NOT_FOUND,
    FAILED,
    HYDRATING,
    PENDING,
    READY,
    TOKEN_SECRET_MISSING,
    ClusterPhase,
)


@dataclass(frozen=True)
class Observed:
    """The composed Objects of one cluster as Crossplane observed them (None: not there)."""

    claim: ObservedObject | None = None
    secret: ObservedObject | None = None
    job: ObservedObject | None = None


def secret_missing(secret: ObservedObject | None, name: str) -> bool:
    """provider-kubernetes says the user's Secret `name` it copies from does not exist; not
    when it cannot reach the cluster or finds no provider config (also "... not found")."""
    return secret is not None and reference_absent(secret.failure_message, name)


def derive_cluster_phase(
    observed: Observed,
    *,
    claim_name: str,
    namespace: str,
    cluster: str,
    byo_claim: bool,
    latched_ready: bool,
    backoff_limit: int,
    secret_ref: str | None = None,
    cache_namespace: str = "",
) -> ClusterPhase:
    """Pending (claim not bound / not found), Hydrating, Ready (latched), or Failed."""
    if latched_ready:
        return ClusterPhase(READY)
    # A brought claim is never created: until it is seen, it is looked for.
    looking = f"looking for claim {claim_name} in namespace {namespace} on cluster {cluster}"
    if observed.claim is None:
        if byo_claim:
            return ClusterPhase(PENDING, looking)
        return ClusterPhase(PENDING, f"creating claim {claim_name} in {namespace}")
    claim = observed.claim
    if claim.remote_phase != "Bound":
        # Missing only on the provider's word about this claim: an Object it has not
        # reconciled yet, or one it cannot reach the cluster for (or finds no provider config
        # for: "... not found" too), says nothing about the claim.
        if byo_claim and remote_absent(claim.failure_message, claim_name):
            return ClusterPhase(
                PENDING,
                f"claim {claim_name} not found in namespace {namespace} on cluster {cluster}; "
                "create it (ReadWriteMany) or remove storage.existingClaimName",
                CLAIM_NOT_FOUND,
            )
        if byo_claim and not claim.remote_seen:
            detail = claim.failure_message
            return ClusterPhase(PENDING, f"{looking}: {detail}" if detail else looking)
        phase = claim.remote_phase or "not yet observed"
        return ClusterPhase(PENDING, f"claim {claim_name} not bound ({phase})")
    if secret_ref and secret_missing(observed.secret, secret_ref):
        return ClusterPhase(
            PENDING,
            f"Secret {cache_namespace}/{secret_ref} not found on the control plane; "
            "create it to download this model",
            TOKEN_SECRET_MISSING,
        )
    if observed.job is None:
        return ClusterPhase(HYDRATING, "claim bound; starting the hydration Job")
    job = observed.job
    if job.remote_condition("Complete") or job.remote_succeeded > 0:
        return ClusterPhase(READY)
    failed = job.remote_condition("Failed")
    if failed:
        reason = failed.reason or "Failed"
        detail = failed.message or "the hydration Job failed"
        return ClusterPhase(FAILED, f"hydration failed ({reason}): {detail}")
    attempts = job.remote_failed
    if attempts:
        return ClusterPhase(
            HYDRATING, f"downloading; {attempts} of {backoff_limit + 1} attempts failed so far"
        )
    return ClusterPhase(HYDRATING, "downloading")
