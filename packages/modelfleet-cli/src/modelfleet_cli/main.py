"""`modelfleet`: render compositions like `crossplane render`, simulate a whole fleet."""

import click

from modelfleet_cli.render import render
from modelfleet_cli.simulate import simulate


@click.group(help="Render Modelfleet compositions offline, or simulate a whole fleet locally.")
def main() -> None:
    pass


main.add_command(render)
main.add_command(simulate)
