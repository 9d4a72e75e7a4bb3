"""Every cluster's phase per round, as `modelfleet simulate --timeline FILE.svg` draws it.

A row is one cluster as one XR sees it: a ModelCache's or ModelDeployment's
`status.clusters[]` row (its `phase`), a ModelReplica's own `phase` on its cluster, an
InferenceCluster's readiness (`Ready`, else `NotReady`). ModelCacheShards are left out: their
ModelCache reports the same rows. A round without a value (before the XR reports the cluster,
after it is deleted) stays empty.
"""

import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from modelfleet_contracts.api import (
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
)
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.fields import list_at, mapping_at

from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.svg import Svg

ROW_KINDS = (INFERENCE_CLUSTER, MODEL_CACHE, MODEL_DEPLOYMENT, MODEL_REPLICA)
# Settled, on the way, waiting, and wrong: one colour each (Okabe-Ito, readable when
# colour-blind); a phase not listed gets a grey of its own, from its name.
COLOURS = {
    "Ready": "#009E73",
    "Hydrating": "#56B4E9",
    "Progressing": "#56B4E9",
    "Pending": "#F0E442",
    "WaitingForCluster": "#F0E442",
    "WaitingForCache": "#E69F00",
    "NotReady": "#E69F00",
    "Unused": "#DDDDDD",
    "Unschedulable": "#CC79A7",
    "Degraded": "#D55E00",
    "Failed": "#D55E00",
}
Row = tuple[int, str, str]  # (kind's place, XR, cluster)


def phase_colour(phase: str) -> str:
    if phase in COLOURS:
        return COLOURS[phase]
    shade = 120 + zlib.crc32(phase.encode()) % 100
    return f"#{shade:02x}{shade:02x}{shade:02x}"


def cluster_phases(xr: dict[str, Any]) -> dict[str, str]:
    """Cluster -> phase, as `xr` reports it now."""
    kind, status = xr.get("kind"), mapping_at(xr, "status")
    if kind == INFERENCE_CLUSTER:
        name = str(mapping_at(xr, "metadata").get("name"))
        return {name: "Ready" if condition_true(status, "Ready") else "NotReady"}
    if kind == MODEL_REPLICA:
        cluster = mapping_at(xr, "spec").get("clusterName")
        phase = status.get("phase")
        return {str(cluster): str(phase)} if cluster and phase else {}
    if kind in (MODEL_CACHE, MODEL_DEPLOYMENT):
        return {
            str(row["name"]): str(row.get("phase") or "?")
            for row in list_at(status, "clusters")
            if isinstance(row, dict) and row.get("name")
        }
    return {}


@dataclass
class PhaseGrid:
    """Phases by row and round, recorded after each round."""

    rounds: int = 0
    cells: dict[Row, dict[int, str]] = field(default_factory=dict)

    def record(self, round_no: int, xrs: Iterable[dict[str, Any]]) -> None:
        self.rounds = max(self.rounds, round_no)
        for xr in xrs:
            if xr.get("kind") not in ROW_KINDS:
                continue
            place = ROW_KINDS.index(str(xr["kind"]))
            for cluster, phase in cluster_phases(xr).items():
                self.cells.setdefault((place, xr_id(xr), cluster), {})[round_no] = phase

    def rows(self) -> list[Row]:
        return sorted(self.cells)


CELL, ROW_HEIGHT, LABEL_GAP, TOP = 22, 16, 12, 44


def _text_width(text: str, size: float = 11) -> float:
    return len(text) * size * 0.6


def draw(grid: PhaseGrid, title: str) -> str:
    """The grid as an SVG: a row per cluster of each XR, a column per round, each cell
    coloured by phase (its phase as a tooltip), a legend of the phases seen."""
    rows = grid.rows()
    labels = [
        f"{xr}  {cluster}" if not xr.endswith(f" {cluster}") else xr for _, xr, cluster in rows
    ]
    left = max([_text_width(label) for label in labels] + [120]) + LABEL_GAP
    phases = sorted({p for cells in grid.cells.values() for p in cells.values()})
    legend_top = TOP + len(rows) * ROW_HEIGHT + 24
    width = max(left + grid.rounds * CELL + 20, 16 + sum(_text_width(p) + 34 for p in phases))
    svg = Svg(width, legend_top + 30)
    svg.text(8, 18, title, size=14, weight="bold")
    for r in range(1, grid.rounds + 1):
        svg.text(left + (r - 0.5) * CELL, TOP - 8, str(r), size=10, anchor="middle")
    svg.text(left - LABEL_GAP, TOP - 8, "round", size=10, anchor="end", fill="#666")
    for i, (row, label) in enumerate(zip(rows, labels, strict=True)):
        y = TOP + i * ROW_HEIGHT
        svg.text(left - LABEL_GAP, y + ROW_HEIGHT - 4, label, size=11, anchor="end")
        for r, phase in sorted(grid.cells[row].items()):
            svg.rect(
                left + (r - 1) * CELL + 1, y + 1, CELL - 2, ROW_HEIGHT - 2, phase_colour(phase),
                title=f"round {r}: {label}: {phase}",
            )  # fmt: skip
    x = 8.0
    for phase in phases:
        svg.rect(x, legend_top, 14, 14, phase_colour(phase))
        svg.text(x + 18, legend_top + 11, phase, size=11)
        x += _text_width(phase) + 34
    return svg.render(title)
