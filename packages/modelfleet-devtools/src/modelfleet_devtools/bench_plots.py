"""The benchmarks' plots, drawn from the tables the benchmark scripts write into
docs/benchmarks.md: each plot reads its tables' sections (docs_sections), so it shows what
the tables say. A script's `--write-docs` redraws the plots of the sections it wrote
(`docs_sections.write_sections`), and `uv run modelfleet-generate --check` fails while a plot
is stale."""

import math
import re
from dataclasses import dataclass
from pathlib import Path

from modelfleet_cli.svg import Svg

from modelfleet_devtools.docs_sections import BENCHMARKS_DOC, section_body
from modelfleet_devtools.paths import REPO_ROOT

FIGURES = REPO_ROOT / "docs" / "figures"
# Okabe-Ito: told apart when colour-blind.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


@dataclass(frozen=True)
class Series:
    section: str  # the table's section in docs/benchmarks.md
    column: str  # the column plotted against the table's first
    label: str


@dataclass(frozen=True)
class Plot:
    file: str  # under docs/figures/
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]


def _cache(table: str) -> str:
    return f"bench_cache.py: {table}"


PLOTS = (
    Plot(
        "bench-functions.svg",
        "RunFunction latency by fleet size (log-log; docs/benchmarks.md)",
        "N (clusters; node pools for compose-inference-cluster)",
        "latency (ms)",
        (
            Series(_cache("turning Ready"), "latency", "cache turning Ready"),
            Series(_cache("first reconcile"), "latency", "cache first reconcile"),
            Series(_cache("shard at steady state"), "latency", "shard at steady state"),
            Series(_cache("first reconcile of a gated model"), "latency", "gated shard, first"),
            Series("bench_deployment.py", "latency", "deployment"),
            Series("bench_replica.py", "latency", "replica"),
            Series("bench_cluster.py", "latency", "inference cluster"),
        ),
    ),
    Plot(
        "bench-simulate.svg",
        "modelfleet simulate: time per round by fleet size (log-log)",
        "clusters",
        "seconds per round",
        (
            Series("bench_simulate.py", "per round", "per round"),
            Series("bench_simulate.py", "in the functions per round", "in the functions"),
            Series("bench_simulate.py", "simulate's own per round", "simulate's own"),
        ),
    ),
    Plot(
        "bench-scale.svg",
        "The real control plane: one ModelCache over N clusters (log-log)",
        "clusters",
        "seconds",
        (
            Series("modelfleet-scale-bench", "clusters Ready", "clusters Ready"),
            Series("modelfleet-scale-bench", "cache: time to Ready", "cache: time to Ready"),
            Series("modelfleet-scale-bench", "control-plane CPU", "control-plane CPU"),
            Series("modelfleet-scale-bench", "cache deleted", "cache deleted"),
        ),
    ),
)


def table_points(doc: str, series: Series) -> list[tuple[float, float]]:
    """(first column, `series.column`) of every row of its section's first table whose cells
    are numbers (a row that says why it has none is left out; a table after it, such as the
    scale benchmark's changes at rest, is not this one)."""
    rows: list[list[str]] = []
    for line in section_body(doc, series.section, "docs/benchmarks.md").splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    header, data = rows[0], rows[2:]
    where = header.index(series.column)
    points = []
    for row in data:
        x, y = _NUMBER.match(row[0]), _NUMBER.match(row[where])
        if x and y and float(x.group()) > 0 and float(y.group()) > 0:
            points.append((float(x.group()), float(y.group())))
    return points


def _ticks(low: float, high: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def _tick_text(value: float) -> str:
    return f"{value:g}" if value >= 0.01 else f"{value:.0e}"


WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 760, 420, 70, 200, 40, 56


def draw(plot: Plot, doc: str) -> str:
    """The plot's SVG: a line per series on log-log axes, a dot per row, a legend."""
    lines = [(s, table_points(doc, s)) for s in plot.series]
    xs = [x for _, pts in lines for x, _ in pts] or [1.0]
    ys = [y for _, pts in lines for _, y in pts] or [1.0]
    x_ticks, y_ticks = _ticks(min(xs), max(xs)), _ticks(min(ys), max(ys))
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def at(x: float, y: float) -> tuple[float, float]:
        lx0, lx1 = math.log10(x_ticks[0]), math.log10(x_ticks[-1])
        ly0, ly1 = math.log10(y_ticks[0]), math.log10(y_ticks[-1])
        fx = (math.log10(x) - lx0) / ((lx1 - lx0) or 1)
        fy = (math.log10(y) - ly0) / ((ly1 - ly0) or 1)
        return LEFT + fx * inner_w, TOP + inner_h - fy * inner_h

    svg = Svg(WIDTH, HEIGHT)
    svg.text(LEFT, 22, plot.title, size=13, weight="bold")
    svg.rect(LEFT, TOP, inner_w, inner_h, "none", stroke="#888")
    for tick in x_ticks:
        x, _ = at(tick, y_ticks[0])
        svg.line(x, TOP, x, TOP + inner_h, stroke="#e4e4e4")
        svg.text(x, TOP + inner_h + 16, _tick_text(tick), size=10, anchor="middle")
    for tick in y_ticks:
        _, y = at(x_ticks[0], tick)
        svg.line(LEFT, y, LEFT + inner_w, y, stroke="#e4e4e4")
        svg.text(LEFT - 6, y + 4, _tick_text(tick), size=10, anchor="end")
    svg.text(LEFT + inner_w / 2, HEIGHT - 14, plot.x_label, size=11, anchor="middle")
    svg.text(16, TOP + inner_h / 2, plot.y_label, size=11, anchor="middle", rotate=-90)
    for i, (series, points) in enumerate(lines):
        colour = COLOURS[i % len(COLOURS)]
        placed = [at(x, y) for x, y in points]
        if len(placed) > 1:
            svg.polyline(placed, colour)
        for (x, y), (px, py) in zip(points, placed, strict=True):
            svg.circle(px, py, 3, colour, title=f"{series.label}: {y:g} at {x:g}")
        ly = TOP + 8 + 18 * i
        svg.line(LEFT + inner_w + 14, ly, LEFT + inner_w + 34, ly, stroke=colour, width=2)
        svg.text(LEFT + inner_w + 40, ly + 4, series.label, size=11)
    return svg.render(plot.title)


def generated(doc_path: Path = BENCHMARKS_DOC) -> list[tuple[Path, str]]:
    """Every plot's file and what it should hold, from the tables in `doc_path`."""
    doc = doc_path.read_text()
    return [(FIGURES / plot.file, draw(plot, doc)) for plot in PLOTS]


def redraw(doc_path: Path, sections: set[str]) -> None:
    """Write the plots that show any of `sections` of `doc_path` (after a script wrote them)."""
    if doc_path.resolve() != BENCHMARKS_DOC.resolve():
        return
    doc = doc_path.read_text()
    for plot in PLOTS:
        if sections & {s.section for s in plot.series}:
            (FIGURES / plot.file).write_text(draw(plot, doc))
