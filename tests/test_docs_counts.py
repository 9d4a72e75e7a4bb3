"""No doc states a count of the XRDs or of the Functions that `apis/` contradicts.

A number right before `XRDs`, `kinds` or `APIs` (one word may sit between: "the six Modelfleet
kinds") is read as a count of the XRDs under apis/; before `functions`, `Function packages` or
`function images`, as a count of the Functions the Configuration (apis/crossplane.yaml)
depends on. A doc saying something general of two of them says it without a number. What
`kubectl get pkg` lists, wherever a doc shows it, is the Configuration and those Functions."""

import re
from pathlib import Path

import pytest
from modelfleet_devtools.apis_inventory import function_names, xrd_kinds
from modelfleet_devtools.paths import REPO_ROOT

WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
NUMBER = r"(?P<number>\d+|" + "|".join(WORDS) + ")"
QUALIFIER = r"(?:[\w-]+ )?"
XRD_NOUNS = r"(?:XRDs|kinds|APIs)"
FUNCTION_NOUNS = r"(?:functions|Functions|Function packages|function packages|function images)"
XRD_COUNT = re.compile(rf"\b{NUMBER} {QUALIFIER}{XRD_NOUNS}\b", re.IGNORECASE)
FUNCTION_COUNT = re.compile(rf"\b{NUMBER} {QUALIFIER}{FUNCTION_NOUNS}\b", re.IGNORECASE)
PACKAGES = re.compile(r"kubectl get pkg +#(.*?)(?:\n(?! +#)|$)", re.DOTALL)


def docs() -> list[Path]:
    found = [REPO_ROOT / "README.md", *REPO_ROOT.glob("docs/**/*.md")]
    return sorted([*found, *REPO_ROOT.glob("examples/**/*.md")])


def counted(number: str) -> int:
    return int(number) if number.isdigit() else WORDS.index(number.lower()) + 2


def claims(text: str, pattern: re.Pattern[str]) -> list[tuple[str, int]]:
    """Every count `pattern` finds in `text`, its lines joined: (the words, the number)."""
    flat = " ".join(text.split())
    return [(m[0], counted(m["number"])) for m in pattern.finditer(flat)]


@pytest.mark.parametrize("doc", docs(), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_count_of_xrds_and_functions_is_what_apis_holds(doc: Path) -> None:
    text = doc.read_text()
    xrds, functions = len(xrd_kinds()), len(function_names())
    wrong = [(words, xrds) for words, n in claims(text, XRD_COUNT) if n != xrds]
    wrong += [(words, functions) for words, n in claims(text, FUNCTION_COUNT) if n != functions]
    assert not wrong, f"counts apis/ contradicts (the claim, what apis/ holds): {wrong}"


@pytest.mark.parametrize("doc", docs(), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_what_kubectl_get_pkg_lists_is_every_function_the_configuration_depends_on(
    doc: Path,
) -> None:
    for comment in PACKAGES.findall(doc.read_text()):
        named = set(re.findall(r"\bcompose-[a-z-]+[a-z]", comment))
        assert named == set(function_names()), comment


CLAIMS = [
    # the text, the counts the scan reads in it
    pytest.param("the five XRDs and their Compositions", {"XRDs": [5]}, id="XRDs"),
    pytest.param("adds six kinds to a control plane", {"XRDs": [6]}, id="kinds"),
    pytest.param("starts the four\ncomposition functions", {"functions": [4]},
                 id="a count across a line break, with a word between"),
    pytest.param("the 5 Function packages", {"functions": [5]}, id="digits"),
    pytest.param("builds the four function images", {"functions": [4]}, id="images"),
    pytest.param("one composition function each", {}, id="one function is not a count"),
    pytest.param("the functions of this repository", {}, id="no number"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "counts"), CLAIMS)
def test_the_scan_reads_counts_as_a_reader_does(text: str, counts: dict[str, list[int]]) -> None:
    found = {
        "XRDs": [n for _, n in claims(text, XRD_COUNT)],
        "functions": [n for _, n in claims(text, FUNCTION_COUNT)],
    }
    assert {k: v for k, v in found.items() if v} == counts
