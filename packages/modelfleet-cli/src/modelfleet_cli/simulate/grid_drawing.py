"""The PhaseGrid as `modelfleet simulate --timeline FILE.svg` draws it: a row per cluster of
each XR, a column per round, each cell in its phase's style (its phase as a tooltip); below,
a row per cluster of each ModelService, each round a bar split by the weights its route sends
each backend, with the split written where it changes (`90/10`); then the legend: the phases
in the order the rows show them, and the backends' shades."""

from modelfleet_cli.simulate.phase_grid import PhaseGrid, Split
from modelfleet_cli.simulate.phase_styles import backend_shade, style_of
from modelfleet_cli.svg import Svg

CELL, ROW_HEIGHT, SPLIT_HEIGHT, LABEL_GAP, TOP = 22, 16, 30, 12, 44
LEGEND_WIDTH = 640  # the narrowest picture: its legend wraps at this width


def _text_width(text: str, size: float = 11) -> float:
    return len(text) * size * 0.6


def _label(xr: str, cluster: str) -> str:
    return xr if xr.endswith(f" {cluster}") else f"{xr}  {cluster}"


def draw(grid: PhaseGrid, title: str) -> str:
    rows, split_rows = grid.rows(), grid.split_rows()
    labels = [_label(xr, cluster) for _, xr, cluster in rows]
    split_labels = [_label(xr, cluster) for xr, cluster in split_rows]
    left = max([_text_width(label) for label in labels + split_labels] + [120]) + LABEL_GAP
    phases, backends = grid.phases_in_row_order(), grid.backends()
    splits_top = TOP + len(rows) * ROW_HEIGHT + (8 if split_rows else 0)
    legend_top = splits_top + len(split_rows) * SPLIT_HEIGHT + 24
    width = max(left + grid.rounds * CELL + 20, LEGEND_WIDTH)
    svg = Svg(width, legend_top)
    for style in dict.fromkeys(style_of(p) for p in phases if style_of(p).striped):
        svg.stripes(style.pattern_id(), style.colour)
    svg.text(8, 18, title, size=14, weight="bold")
    for r in range(1, grid.rounds + 1):
        svg.text(left + (r - 0.5) * CELL, TOP - 8, str(r), size=10, anchor="middle")
    svg.text(left - LABEL_GAP, TOP - 8, "round", size=10, anchor="end", fill="#666")
    for i, (row, label) in enumerate(zip(rows, labels, strict=True)):
        y = TOP + i * ROW_HEIGHT
        svg.text(left - LABEL_GAP, y + ROW_HEIGHT - 4, label, size=11, anchor="end")
        for r, phase in sorted(grid.cells[row].items()):
            svg.rect(
                left + (r - 1) * CELL + 1, y + 1, CELL - 2, ROW_HEIGHT - 2, style_of(phase).fill(),
                title=f"round {r}: {label}: {phase}",
            )  # fmt: skip
    for i, (split_row, label) in enumerate(zip(split_rows, split_labels, strict=True)):
        y = splits_top + i * SPLIT_HEIGHT
        svg.text(left - LABEL_GAP, y + SPLIT_HEIGHT - 6, label, size=11, anchor="end")
        _split_row(svg, grid, grid.splits[split_row], left, y, label, backends)
    _legend(svg, legend_top, phases, backends)
    return svg.render(title)


def _split_row(
    svg: Svg, grid: PhaseGrid, splits: dict[int, Split], left: float, y: float, label: str,
    backends: list[str],
) -> None:  # fmt: skip
    """Each round's bar, and the split written at the round it changes, when it fits before
    the next change (or the picture's edge)."""
    changes = [r for r in sorted(splits) if splits.get(r - 1) != splits[r]]
    for n, r in enumerate(changes):
        ends = changes[n + 1] if n + 1 < len(changes) else grid.rounds + 2
        text = splits[r].text()
        if _text_width(text, 9) <= (ends - r) * CELL - 2:
            svg.text(left + (r - 1) * CELL + 1, y + 10, text, size=9, fill="#222")
    for r, split in sorted(splits.items()):
        x, top, w, h = left + (r - 1) * CELL + 1, y + 13, CELL - 2, SPLIT_HEIGHT - 16
        total = sum(weight for _, weight in split.weights) if split.routed else 0
        for name, weight in split.weights if total else ():
            share = w * weight / total
            if share:
                svg.rect(x, top, share, h, backend_shade(backends.index(name)))
                x += share
        svg.rect(
            left + (r - 1) * CELL + 1, top, w, h, "transparent", stroke="#888888",
            title=f"round {r}: {label}: {split.described()}",
        )  # fmt: skip


def _legend(svg: Svg, top: float, phases: list[str], backends: list[str]) -> None:
    """The phases, then the backends' shades under their heading, each group in lines no
    wider than the picture; the picture grows to hold them."""
    groups = [("", [(style_of(p).fill(), p) for p in phases])]
    if backends:
        heading = "ModelService weights, left to right:"
        groups.append((heading, [(backend_shade(i), name) for i, name in enumerate(backends)]))
    for heading, items in groups:
        x = 8.0
        if heading:
            svg.text(x, top + 11, heading, size=11)
            x += _text_width(heading) + 12
        for fill, text in items:
            if x > 8 and x + _text_width(text) + 18 > svg.width:
                x, top = 8.0, top + 22
            svg.rect(x, top, 14, 14, fill)
            svg.text(x + 18, top + 11, text, size=11)
            x += _text_width(text) + 34
        top += 24
    svg.height = top + 6
