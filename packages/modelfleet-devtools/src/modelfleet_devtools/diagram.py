"""Drawing the architecture diagram (docs/figures/architecture.svg) from its source
(docs/figures/architecture.yaml): boxes on a grid of columns and rows, arrows between them.
`uv run modelfleet-generate` draws it and `--check` fails while it is stale."""

from pathlib import Path
from typing import Any

import yaml
from modelfleet_cli.svg import Svg

from modelfleet_devtools.paths import REPO_ROOT

SOURCE = REPO_ROOT / "docs/figures/architecture.yaml"
TARGET = REPO_ROOT / "docs/figures/architecture.svg"
FILLS = {"xr": "#D6EAF8", "composed": "#E8F6F3", "object": "#FEF9E7", "remote": "#F4ECF7"}
BOX_WIDTH, COLUMN_GAP, ROW_GAP, LINE, MARGIN, TOP = 260, 170, 34, 15, 20, 74
# Text is measured as DejaVu Sans averages it: 0.6 of the font size per character.
CHAR_WIDTH = 0.6


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def overflows(source: dict[str, Any]) -> list[str]:
    """Text that would not fit: a box's line wider than the box, an edge's label wider than
    the gap between columns."""
    found = [
        f"{box['id']}: {line!r}"
        for box in source["boxes"]
        for line, size in [(box["title"], 12.5), *((str(li), 10.5) for li in box.get("lines", []))]
        if text_width(line, size) + 20 > BOX_WIDTH
    ]
    found += [
        f"{e['from']} -> {e['to']}: {e['label']!r}"
        for e in source["edges"]
        if text_width(e["label"], 10) + 12 > COLUMN_GAP
    ]
    return found


def _height(box: dict[str, Any]) -> float:
    return 28 + LINE * len(box.get("lines", []))


def draw(source: dict[str, Any]) -> str:
    """The SVG of a diagram source (see docs/figures/architecture.yaml for its fields)."""
    boxes = {b["id"]: b for b in source["boxes"]}
    rows = 1 + max(b["row"] for b in boxes.values())
    row_height = [
        max((_height(b) for b in boxes.values() if b["row"] == r), default=0) for r in range(rows)
    ]
    row_top = [TOP + sum(row_height[:r]) + ROW_GAP * r for r in range(rows)]
    columns = source["columns"]
    width = 2 * MARGIN + len(columns) * BOX_WIDTH + (len(columns) - 1) * COLUMN_GAP
    height = row_top[-1] + row_height[-1] + MARGIN + 26
    svg = Svg(width, height)
    svg.text(MARGIN, 26, source["title"], size=15, weight="bold")
    place: dict[str, tuple[float, float, float]] = {}  # id -> (x, y, height)
    for i, heading in enumerate(columns):
        x = MARGIN + i * (BOX_WIDTH + COLUMN_GAP)
        svg.text(x + BOX_WIDTH / 2, TOP - 14, heading, size=11, anchor="middle", fill="#555")
    for box in boxes.values():
        x = MARGIN + box["column"] * (BOX_WIDTH + COLUMN_GAP)
        y = row_top[box["row"]] + (row_height[box["row"]] - _height(box)) / 2
        place[box["id"]] = (x, y, _height(box))
        svg.rect(x, y, BOX_WIDTH, _height(box), FILLS[box["kind"]], stroke="#555", rx=6)
        svg.text(x + 10, y + 19, box["title"], size=12.5, weight="bold")
        for n, line in enumerate(box.get("lines", [])):
            svg.text(x + 10, y + 19 + LINE * (n + 1), str(line), size=10.5, fill="#333")
    for edge in source["edges"]:
        _edge(svg, place[edge["from"]], place[edge["to"]], edge)
    legend = [("an XR users apply", "xr"), ("an XR a function composes", "composed"),
              ("managed resources", "object"), ("on the workload cluster", "remote")]  # fmt: skip
    at = float(MARGIN)
    for text, kind in legend:
        svg.rect(at, height - 26, 14, 14, FILLS[kind], stroke="#555")
        svg.text(at + 20, height - 15, text, size=11)
        at += 34 + text_width(text, 11)
    svg.line(at, height - 19, at + 30, height - 19, dashed=True, arrow=True)
    svg.text(at + 36, height - 15, "reads its status (a required resource)", size=11)
    return svg.render(source["title"])


def _edge(
    svg: Svg,
    start: tuple[float, float, float],
    end: tuple[float, float, float],
    edge: dict[str, Any],
) -> None:
    (x1, y1, h1), (x2, y2, h2) = start, end
    dashed = bool(edge.get("reads"))
    if x1 == x2:  # the same column: from one box's top to the other's bottom, on the right
        ax, ay, bx, by = x1 + BOX_WIDTH - 30, y1, x2 + BOX_WIDTH - 30, y2 + h2
        svg.line(ax, ay, bx, by, arrow=True, dashed=dashed)
        svg.text(ax + 6, (ay + by) / 2 + 4, edge["label"], size=10, fill="#444")
        return
    ax, ay, bx, by = x1 + BOX_WIDTH, y1 + h1 / 2, x2, y2 + h2 / 2
    svg.line(ax, ay, bx, by, arrow=True, dashed=dashed)
    if bx - ax > BOX_WIDTH:  # across a column: the label sits in the first gap
        svg.text(ax + 6, ay - 6, edge["label"], size=10, fill="#444")
    else:
        svg.text((ax + bx) / 2, ay - 6, edge["label"], size=10, anchor="middle", fill="#444")


def generated() -> tuple[Path, str]:
    """(docs/figures/architecture.svg, what it should hold)."""
    return TARGET, draw(yaml.safe_load(SOURCE.read_text()))
