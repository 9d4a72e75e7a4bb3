"""Sections of a docs file that scripts write (modelfleet_devtools.docs_sections): a body goes
between its two markers and nothing outside them moves; a missing, doubled or reversed marker
is an error naming the file and the marker, and then nothing is written."""

from pathlib import Path

import pytest
from modelfleet_devtools.docs_sections import (
    SectionError,
    check_sections,
    markers,
    replace_section,
    section_body,
    section_name,
    section_names,
    write_sections,
)

TABLE = section_name("bench_x.py", "small")
OTHER = section_name("bench_x.py")
TABLE_START, TABLE_END = markers(TABLE)
OTHER_START, OTHER_END = markers(OTHER)
DOC = (
    "# Benchmarks\n\nProse before.\n\n"
    f"{TABLE_START}\nold table\n{TABLE_END}\n\n"
    "Prose between.\n\n"
    f"{OTHER_START}\nold other\n{OTHER_END}\n\nProse after.\n"
)


def test_a_section_is_named_after_the_script_and_its_table() -> None:
    assert section_name("functions/f/benchmarks/bench_cache.py", "turning Ready") == (
        "bench_cache.py: turning Ready"
    )
    assert section_name(Path("/any/where/bench_replica.py")) == "bench_replica.py"
    assert markers("bench_replica.py") == (
        "<!-- bench_replica.py: start -->",
        "<!-- bench_replica.py: end -->",
    )
    assert section_names(DOC + f"{TABLE_START}\n") == [TABLE, OTHER, TABLE]


def test_replacing_a_body_keeps_everything_outside_its_markers() -> None:
    text = replace_section(DOC, TABLE, "\n\n### new heading\n\n| 1 |\n\n")
    assert section_body(text, TABLE) == "### new heading\n\n| 1 |"
    assert f"{TABLE_START}\n### new heading\n\n| 1 |\n{TABLE_END}" in text
    assert section_body(text, OTHER) == "old other"
    assert replace_section(text, TABLE, "old table") == DOC  # only the body changed


@pytest.mark.parametrize(
    ("doc", "marker", "says"),
    [
        pytest.param(DOC.replace(TABLE_START, ""), TABLE_START, "is missing", id="no start"),
        pytest.param(DOC.replace(TABLE_END, ""), TABLE_END, "is missing", id="no end"),
        pytest.param(DOC + TABLE_START, TABLE_START, "is there 2 times", id="start twice"),
        pytest.param(DOC + TABLE_END, TABLE_END, "is there 2 times", id="end twice"),
        pytest.param(
            DOC.replace(TABLE_START, "@@").replace(TABLE_END, TABLE_START).replace("@@", TABLE_END),
            TABLE_END,
            f"comes before {TABLE_START}",
            id="end before start",
        ),
    ],
)
def test_a_bad_marker_is_an_error_naming_the_file_and_the_marker_and_nothing_is_written(
    tmp_path: Path, doc: str, marker: str, says: str
) -> None:
    path = tmp_path / "benchmarks.md"
    path.write_text(doc)
    with pytest.raises(SectionError) as checked:
        check_sections(path, [OTHER, TABLE])
    # OTHER's section is fine and comes first: writing it must not happen without TABLE's.
    with pytest.raises(SectionError) as written:
        write_sections(path, {OTHER: "new other", TABLE: "new table"})
    for err in (checked.value, written.value):
        assert str(path) in str(err)
        assert f"{marker} {says}" in str(err)
    assert path.read_text() == doc


def test_writing_replaces_every_named_section_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "benchmarks.md"
    path.write_text(DOC)
    check_sections(path, [TABLE, OTHER])
    write_sections(path, {TABLE: "new table", OTHER: "new other"})
    text = path.read_text()
    assert (section_body(text, TABLE), section_body(text, OTHER)) == ("new table", "new other")
    assert text == DOC.replace("old table", "new table").replace("old other", "new other")
