"""`modelfleet simulate`: a whole fleet reconciled locally against simulated clusters."""

from modelfleet_cli.simulate.command import simulate

__all__ = ["simulate"]
