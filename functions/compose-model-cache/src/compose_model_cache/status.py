"""The ModelCache's conditions: ClustersMatched and ArtifactReady, with the reasons
docs/modelcache.md lists."""

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.conditions import Status, listed

from compose_model_cache.rows import (
    CLAIM_NOT_FOUND,
    FAILED,
    HYDRATING,
    PENDING,
    READY,
    TOKEN_SECRET_MISSING,
    ClusterPhase,
)

# Conditions a shard reports of its own clusters and the ModelCache of all of them
# (claim_size.py, credentials.py).
CLAIMS_SIZED = "ClaimsSized"
CREDENTIALS_REDACTED = "CredentialsRedacted"

# ArtifactReady reasons that mean "work under way": their transitions are Normal events.
PROGRESS_REASONS = frozenset({"Hydrating", "Partial"})


def _names(views: list[ClusterView], phases: list[ClusterPhase], want: str) -> list[str]:
    return [v.name for v, p in zip(views, phases, strict=True) if p.phase == want]


def _first(views: list[ClusterView], phases: list[ClusterPhase], problem: str) -> str | None:
    for v, p in zip(views, phases, strict=True):
        if p.problem == problem:
            return f"{v.name}: {p.message}"
    return None


def cache_conditions(views: list[ClusterView], phases: list[ClusterPhase]) -> list[Status]:
    if not views:
        message = "no InferenceCluster matches spec.clusterSelector"
        return [
            Status.false("ClustersMatched", "NoClusters", message),
            Status.false("ArtifactReady", "NoClusters", message),
        ]
    ready = _names(views, phases, READY)
    matched = Status.true(
        "ClustersMatched",
        "Matched",
        f"{len(views)} cluster(s) match: {listed(v.name for v in views)}",
    )
    failed = _names(views, phases, FAILED)
    if failed:
        detail = next(p.message for p in phases if p.phase == FAILED)
        artifact = Status.false(
            "ArtifactReady", "Failed", f"hydration failed on {listed(failed)}: {detail}"
        )
    elif missing_token := _first(views, phases, TOKEN_SECRET_MISSING):
        artifact = Status.false("ArtifactReady", "TokenSecretMissing", missing_token)
    elif missing_claim := _first(views, phases, CLAIM_NOT_FOUND):
        artifact = Status.false("ArtifactReady", "ClaimNotFound", missing_claim)
    elif len(ready) == len(views):
        artifact = Status.true("ArtifactReady", "Staged", f"staged on {len(ready)} cluster(s)")
    elif ready:
        waiting = [v.name for v in views if v.name not in ready]
        artifact = Status.false(
            "ArtifactReady",
            "Partial",
            f"ready on {len(ready)}/{len(views)} clusters; waiting for {listed(waiting)}",
        )
    else:
        artifact = Status.false("ArtifactReady", "Hydrating", _under_way(views, phases))
    return [matched, artifact]


def _under_way(views: list[ClusterView], phases: list[ClusterPhase]) -> str:
    """Hydrating's message, with no cluster Ready: how many clusters stage, and why the first
    pending one waits (its row's message), so that a fleet where none can stage (no RWX
    storage, not connected) is not said to be staging."""
    staging = _names(views, phases, HYDRATING)
    pending = _names(views, phases, PENDING)
    first = next(
        (
            f"{v.name}: {p.message}"
            for v, p in zip(views, phases, strict=True)
            if p.phase == PENDING
        ),
        "",
    )
    if not staging:
        return f"nothing staging yet: {len(pending)} cluster(s) pending (first: {first})"
    under_way = f"staging on {len(staging)} of {len(views)} cluster(s)"
    if not pending:
        return under_way
    return f"{under_way}; pending: {listed(pending)} (first: {first})"
