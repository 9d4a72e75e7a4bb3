"""`--function-ports FROM-TO`: the loopback ports the functions `render` and `simulate` start
may listen on, for machines where ports are managed (a firewall, a port allocation)."""

from collections.abc import Callable
from typing import Any, TypeVar

import click

from modelfleet_cli.functions import parse_port_range

F = TypeVar("F", bound=Callable[..., Any])


def _port_range(_ctx: click.Context, _param: click.Parameter, text: str | None) -> range | None:
    if text is None:
        return None
    try:
        return parse_port_range(text)
    except ValueError as exc:  # a bad option value: a usage error (exit 2)
        raise click.BadParameter(str(exc)) from None


def function_ports_option(func: F) -> F:
    """The option, parsed into a `range` (None: any free port)."""
    return click.option(
        "--function-ports",
        "function_ports",
        metavar="FROM-TO",
        default=None,
        callback=_port_range,
        help="Loopback ports the functions started here listen on, one each, the first free "
        "ones of the range (e.g. 40000-40009; default: any free port). Functions dialled at a "
        "Development target are not started.",
    )(func)
