"""Did the fleet survive each fault? One verdict each, meaning what it says:

- `survived`: the fault took effect, nothing precious was lost or left Terminating, the user
  was told whenever the fault was visible, and every XR is Ready at the end;
- `contained`: the same, for a fault that lasts and that no fleet recovers from while it
  does (`hydration-fails-always` or `cluster-deleted` without ROUNDS): the XRs it holds stay
  not Ready, by design, and say why;
- `not survived`: something precious was lost or left Terminating, the user was not told, or
  the fleet did not recover from a fault that ended;
- `did not take effect`: nothing the fault targets was there while it was active; the run
  tested nothing (nothing recovered either: `recovered` is null).
"""

from dataclasses import asdict, dataclass, field
from typing import Any

from modelfleet_cli.simulate import faults as f
from modelfleet_cli.simulate.control_plane import ControlPlane

SURVIVED = "survived"
CONTAINED = "contained"
NOT_SURVIVED = "not survived"
NO_EFFECT = "did not take effect"
# Verdicts that fail the run (exit 4).
FAILING = frozenset({NOT_SURVIVED, NO_EFFECT})


@dataclass
class FaultVerdict:
    fault: str
    applied_round: int | None
    # The round the fault first changed something; None: its target never showed up while
    # it was active, so the run says nothing about it.
    took_effect: int | None = None
    lost: list[dict[str, Any]] = field(default_factory=list)
    # Claims left Terminating (kubernetes.io/pvc-protection): gone once their pods stop.
    at_risk: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)
    visible: bool = False
    # None: the fault lasts and no fleet recovers while it does, or it never took effect.
    recovered: bool | None = None
    verdict: str = NO_EFFECT
    survived: bool = False  # the verdict is `survived`


def assess(
    plane: ControlPlane,
    messages: list[tuple[int, str, str]],
    history: dict[str, list[dict[str, Any]]],
    all_ready: bool,
) -> list[FaultVerdict]:
    verdicts = []
    for fault in plane.faults:
        start = plane.applied.get(fault.describe())
        hydration = fault.kind in (f.HYDRATION_FAILS, f.HYDRATION_FAILS_ALWAYS)
        first = start or plane.round + 1
        # A failed attempt is told for as long as the cache reports it.
        last = plane.round if hydration or fault.until is None else fault.until + 1
        verdict = FaultVerdict(fault.describe(), start, plane.took_effect.get(fault.describe()))
        verdict.lost = [asdict(x) for x in plane.losses if x.round >= first]
        verdict.told = [
            f"round {r} {xr}: {text}"
            for r, xr, text in messages
            if first <= r <= last
            and not text.startswith(("Ready=", "Synced="))
            and (not hydration or "fail" in text.lower())
        ]
        verdict.visible = any(
            first <= h["round"] <= last for entries in history.values() for h in entries
        )
        verdict.at_risk = [
            f"{cluster.name}: PersistentVolumeClaim {key[1]}/{key[2]}"
            for cluster in plane.clusters.values()
            for key, obj in cluster.objects.items()
            if key[0] == "PersistentVolumeClaim" and obj["metadata"].get("deletionTimestamp")
        ]
        if verdict.took_effect is not None:
            verdict.recovered = None if _lasting(fault) and not all_ready else all_ready
        verdict.verdict = _verdict(verdict, all_ready=all_ready)
        verdict.survived = verdict.verdict == SURVIVED
        verdicts.append(verdict)
    return verdicts


def _lasting(fault: f.Fault) -> bool:
    """A fault no fleet recovers from while it lasts, and that lasts to the end."""
    return fault.kind not in f.RECOVERABLE and fault.until is None


def _verdict(verdict: FaultVerdict, *, all_ready: bool) -> str:
    if verdict.took_effect is None:
        return NO_EFFECT
    harmless = not verdict.lost and not verdict.at_risk
    told = bool(verdict.told) or not verdict.visible
    if not harmless or not told or verdict.recovered is False:
        return NOT_SURVIVED
    return SURVIVED if all_ready else CONTAINED
