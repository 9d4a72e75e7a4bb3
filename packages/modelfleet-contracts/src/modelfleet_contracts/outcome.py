"""What a function's core decides: desired resources, status, conditions, readiness.
`edge.outcome.apply_outcome` writes it into the response the same way everywhere."""

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from modelfleet_contracts.conditions import Status, previous_condition
from modelfleet_contracts.stamps import Stamp

# The reason on a function's main condition while Crossplane has not resolved what it reads.
RESOLVING = "Resolving"


@dataclass
class Outcome:
    """Desired composed resources, XR status, conditions and readiness.

    `kept`: names of observed composed resources to carry forward unchanged (what the
    function cannot decide about for now); copied at the protobuf level, never converted.
    `kept_changes`: of those, the few values to set once carried (by path, e.g.
    `("spec", "replicas")`); everything else stays as observed.
    `keep_everything`: the input could not be acted on (unresolved requirement, invalid
    spec), so every observed composed resource and the previous status are kept as they are
    and only `conditions` say why.
    `recheck_soon`: the XR waits on something Crossplane does not watch (a required
    resource), or on watched changes too many to all come through (a mass download, whose
    events Crossplane's circuit breaker drops); ask to be run again sooner than the default
    TTL (recheck.py).
    `recheck_in`: ask to be run again after this long, a pace the function keeps itself
    (a lost cluster's retries); with `recheck_soon` too, the sooner of the two.
    `settled`: the XR is Ready and waits on nothing: every change it acts on is a change of
    a composed resource, which Crossplane watches and answers at once, so it asks to be run
    again only rarely (`recheck.RECHECK_SETTLED`).
    `happenings`: what this response does that a condition's transition does not tell
    (a replica moved off a cluster), each a Normal event.
    `warnings`: the same for what the user should change (a setting composed otherwise than
    asked), each a Warning event; the core lists one only when it is new, as events go out
    on transitions only.
    """

    # Plain data, or a `Stamp` of a shape many resources share (written as a copy).
    desired: dict[str, dict[str, Any] | Stamp] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    kept_changes: dict[str, dict[tuple[str, ...], Any]] = field(default_factory=dict)
    status: dict[str, Any] | None = None
    conditions: list[Status] = field(default_factory=list)
    ready: bool = False
    keep_everything: bool = False
    recheck_soon: bool = False
    recheck_in: timedelta | None = None
    settled: bool = False
    happenings: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def held(cls, *conditions: Status) -> "Outcome":
        """Keep everything composed and reported before as it is; `conditions` say why."""
        return cls(keep_everything=True, conditions=list(conditions))

    @classmethod
    def resolving(
        cls, xr: dict[str, Any], condition_type: str, awaited: str, *more: str
    ) -> "Outcome":
        """Held while Crossplane has not resolved `awaited` (a required resource's key is
        absent, not empty: the first call of its requirements loop, or a Crossplane that
        never resolves them). `condition_type`, the function's main condition, keeps the
        status it had (False when it had none; consumers act on it, so an input not read
        yet must not flip it) and says what is awaited under reason `Resolving`."""
        before = previous_condition(xr, condition_type) or {}
        waiting = f"{', '.join((awaited, *more[:-1]))} and {more[-1]}" if more else awaited
        return cls.held(
            Status(
                condition_type,
                before.get("status") == "True",
                RESOLVING,
                f"waiting for Crossplane to resolve {waiting}; "
                "everything composed before is kept as it is",
            )
        )
