"""The time `modelfleet render` tells the functions it is (`--now`, context `modelfleet.io/now`).

A function decides some things against the time (a reconnect's retry mark, a circuit
breaker's cooldown, a recheck's pace, a release's grace). So that the same inputs print the
same output, render seeds the function context's `modelfleet.io/now` (edge/now.py) with
`--now` when given, else with the latest `lastTransitionTime` among the conditions of the
XR and of the observed resources (the inputs' own "now": what happened last), else with
`DEFAULT_NOW`, the time `crossplane render` stamps conditions with.
"""

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

import click
from modelfleet_contracts.edge.now import NOW_KEY, now_context, parse_now
from modelfleet_contracts.fields import mapping_at

DEFAULT_NOW = datetime(2024, 1, 1, tzinfo=UTC)

__all__ = ["DEFAULT_NOW", "latest_transition", "now_context", "now_option", "render_now"]

F = TypeVar("F", bound=Callable[..., Any])


def latest_transition(objects: Iterable[Mapping[str, Any]]) -> datetime | None:
    """The latest valid `status.conditions[].lastTransitionTime` of `objects`, or None."""
    stamps = [
        moment
        for obj in objects
        for condition in mapping_at(obj, "status").get("conditions") or []
        if isinstance(condition, Mapping)
        and (moment := parse_now(condition.get("lastTransitionTime"))) is not None
    ]
    return max(stamps, default=None)


def render_now(
    xr: Mapping[str, Any], observed: Iterable[Mapping[str, Any]], given: datetime | None = None
) -> datetime:
    """The time a render of `xr` with `observed` is decided at: `given`, else the latest
    condition transition of the inputs, else DEFAULT_NOW."""
    if given is not None:
        return given
    return latest_transition([xr, *observed]) or DEFAULT_NOW


def _parse(_ctx: click.Context, _param: click.Parameter, text: str | None) -> datetime | None:
    if text is None:
        return None
    moment = parse_now(text)
    if moment is None:  # a bad option value: a usage error (exit 2)
        raise click.BadParameter(f"{text!r} is not an RFC 3339 timestamp (2025-06-01T12:00:00Z)")
    return moment


def now_option(func: F) -> F:
    """`--now RFC3339`, parsed into an aware datetime (None: not given)."""
    return click.option(
        "--now",
        "now",
        metavar="RFC3339",
        default=None,
        callback=_parse,
        help=f"The time the functions decide at, sent as function context {NOW_KEY} "
        "(e.g. 2025-06-01T12:00:00Z). Default: the latest lastTransitionTime of the XR's and "
        "the observed resources' conditions, else 2024-01-01T00:00:00Z, so the same inputs "
        "render the same output.",
    )(func)
