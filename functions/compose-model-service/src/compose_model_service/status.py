"""The ModelService's status and its condition, Routed, from each cluster's row."""

from dataclasses import dataclass, field
from typing import Any

from modelfleet_contracts.conditions import Status, listed

CONDITION = "Routed"
# Routed reasons that mean "work under way": their transitions are Normal events.
PROGRESS_REASONS = frozenset({"Pending"})


@dataclass(frozen=True)
class ClusterRow:
    """One cluster: whether its route sends traffic, why (reason and message), the model's
    address through its Gateway, and each backend's row (backends.BackendDecision.as_row)."""

    name: str
    routed: bool
    reason: str
    message: str
    address: str | None = None
    backends: list[dict[str, Any]] = field(default_factory=list)
    # Counted in `x/y clusters routed`: False where every backend has weight 0 (the user
    # routes nothing there).
    counted: bool = True

    def as_status(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "name": self.name,
            "routed": self.routed,
            "reason": self.reason,
            "message": self.message,
            "backends": self.backends,
        }
        if self.address:
            row["address"] = self.address
        return row


def service_status(
    weights: str, rows: list[ClusterRow], missing: list[str]
) -> tuple[dict[str, Any], list[Status], bool]:
    """(status, [Routed], ready). Ready once every cluster where a backend serves is
    routed (clusters where every backend has weight 0 aside). `missing`: the
    ModelDeployments the spec names that do not exist."""
    every = rows
    rows = [r for r in every if r.counted]
    routed = [r for r in rows if r.routed]
    status: dict[str, Any] = {
        "weights": weights,
        "summary": {"routed": f"{len(routed)}/{len(rows)}"},
        "clusters": [r.as_status() for r in every],
    }
    gone = f"; ModelDeployment {listed(missing)} not found" if missing else ""
    if not rows:
        condition = Status.false(
            CONDITION, "NoBackends", f"no backend serves on any cluster yet{gone}"
        )
    elif len(routed) == len(rows):
        condition = Status.true(
            CONDITION, "Routed", f"routed on {listed([r.name for r in rows])}{gone}"
        )
    else:
        held = [f"{r.name} ({r.reason})" for r in rows if not r.routed]
        reason = "Partial" if routed else "NotRouted"
        condition = Status.false(
            CONDITION,
            reason,
            f"routed on {len(routed)}/{len(rows)} clusters; not on {listed(held)}{gone}",
        )
    return status, [condition], bool(rows) and len(routed) == len(rows)
