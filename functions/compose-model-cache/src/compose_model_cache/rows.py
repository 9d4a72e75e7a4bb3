"""A cluster's row: what a ModelCacheShard reports of each of its clusters, and what the
ModelCache lists of every matched cluster, read back from its shard.

A row is `{name, phase, reason?, message?, claimName, path, fingerprint, figures...}` (the
XRDs' `status.clusters[]`). `reason` names what blocks a cluster that is not Ready when
that is more than its phase (`CLAIM_NOT_FOUND`, `TOKEN_SECRET_MISSING`): the ModelCache's
ArtifactReady reason is read from it, never from a message.
"""

import re
from dataclasses import dataclass
from typing import Any

PENDING, HYDRATING, READY, FAILED = "Pending", "Hydrating", "Ready", "Failed"

# Why a cluster is not Ready, beyond its phase; the row's `reason`, and the ArtifactReady
# reason of the shard and of the ModelCache.
CLAIM_NOT_FOUND = "ClaimNotFound"
TOKEN_SECRET_MISSING = "TokenSecretMissing"
REASONS = (CLAIM_NOT_FOUND, TOKEN_SECRET_MISSING)

COMMIT = re.compile(r"^[0-9a-f]{40}$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")  # an OCI manifest's
GIB = 1024**3
MIB = 1024**2


def is_revision(value: object) -> bool:
    """A commit (HuggingFace) or a manifest digest (OCI): what a Job resolves its source to,
    and what a row's `resolvedRevision` and the pin carry."""
    return isinstance(value, str) and bool(COMMIT.match(value) or DIGEST.match(value))


def progress_text(done: int, total: int) -> str:
    """`37.2/120.0 GiB`; MiB below one GiB, so a small model does not read 0.0/0.0."""
    unit, size = ("GiB", GIB) if total >= GIB else ("MiB", MIB)
    return f"{done / size:.1f}/{total / size:.1f} {unit}"


@dataclass(frozen=True)
class ClusterPhase:
    phase: str
    message: str = ""
    problem: str = ""  # one of REASONS, when that is what blocks


def staging_under_way(phases: list[ClusterPhase]) -> bool:
    """Whether a cluster still waits for its claim or its download (Pending or Hydrating
    without a problem only its user can fix): what moves it is a change of a watched Object,
    and when many of an XR's Objects change at once Crossplane's circuit breaker drops such
    events (past a burst of 50 updates and one every 2 s, it opens for 5 minutes and lets one
    through every 30 s), so the XR asks to be looked at again soon
    (`recheck.recheck_after`: 5 s while rows move, slower as the wait ages) rather than
    wait for a dropped event or its default TTL."""
    return any(p.phase in (PENDING, HYDRATING) and not p.problem for p in phases)


def row_phase(row: dict[str, Any]) -> ClusterPhase:
    """The phase a row reports, with its reason when it is one of REASONS."""
    reason = row.get("reason")
    return ClusterPhase(
        str(row.get("phase") or ""),
        str(row.get("message") or ""),
        reason if reason in REASONS else "",
    )


def summary_progress(rows: list[dict[str, Any]]) -> str | None:
    """Bytes staged on all matched clusters out of what they need, once every one of them
    has reported its total (a partial sum would read as further along than it is)."""
    if not rows or any("bytesDone" not in r for r in rows):
        return None
    return progress_text(sum(r["bytesDone"] for r in rows), sum(r["bytesTotal"] for r in rows))


def cache_status(rows: list[dict[str, Any]], pin: dict[str, Any] | None) -> dict[str, Any]:
    """A cache's (or a shard's) status from its rows: the `ready/matched` summary, the
    fleet's progress once every row reported its total, and the pin."""
    ready = sum(1 for row in rows if row.get("phase") == READY)
    summary = {"ready": f"{ready}/{len(rows)}"}
    if progress := summary_progress(rows):
        summary["progress"] = progress
    status: dict[str, Any] = {"summary": summary, "clusters": rows}
    if pin:
        status["pinnedRevision"] = pin
    return status
