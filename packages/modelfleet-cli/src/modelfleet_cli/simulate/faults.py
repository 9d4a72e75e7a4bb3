"""Faults to inject: what, where, when. Written `KIND:TARGET[@ROUND[+ROUNDS]]` on the
command line (`--fault cluster-flaps:gke-us@3+2`) or as mappings in `simulation.yaml`."""

from dataclasses import dataclass
from typing import Any

HYDRATION_FAILS = "hydration-fails"  # the hydration Job's next attempt from ROUND fails, once
HYDRATION_FAILS_ALWAYS = "hydration-fails-always"  # every attempt from ROUND fails: the Job fails
CLUSTER_FLAPS = "cluster-flaps"  # the InferenceCluster's status reads disconnected
OBSERVED_MISSING = "observed-missing"  # an XR's observed composed resources are not passed
REQUIREMENT_UNRESOLVED = "requirement-unresolved"  # an XR's requirements are not resolved
CLUSTER_DELETED = "cluster-deleted"  # the InferenceCluster is deleted (re-applied after ROUNDS)
CACHE_DELETED = "cache-deleted"  # a ModelCache is deleted while in use (re-applied after ROUNDS)

# kind -> (what TARGET names, default ROUNDS; 0: for good)
KINDS: dict[str, tuple[str, int]] = {
    HYDRATION_FAILS: ("an InferenceCluster name", 0),
    HYDRATION_FAILS_ALWAYS: ("an InferenceCluster name", 0),
    CLUSTER_FLAPS: ("an InferenceCluster name", 2),
    OBSERVED_MISSING: ("an XR: Kind, Kind/name, Kind/namespace/name or *", 1),
    REQUIREMENT_UNRESOLVED: ("an XR: Kind, Kind/name, Kind/namespace/name or *", 1),
    CLUSTER_DELETED: ("an InferenceCluster name", 0),
    CACHE_DELETED: ("a ModelCache namespace/name", 2),
}
DEFAULT_ROUND = 4
# Faults a fleet recovers from on its own; the others leave a lasting, reported state.
RECOVERABLE = frozenset(KINDS) - {HYDRATION_FAILS_ALWAYS, CLUSTER_DELETED}


class FaultError(ValueError):
    """A fault that cannot be understood; the message says how to write it."""


@dataclass(frozen=True)
class Fault:
    kind: str
    target: str
    round: int = DEFAULT_ROUND
    rounds: int = 0

    @property
    def until(self) -> int | None:
        """The first round after the fault (None: it lasts)."""
        return self.round + self.rounds if self.rounds else None

    def active(self, round_no: int) -> bool:
        return round_no >= self.round and (self.until is None or round_no < self.until)

    def describe(self) -> str:
        text = f"{self.kind}:{self.target}@{self.round}"
        return text + (f"+{self.rounds}" if self.rounds else "")

    def matches_xr(self, kind: str, namespace: str, name: str) -> bool:
        if self.target == "*":
            return True
        parts = self.target.split("/")
        if parts[0] != kind:
            return False
        if len(parts) == 1:
            return True
        if len(parts) == 2:
            return parts[1] == name
        return parts[1] == namespace and parts[2] == name


def past_the_limit(faults: list[Fault], limit: int) -> str | None:
    """Why the first fault whose round comes after the round limit cannot be simulated."""
    for fault in faults:
        if fault.round > limit:
            return (
                f"fault {fault.describe()}: round {fault.round} is past the round limit "
                f"({limit}), so it would never act: raise --rounds (or `rounds` in "
                f"simulation.yaml) to at least {fault.round}, or inject it earlier"
            )
    return None


def _fault(kind: str, target: str, round_no: int | None, rounds: int | None) -> Fault:
    if kind not in KINDS:
        raise FaultError(f"unknown fault {kind!r}; one of: {', '.join(KINDS)}")
    if not target:
        raise FaultError(f"fault {kind} needs a target: {KINDS[kind][0]}")
    round_no = DEFAULT_ROUND if round_no is None else round_no
    rounds = KINDS[kind][1] if rounds is None else rounds
    if round_no < 1 or rounds < 0:
        raise FaultError(f"fault {kind}:{target}: round must be >= 1 and rounds >= 0")
    return Fault(kind, target, round_no, rounds)


def parse_fault(text: str) -> Fault:
    """`KIND:TARGET[@ROUND[+ROUNDS]]`."""
    kind, sep, rest = text.partition(":")
    if not sep:
        raise FaultError(f"fault {text!r}: write KIND:TARGET[@ROUND[+ROUNDS]]")
    target, at, when = rest.partition("@")
    round_no = rounds = None
    if at:
        first, plus, length = when.partition("+")
        try:
            round_no = int(first)
            rounds = int(length) if plus else None
        except ValueError:
            raise FaultError(f"fault {text!r}: ROUND and ROUNDS must be numbers") from None
    return _fault(kind.strip(), target.strip(), round_no, rounds)


def faults_from_settings(entries: Any) -> list[Fault]:
    """`faults:` of simulation.yaml: a list of {kind, target, round?, rounds?}."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise FaultError("simulation.yaml: faults must be a list of {kind, target, round, rounds}")
    faults = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise FaultError(f"simulation.yaml: fault {entry!r} is not a mapping")
        try:
            round_no = int(entry["round"]) if "round" in entry else None
            rounds = int(entry["rounds"]) if "rounds" in entry else None
        except (TypeError, ValueError):
            raise FaultError(
                f"simulation.yaml: fault {entry!r}: round/rounds must be numbers"
            ) from None
        faults.append(
            _fault(str(entry.get("kind", "")), str(entry.get("target", "")), round_no, rounds)
        )
    return faults
