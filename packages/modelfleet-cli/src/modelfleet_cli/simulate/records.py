"""What the simulated control plane records for the result: losses, events, refusals."""

from dataclasses import dataclass


@dataclass
class Loss:
    """Something precious deleted while its owner and its cluster still exist."""

    round: int
    what: str
    cluster: str
    owner: str


@dataclass
class Event:
    round: int
    xr: str
    severity: str
    message: str


@dataclass
class Refusal:
    """A deletion the API server refused because the object is in use (what `kubectl
    delete` would print)."""

    round: int
    what: str
    message: str
