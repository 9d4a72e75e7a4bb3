"""docs/reliability.md quotes only figures the code determines, and they are the code's."""

import re

from hostile_world import HOSTILE, SERVICE_TARGETS, TARGETS
from modelfleet_devtools.paths import REPO_ROOT

PAGE = (REPO_ROOT / "docs" / "reliability.md").read_text()
FUNCTIONS = REPO_ROOT / "functions"


def properties_of(function: str) -> int:
    """The hypothesis properties in a function's fuzz tests."""
    return sum(
        path.read_text().count("@given(")
        for path in (FUNCTIONS / function / "tests").glob("*fuzz*.py")
    )


def test_the_fuzz_table_counts_each_functions_properties():
    rows = re.findall(r"^\| (compose-[a-z-]+) \| (\d+) \|", PAGE, re.MULTILINE)
    functions = sorted(p.name for p in FUNCTIONS.iterdir() if (p / "tests").is_dir())
    assert sorted(name for name, _ in rows) == functions
    for name, count in rows:
        assert int(count) == properties_of(name), name


def test_the_hostile_input_figures_are_the_tables_of_the_test():
    strings, fields = len(HOSTILE), len(TARGETS)
    assert f"Each of the {strings} hostile strings" in PAGE
    assert f"each of the {fields} user fields ({strings * fields} cases)" in PAGE
    # the tampered cache path is tried once per hostile string
    assert f"plus {strings}\ntampered cache paths: {strings * fields + strings} cases" in PAGE
    services = len(SERVICE_TARGETS)
    assert f"each of the {services} ModelService fields ({strings * services} cases)" in PAGE
    assert f"{services} ModelService fields ({strings * services} cases), on a" in PAGE


def test_no_figure_of_the_whole_suite_is_copied():
    """The size of the suite changes with every test: the page points at the command."""
    assert not re.search(r"\b\d[\d,]* (passed|tests)\b", PAGE)
