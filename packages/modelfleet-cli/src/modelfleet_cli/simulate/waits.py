"""When Crossplane next runs an XR, as the timeline says it: `next check in 5 s: waiting for
ArtifactReady (Hydrating)`.

Crossplane runs an XR again when something it composed changes, or when the TTL its
functions' last response asked for runs out (a minute by default). An XR that waits on what
its function only reads (an InferenceCluster, a ModelCache), or on composed resources whose
events Crossplane's circuit breaker may drop (a cache's downloads, a deployment's rollout),
asks for less (`modelfleet_contracts.recheck`). The timeline says so when an XR starts
asking for less, naming the condition it waits for, and when it is back to the default, with
the first value only: the value then grows as the wait ages, and a line per change would
bury the rest.
"""

from collections.abc import Mapping
from typing import Any

from modelfleet_contracts.outcome import RESOLVING
from modelfleet_contracts.recheck import RECHECK_LAST

DEFAULT_SECONDS = int(RECHECK_LAST.total_seconds())  # the SDK's default TTL
NEXT_CHECK = "next check in "
# How the line of an XR back on the default TTL starts.
BACK_TO_DEFAULT = f"{NEXT_CHECK}{DEFAULT_SECONDS} s (the default)"
# Crossplane's own conditions on every XR (Responsive: its watch circuit breaker).
SYSTEM = ("Synced", "Ready", "Responsive")


def asks_soon(seconds: int | None) -> bool | None:
    """Whether a TTL asks for less than the default; None when no response said (a failed
    pipeline: Crossplane retries on its own error backoff)."""
    return None if seconds is None else seconds < DEFAULT_SECONDS


def holding(conditions: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The XR's own condition that keeps it waiting (type -> condition): one held while
    Crossplane has not resolved what the function reads (reason Resolving, whatever its
    status), else the first False; None when there is none."""
    own = [c for t, c in conditions.items() if t not in SYSTEM]
    held = next((c for c in own if c.get("reason") == RESOLVING), None)
    return held or next((c for c in own if c.get("status") == "False"), None)


def waited_for(conditions: Mapping[str, Mapping[str, Any]]) -> str | None:
    """`Type (Reason)` of what the XR waits for, as `kubectl describe` lists its conditions."""
    condition = holding(conditions)
    if condition is None:
        return None
    return f"{condition.get('type')} ({condition.get('reason', 'no reason yet')})"


def wait_line(was_soon: bool | None, seconds: int | None, waiting: str | None) -> str | None:
    """The line for an XR whose last response asked for `seconds`, None when there is
    nothing new to say (`was_soon`: what it asked before, None when never seen; `waiting`:
    what it waits for, `waited_for`)."""
    soon = asks_soon(seconds)
    if soon is None or soon == bool(was_soon):
        return None
    if soon:
        return f"{NEXT_CHECK}{seconds} s: waiting for {waiting or 'what it reads to settle'}"
    if waiting is None:
        return f"{BACK_TO_DEFAULT}: nothing left to wait for"
    # Crossplane runs it as soon as what it composed changes: no need to ask sooner.
    return f"{BACK_TO_DEFAULT}, or as soon as what it composed changes: waiting for {waiting}"
