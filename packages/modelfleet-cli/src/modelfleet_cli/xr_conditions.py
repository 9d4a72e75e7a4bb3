"""XR conditions as Crossplane writes them: set by type, `lastTransitionTime` kept while a
condition does not change, and the "Unready resources" message of the Ready condition."""

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

# Crossplane v2.3 marks this on every XR at the start of every reconcile, whatever follows
# (a paused XR, a failing pipeline): its watch circuit breaker is closed. It opens (False,
# WatchCircuitOpen) only when watch events about the XR flood in, which a simulated round,
# one reconcile per XR, never does.
RESPONSIVE = {"type": "Responsive", "status": "True", "reason": "WatchCircuitClosed"}


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def unready_message(names: Iterable[str]) -> str:
    """Crossplane's "Unready resources: a, b, c, and 2 more"."""
    ordered = sorted(names)
    shown = ", ".join(ordered[:3])
    if len(ordered) > 3:
        shown += f", and {len(ordered) - 3} more"
    return f"Unready resources: {shown}"


def set_conditions(
    obj: dict[str, Any], conditions: Iterable[Mapping[str, str]], now: datetime | None = None
) -> None:
    """Set conditions by type on `obj`'s status, keeping lastTransitionTime (and the
    condition as it is) when type, status, reason and message are unchanged."""
    status = obj.setdefault("status", {})
    if not isinstance(status, dict):
        status = obj["status"] = {}
    existing = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    stamp = rfc3339(now or datetime.now(UTC))
    for new in conditions:
        same_type = next((c for c in existing if c.get("type") == new["type"]), None)
        if same_type is not None and all(
            same_type.get(k, "") == new.get(k, "") for k in ("status", "reason", "message")
        ):
            continue
        replacement = dict(new, lastTransitionTime=stamp)
        if same_type is None:
            existing.append(replacement)
        else:
            existing[existing.index(same_type)] = replacement
    status["conditions"] = existing
