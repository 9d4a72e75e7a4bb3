"""parse_quantity: a Kubernetes quantity in any spelling the API server accepts, exactly."""

from fractions import Fraction

import pytest
from modelfleet_contracts.quantity import GIB, gib_ceiling, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("10Gi", 10 * GIB, id="binary suffix, as the function composes it"),
        pytest.param("1Ki", 1024, id="Ki"),
        pytest.param("3Mi", 3 * 2**20, id="Mi"),
        pytest.param("2Ti", 2 * 2**40, id="Ti"),
        pytest.param("1Pi", 2**50, id="Pi"),
        pytest.param("1Ei", 2**60, id="Ei"),
        pytest.param("1.5Ti", 1536 * GIB, id="a fraction of a binary unit"),
        pytest.param("250G", 250 * 10**9, id="decimal G: less than 250Gi"),
        pytest.param("1T", 10**12, id="decimal T"),
        pytest.param("500M", 5 * 10**8, id="decimal M"),
        pytest.param("2k", 2000, id="decimal k"),
        pytest.param("1P", 10**15, id="decimal P"),
        pytest.param("1E", 10**18, id="E alone is exa"),
        pytest.param("1E3", 1000, id="E with digits is an exponent"),
        pytest.param("1e9", 10**9, id="lower-case exponent"),
        pytest.param("5e-1", Fraction(1, 2), id="negative exponent"),
        pytest.param("100m", Fraction(1, 10), id="milli"),
        pytest.param("7u", Fraction(7, 10**6), id="micro"),
        pytest.param("3n", Fraction(3, 10**9), id="nano"),
        pytest.param("10737418240", 10 * GIB, id="plain bytes, as the API server may echo"),
        pytest.param("+1Gi", GIB, id="explicit plus"),
        pytest.param("-1Gi", -GIB, id="negative (what a schema refuses, read as written)"),
        pytest.param(".5Gi", GIB // 2, id="no leading digit"),
        pytest.param("1.Gi", GIB, id="no digit after the point"),
        pytest.param(10737418240, 10 * GIB, id="a YAML integer"),
        pytest.param(10737418240.0, 10 * GIB, id="a whole number as a Struct carries it"),
    ],
)
def test_a_quantity_reads_as_its_exact_value(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("Gi", id="no number"),
        pytest.param("10gi", id="suffixes are case-sensitive"),
        pytest.param("10GB", id="not a Kubernetes unit"),
        pytest.param(" 10Gi", id="leading space"),
        pytest.param("10 Gi", id="space before the unit"),
        pytest.param("1e", id="an exponent without digits"),
        pytest.param("1.5.0Gi", id="two points"),
        pytest.param("1Ki2", id="digits after the unit"),
        pytest.param("1e99999", id="an exponent no quantity has"),
        pytest.param("1" * 65, id="longer than any claim's quantity"),
        pytest.param(1.5, id="a fraction as a number"),
        pytest.param(True, id="a boolean"),
        pytest.param(None, id="nothing"),
        pytest.param({"storage": "10Gi"}, id="a mapping"),
    ],
)
def test_anything_else_is_no_quantity(text):
    assert parse_quantity(text) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1Ti", "1000Gi"),
        ("1000Gi", "1T"),
        ("1T", "931Gi"),
        ("10Gi", "10G"),
        ("10737418241", "10Gi"),
    ],
)
def test_spellings_compare_by_value(a, b):
    assert parse_quantity(a) > parse_quantity(b)


@pytest.mark.parametrize(
    ("text", "gib"),
    [("10Gi", 10), ("250G", 233), ("1.5Ti", 1536), ("1", 1), ("10737418241", 11), ("0", 0)],
)
def test_the_least_whole_gib_that_holds_a_size(text, gib):
    assert gib_ceiling(parse_quantity(text)) == gib
