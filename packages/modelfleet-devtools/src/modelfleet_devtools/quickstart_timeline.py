"""The quickstart's timeline as the docs quote it, abridged from what `modelfleet simulate
examples/quickstart` prints (`uv run modelfleet-generate` writes it): getting-started shows
each XR's header line (the shard's left out: its cache says the same), docs/cli.md every line
of the ModelDeployment and the ModelCache's headers, with `...` where lines were left out."""

import functools
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from modelfleet_contracts.api import (
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
)

from modelfleet_devtools.docs_sections import section_name
from modelfleet_devtools.paths import EXAMPLES_DIR, REPO_ROOT

COMMAND = ("simulate", "examples/quickstart", "--quiet")
SECTION = section_name("modelfleet-generate", "simulate examples/quickstart")
_HEADER = re.compile(r"^round \d+ +(\w+) ")


class TimelineError(RuntimeError):
    """`modelfleet simulate examples/quickstart` failed: there is nothing to quote."""


@dataclass(frozen=True)
class Abridging:
    """Which of the printed lines a doc quotes (the closing line always)."""

    headers: frozenset[str]  # kinds whose header lines are kept
    details: frozenset[str]  # kinds whose lines under the header are kept too
    ellipsis: bool  # a `...` where lines were left out


GETTING_STARTED = Abridging(
    headers=frozenset({INFERENCE_CLUSTER, MODEL_CACHE, MODEL_DEPLOYMENT, MODEL_REPLICA}),
    details=frozenset(),
    ellipsis=False,
)
CLI = Abridging(
    headers=frozenset({MODEL_CACHE, MODEL_DEPLOYMENT}),
    details=frozenset({MODEL_DEPLOYMENT}),
    ellipsis=True,
)
ABRIDGED = {
    REPO_ROOT / "docs" / "getting-started.md": GETTING_STARTED,
    REPO_ROOT / "docs" / "cli.md": CLI,
}


@functools.cache
def printed() -> tuple[str, ...]:
    """What the command prints on stdout; run once per process (about 5 s)."""
    modelfleet = Path(sys.executable).with_name("modelfleet")
    run = subprocess.run(
        [str(modelfleet), *COMMAND],
        cwd=EXAMPLES_DIR.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if run.returncode != 0:
        words = " ".join(COMMAND)
        raise TimelineError(f"modelfleet {words} exited {run.returncode}: {run.stderr}")
    return tuple(run.stdout.splitlines())


def abridged(lines: tuple[str, ...], how: Abridging) -> str:
    """The lines `how` keeps, in order (a `...` never first)."""
    out: list[str] = []
    kind: str | None = None
    for number, line in enumerate(lines, start=1):
        if not line.startswith(" "):
            header = _HEADER.match(line)
            kind = header[1] if header else None
            keep = kind in how.headers or (kind is None and number == len(lines))
        else:
            keep = kind in how.details
        if keep:
            out.append(line)
        elif how.ellipsis and out and out[-1] != "...":
            out.append("...")
    return "\n".join(out)


def section(doc: Path) -> str:
    """The body of SECTION in `doc`: its abridged timeline as a code block."""
    return f"```\n{abridged(printed(), ABRIDGED[doc])}\n```"
