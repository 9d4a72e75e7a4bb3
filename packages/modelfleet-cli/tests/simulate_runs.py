"""Running a fleet through `simulate_fleet` in a test: the printed timeline and the result."""

import io
from pathlib import Path
from typing import Any

from modelfleet_cli.pipeline import Caller
from modelfleet_cli.simulate.command import simulate_fleet
from modelfleet_cli.simulate.timeline import Progress, Timeline


def simulate_with_timeline(
    functions: Caller, directory: Path, *faults: str, rounds: int | None = None
) -> tuple[str, dict[str, Any]]:
    out = io.StringIO()
    result = simulate_fleet(
        directory,
        rounds=rounds,
        fault_texts=faults,
        timeline=Timeline(out=out),
        progress=Progress(enabled=False),
        call=functions,
    )
    return out.getvalue(), result
