"""Sections of a docs file that a script writes itself, so that what the docs show is what the
script printed. A section is the text between `<!-- NAME: start -->` and `<!-- NAME: end -->`,
NAME being the script's file name, followed by the table's name when one script writes
several tables (`bench_cache.py: turning Ready`)."""

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from modelfleet_devtools.paths import REPO_ROOT

BENCHMARKS_DOC = REPO_ROOT / "docs" / "benchmarks.md"
_START = re.compile(r"<!-- (.+?): start -->")


class SectionError(ValueError):
    """A docs file lacks a section's markers, holds one more than once, or has them reversed."""


def section_name(script: Path | str, table: str | None = None) -> str:
    """The NAME in a section's markers: the script's file name, and the table's if given."""
    name = Path(script).name
    return f"{name}: {table}" if table else name


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of section `name`."""
    return f"<!-- {name}: start -->", f"<!-- {name}: end -->"


def section_names(text: str) -> list[str]:
    """The name of every start marker in `text`, in order, repeats included."""
    return _START.findall(text)


def _shown(path: Path | str) -> str:
    """A path as the docs show it: from the repository's root when it is inside."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path)


def script_command(script: Path | str) -> str:
    """How the docs spell running a script: `uv run python` and its path from the repository."""
    return f"uv run python {_shown(script)}"


def _body_bounds(text: str, name: str, where: str) -> tuple[int, int]:
    """Where section `name`'s body starts (right after its start marker) and ends (at its end
    marker); SectionError unless each marker is there exactly once, start before end."""
    start, end = markers(name)
    for marker in (start, end):
        count = text.count(marker)
        if count != 1:
            found = "missing" if count == 0 else f"there {count} times"
            raise SectionError(f"{where}: the marker {marker} is {found}; it must be there once")
    body_start, body_end = text.index(start) + len(start), text.index(end)
    if body_end < body_start:
        raise SectionError(f"{where}: the marker {end} comes before {start}")
    return body_start, body_end


def section_body(text: str, name: str, where: str = "the text") -> str:
    """The lines between section `name`'s markers, as a script wrote them."""
    body_start, body_end = _body_bounds(text, name, where)
    return text[body_start:body_end].strip("\n")


def replace_section(text: str, name: str, body: str, where: str = "the text") -> str:
    """`text` with section `name`'s body replaced by `body`, on the lines between its markers;
    `where` names the text in errors."""
    body_start, body_end = _body_bounds(text, name, where)
    lines = body.strip("\n")
    return f"{text[:body_start]}\n{lines}\n{text[body_end:]}"


def check_sections(path: Path, names: Iterable[str]) -> None:
    """SectionError unless file `path` has every named section once (a script calls it before
    measuring, so that a missing marker does not cost a whole run)."""
    text = path.read_text()
    for name in names:
        _body_bounds(text, name, _shown(path))


def write_sections(path: Path, bodies: Mapping[str, str]) -> None:
    """Replace each named section of file `path` with its body, and redraw the plots drawn
    from those sections (bench_plots). All or nothing: the file is written only once every
    section was found."""
    from modelfleet_devtools import bench_plots  # it reads sections with this module

    text = path.read_text()
    for name, body in bodies.items():
        text = replace_section(text, name, body, _shown(path))
    path.write_text(text)
    bench_plots.redraw(path, set(bodies))
