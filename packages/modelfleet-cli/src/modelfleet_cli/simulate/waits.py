"""What the timeline says of an XR that waits on something Crossplane may not tell it of.

Crossplane runs an XR again when something it composed changes, or when the TTL its
functions' last response asked for runs out (a minute by default). An XR that waits on what
its function only reads (an InferenceCluster, a ModelCache), or on composed resources whose
events Crossplane's circuit breaker may drop (a cache's downloads, a deployment's rollout),
asks for less (`modelfleet_contracts.recheck`). The timeline says so when an XR starts
asking for less and when it stops, with the first value only: the value then grows as the
wait ages, and a line per change would bury the rest.
"""

from modelfleet_contracts.recheck import RECHECK_LAST

DEFAULT_SECONDS = int(RECHECK_LAST.total_seconds())  # the SDK's default TTL
WAITS = "waits on what Crossplane may not tell it of"
NO_LONGER = "no longer waits on what Crossplane may not tell it of"


def asks_soon(seconds: int | None) -> bool | None:
    """Whether a TTL asks for less than the default; None when no response said (a failed
    pipeline: Crossplane retries on its own error backoff)."""
    return None if seconds is None else seconds < DEFAULT_SECONDS


def wait_line(was_soon: bool | None, seconds: int | None) -> str | None:
    """The line for an XR whose last response asked for `seconds`, None when there is
    nothing new to say (`was_soon`: what it asked before; None when never seen)."""
    soon = asks_soon(seconds)
    if soon is None or soon == bool(was_soon):
        return None
    if soon:
        return f"{WAITS}: looked at again in {seconds} s"
    return f"{NO_LONGER}: looked at again in {DEFAULT_SECONDS} s (the default)"
