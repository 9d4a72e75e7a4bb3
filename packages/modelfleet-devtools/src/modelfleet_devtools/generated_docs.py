"""The sections of the docs `uv run modelfleet-generate` writes (docs_sections' markers): the
quickstart's timeline as `modelfleet simulate` prints it, and what `kubectl get pkg` lists,
from `apis/`."""

from collections.abc import Callable
from pathlib import Path

from modelfleet_devtools import apis_inventory, quickstart_timeline
from modelfleet_devtools.docs_sections import replace_section
from modelfleet_devtools.paths import REPO_ROOT

GETTING_STARTED = REPO_ROOT / "docs" / "getting-started.md"
CLI = REPO_ROOT / "docs" / "cli.md"
# doc -> (section, what writes its body from the doc's path)
SECTIONS: dict[Path, list[tuple[str, Callable[[Path], str]]]] = {
    GETTING_STARTED: [
        (quickstart_timeline.SECTION, quickstart_timeline.section),
        (apis_inventory.PACKAGES_SECTION, lambda _doc: apis_inventory.packages_section()),
    ],
    CLI: [(quickstart_timeline.SECTION, quickstart_timeline.section)],
}


def generated() -> list[tuple[Path, str]]:
    """Every doc with generated sections, and its text with each section's body written."""
    files = []
    for doc, sections in SECTIONS.items():
        text = doc.read_text()
        for name, body in sections:
            text = replace_section(text, name, body(doc), doc.relative_to(REPO_ROOT).as_posix())
        files.append((doc, text))
    return files
