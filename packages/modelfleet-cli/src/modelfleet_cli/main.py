"""`modelfleet`: render compositions like `crossplane render`, simulate a whole fleet."""

import click

from modelfleet_cli.render import render
from modelfleet_cli.simulate import simulate


@click.group(help="Render Modelfleet compositions offline, or simulate a whole fleet locally.")
@click.version_option(package_name="modelfleet-cli", prog_name="modelfleet")
def main() -> None:
    pass


main.add_command(render)
main.add_command(simulate)
