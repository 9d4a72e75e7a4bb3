"""Conditions: what a function reports (`Status`) and the one reader of the conditions
Kubernetes objects carry (`status.conditions`, a list of mappings with a `type`)."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.fields import list_at, mapping_at

# A condition's message names at most this many clusters (or other items): it is read in
# `kubectl describe` and carried by events, and every cluster's own row says the rest.
LISTED = 10


def listed(items: Iterable[str], limit: int = LISTED) -> str:
    """`items` comma-separated, the ones past `limit` counted instead of named (`a, b and 3
    more`), so that a message about a 1000-cluster fleet stays a line."""
    items = list(items)
    if len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} and {len(items) - limit} more"


@dataclass(frozen=True)
class Status:
    """One condition the function reports on its XR."""

    type: str
    status: bool
    reason: str
    message: str = ""

    @classmethod
    def true(cls, typ: str, reason: str, message: str = "") -> "Status":
        return cls(typ, True, reason, message)

    @classmethod
    def false(cls, typ: str, reason: str, message: str = "") -> "Status":
        return cls(typ, False, reason, message)

    @property
    def status_text(self) -> str:
        return "True" if self.status else "False"

    def as_condition(self) -> dict[str, str]:
        """This condition as a Kubernetes object's status carries it."""
        return condition_dict(self.type, self.status_text, self.reason, self.message)


def condition_dict(typ: str, status: str, reason: str, message: str = "") -> dict[str, str]:
    """A condition as Kubernetes writes it (`status` "True", "False" or "Unknown"); the
    message only when there is one."""
    condition = {"type": typ, "status": status, "reason": reason}
    if message:
        condition["message"] = message
    return condition


def condition_in(status: Any, typ: str) -> dict[str, Any]:
    """The first condition of type `typ` in `status["conditions"]`; `{}` when there is none
    (a status, list or condition of another shape reads as none, never raises)."""
    for c in list_at(status, "conditions"):
        if isinstance(c, dict) and c.get("type") == typ:
            return c
    return {}


def condition_true(status: Any, typ: str) -> bool:
    """Whether `status` carries a condition `typ` whose status is "True"."""
    return condition_in(status, typ).get("status") == "True"


def previous_condition(observed_xr: dict[str, Any], typ: str) -> dict[str, Any] | None:
    """The condition of type `typ` the XR carried when this reconcile began."""
    return condition_in(mapping_at(observed_xr, "status"), typ) or None


def is_transition(observed_xr: dict[str, Any], condition: Status) -> bool:
    """Whether `condition` differs (status or reason) from what the XR already shows."""
    before = previous_condition(observed_xr, condition.type)
    if before is None:
        return True
    return before.get("status") != condition.status_text or before.get("reason") != condition.reason
