"""What a function process answered during a window of a real control plane's run: per XR
kind, how many calls, and how many carried content the process had already been sent (the
same request key, functions.trace_file), so that a response replay could answer them; and
the replay counts the function itself logged (modelfleet_contracts.edge.runner's "Replays"
line), so the two can be read side by side."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any


@dataclass
class WindowCalls:
    """The calls a function process answered in [start, end), by XR kind."""

    calls: Counter[str] = field(default_factory=Counter)
    repeated: Counter[str] = field(default_factory=Counter)  # content sent before, anytime
    keys: dict[str, set[str]] = field(default_factory=dict)  # distinct keys by kind

    def line(self) -> str:
        return "; ".join(
            f"{kind}: {self.calls[kind]} calls, {self.repeated[kind]} with content sent "
            f"before, {len(self.keys[kind])} distinct"
            for kind in sorted(self.calls)
        )


def calls_in_window(trace: Path, start: float, end: float) -> WindowCalls:
    """The calls answered after `start`, up to and including `end`, from the trace of one
    process (one JSON line per call, written once it is answered). A "Replays" line is logged
    during the call it counts last, before the trace's line: the calls between two of them
    are those counted in between."""
    seen: set[str] = set()
    window = WindowCalls()
    for line in trace.read_text().splitlines() if trace.exists() else []:
        try:
            call = json.loads(line)
        except ValueError:  # a line being written
            continue
        key = call.get("key")
        if key is None:
            continue
        if start < call["at"] <= end:
            kind = call["kind"]
            window.calls[kind] += 1
            window.repeated[kind] += key in seen
            window.keys.setdefault(kind, set()).add(key)
        seen.add(key)
    return window


def replay_counts(log: Path) -> list[dict[str, Any]]:
    """Every "Replays" line a function logged (JSON, the SDK's production format), in order."""
    counts = []
    for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
        if '"Replays"' not in line:
            continue
        try:
            entry = json.loads(line[line.index("{") :])
        except ValueError:
            continue
        if entry.get("msg") == "Replays":
            counts.append(entry)
    return counts


def replays_beside_trace(log: Path, trace: Path, start: float, end: float) -> list[str]:
    """For each pair of consecutive "Replays" lines logged in [start, end]: what the function
    counted in between (replayed, decided) beside what the trace shows of the same calls (how
    many, how many carrying content sent before)."""
    lines = [c for c in replay_counts(log) if start <= c["ts"] <= end]
    said = []
    for before, after in pairwise(lines):
        calls = calls_in_window(trace, before["ts"], after["ts"])
        said.append(
            f"{after['ts'] - before['ts']:.0f} s: {after['replayed'] - before['replayed']} "
            f"replayed, {after['decided'] - before['decided']} decided; traced "
            f"{sum(calls.calls.values())} calls, {sum(calls.repeated.values())} with content "
            f"sent before ({calls.line()})"
        )
    return said
