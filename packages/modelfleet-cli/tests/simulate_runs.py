"""Running a fleet through `simulate_fleet` in a test: the printed timeline and the result."""

import io
import re
from pathlib import Path
from typing import Any

from modelfleet_cli.pipeline import Caller
from modelfleet_cli.simulate.command import simulate_fleet
from modelfleet_cli.simulate.timeline import Progress, Timeline
from modelfleet_cli.simulate.waits import NEXT_CHECK


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


HEADER = re.compile(r"^round (\d+) +(\S+ \S+) {2,}(.*)$")
NOTE = re.compile(r"^round \d+ +! ")
CONDITION = re.compile(r"^(\w+)=(True|False|Unknown) ")


def is_message(line: str) -> bool:
    """A line under an XR that is what its status says: neither a condition nor the line
    on how soon Crossplane runs it again."""
    return not CONDITION.match(line) and not line.startswith(NEXT_CHECK)


def blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """(round, XR, the lines under its header) for every header; fails on a line that is
    neither a header, a note, nor under a header."""
    found: list[tuple[int, str, list[str]]] = []
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            found.append((int(header[1]), header[2], []))
        elif NOTE.match(line):
            continue
        else:
            assert line.startswith(" " * 10) and found, f"a line outside any XR: {line!r}"
            found[-1][2].append(line.strip())
    return found
