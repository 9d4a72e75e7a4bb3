"""Did the fleet survive each fault? The fault took effect, nothing precious was lost, phases
recovered (when the fault is one a fleet can recover from), and the user was told whenever
the fault was visible."""

from dataclasses import asdict, dataclass, field
from typing import Any

from modelfleet_cli.simulate import faults as f
from modelfleet_cli.simulate.control_plane import ControlPlane


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
    recovered: bool | None = None  # None: not a fault a fleet recovers from on its own
    survived: bool = False


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
        if fault.kind in f.RECOVERABLE:
            verdict.recovered = all_ready
        verdict.survived = (
            verdict.took_effect is not None
            and not verdict.lost
            and not verdict.at_risk
            and verdict.recovered is not False
            and (bool(verdict.told) or not verdict.visible)
        )
        verdicts.append(verdict)
    return verdicts
