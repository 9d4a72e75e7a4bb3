"""The benchmarks' plots show what their tables in docs/benchmarks.md say: a dot per table row
of each series, at its values; each plot is shown beside its tables; a script's `--write-docs`
(docs_sections.write_sections) redraws the plots of the sections it writes."""

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from modelfleet_devtools import bench_plots, docs_sections
from modelfleet_devtools.docs_sections import BENCHMARKS_DOC

SVG = "{http://www.w3.org/2000/svg}"


def dots(svg_text: str) -> set[str]:
    root = ET.fromstring(svg_text)
    return {c.find(f"{SVG}title").text for c in root.iter(f"{SVG}circle")}  # type: ignore[union-attr,misc]


def column_cells(doc: str, series: bench_plots.Series) -> list[str]:
    """The cells of `series.column` in the first table of its section."""
    rows: list[list[str]] = []
    for line in docs_sections.section_body(doc, series.section, "docs/benchmarks.md").splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    where = rows[0].index(series.column)
    return [row[where] for row in rows[2:]]


@pytest.mark.parametrize("plot", bench_plots.PLOTS, ids=lambda p: p.file)
def test_a_plot_has_a_dot_for_every_row_of_its_tables(plot):
    doc = BENCHMARKS_DOC.read_text()
    expected = {
        f"{s.label}: {y:g} at {x:g}"
        for s in plot.series
        for x, y in bench_plots.table_points(doc, s)
    }
    assert expected
    for s in plot.series:
        # A series without a dot only where every row says why it has no figure (a cache
        # not Ready within the limit: "not Ready after ...").
        assert bench_plots.table_points(doc, s) or all(
            cell.startswith("not ") for cell in column_cells(doc, s)
        ), s.label
    assert dots((bench_plots.FIGURES / plot.file).read_text()) == expected


@pytest.mark.parametrize("plot", bench_plots.PLOTS, ids=lambda p: p.file)
def test_a_plot_is_shown_beside_its_tables(plot):
    doc = BENCHMARKS_DOC.read_text()
    last_end = max(doc.index(docs_sections.markers(s.section)[1]) for s in plot.series)
    link = doc.index(f"](figures/{plot.file})")
    assert 0 < link - last_end < 400


def test_writing_a_section_redraws_its_plot(tmp_path: Path, monkeypatch):
    doc = tmp_path / "benchmarks.md"
    shutil.copy(BENCHMARKS_DOC, doc)
    monkeypatch.setattr(bench_plots, "BENCHMARKS_DOC", doc)
    monkeypatch.setattr(bench_plots, "FIGURES", tmp_path)
    section = "bench_simulate.py"
    body = docs_sections.section_body(doc.read_text(), section)
    # The 30-cluster row's "per round" cell (the table's 7th column) set to 0.1 s, whatever the
    # last run measured.
    row = next(line for line in body.splitlines() if line.startswith("| 30 |"))
    cells = row.split(" | ")
    assert cells[6].endswith(" s") and cells[6] != "0.1 s", row
    changed = body.replace(row, " | ".join([*cells[:6], "0.1 s", *cells[7:]]))
    docs_sections.write_sections(doc, {section: changed})
    assert "per round: 0.1 at 30" in dots((tmp_path / "bench-simulate.svg").read_text())
    assert not (tmp_path / "bench-functions.svg").exists()  # its tables were not written
