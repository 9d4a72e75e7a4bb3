"""A cache's phase on one cluster, derived from what provider-kubernetes observed there.

`Ready` is latched per fingerprint: once the Job for the current source completed, the
cluster stays Ready even after the Job is cleaned up. Only a new source (new fingerprint)
starts over.
"""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.objects import remote_status

PENDING, HYDRATING, READY, FAILED = "Pending", "Hydrating", "Ready", "Failed"

# Why a cluster is not Ready, beyond its phase; feeds the ArtifactReady reason.
CLAIM_NOT_FOUND = "ClaimNotFound"
TOKEN_SECRET_MISSING = "TokenSecretMissing"


@dataclass(frozen=True)
class ClusterPhase:
    phase: str
    message: str = ""
    problem: str = ""  # CLAIM_NOT_FOUND / TOKEN_SECRET_MISSING, when that is what blocks


@dataclass(frozen=True)
class Observed:
    """The composed Objects of one cluster as Crossplane observed them (None: not there)."""

    claim: dict[str, Any] | None = None
    secret: dict[str, Any] | None = None
    job: dict[str, Any] | None = None


def _false_condition_message(obj: dict[str, Any]) -> str:
    """The message of the Object's first False Synced/Ready condition, if any."""
    for c in list_at(mapping_at(obj, "status"), "conditions"):
        if isinstance(c, dict) and c.get("status") == "False" and c.get("message"):
            return str(c["message"])
    return ""


def _mentions_missing(message: str) -> bool:
    text = message.lower()
    return "not found" in text or "does not exist" in text or "notfound" in text


def _true(conditions: list[Any], typ: str) -> dict[str, Any] | None:
    for c in conditions:
        if isinstance(c, dict) and c.get("type") == typ and c.get("status") == "True":
            return c
    return None


def secret_missing(secret: dict[str, Any] | None) -> bool:
    """provider-kubernetes could not copy the user's Secret (it reports that on the Object)."""
    return secret is not None and _mentions_missing(_false_condition_message(secret))


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
    if observed.claim is None:
        return ClusterPhase(PENDING, f"creating claim {claim_name} in {namespace}")
    claim_status = remote_status(observed.claim)
    if claim_status.get("phase") != "Bound":
        problem = _false_condition_message(observed.claim)
        if byo_claim and (_mentions_missing(problem) or not claim_status):
            return ClusterPhase(
                PENDING,
                f"claim {claim_name} not found in namespace {namespace} on cluster {cluster}; "
                "create it (ReadWriteMany) or remove storage.existingClaimName",
                CLAIM_NOT_FOUND,
            )
        phase = claim_status.get("phase") or "not yet observed"
        return ClusterPhase(PENDING, f"claim {claim_name} not bound ({phase})")
    if secret_ref and secret_missing(observed.secret):
        return ClusterPhase(
            PENDING,
            f"Secret {cache_namespace}/{secret_ref} not found on the control plane; "
            "create it to download this model",
            TOKEN_SECRET_MISSING,
        )
    if observed.job is None:
        return ClusterPhase(HYDRATING, "claim bound; starting the hydration Job")
    job = remote_status(observed.job)
    conditions = list_at(job, "conditions")
    if _true(conditions, "Complete") or (job.get("succeeded") or 0) > 0:
        return ClusterPhase(READY)
    failed = _true(conditions, "Failed")
    if failed:
        reason = failed.get("reason") or "Failed"
        detail = failed.get("message") or "the hydration Job failed"
        return ClusterPhase(FAILED, f"hydration failed ({reason}): {detail}")
    attempts = int(job.get("failed") or 0)
    if attempts:
        return ClusterPhase(
            HYDRATING, f"downloading; {attempts} of {backoff_limit + 1} attempts failed so far"
        )
    return ClusterPhase(HYDRATING, "downloading")
