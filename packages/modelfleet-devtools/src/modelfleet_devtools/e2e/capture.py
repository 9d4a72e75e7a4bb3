"""What docs/getting-started.md shows of a real run: `kubectl get ic,mc,md,mr -A` once the
quickstart is Ready, captured by the end-to-end suite (MODELFLEET_E2E_WRITE_DOCS=1 writes it;
every run compares it, ages and generated name suffixes aside)."""

from __future__ import annotations

import re

from ..docs_sections import section_body, write_sections
from ..paths import REPO_ROOT
from .stack import RealControlPlane

GETTING_STARTED = REPO_ROOT / "docs" / "getting-started.md"
SECTION = "e2e quickstart: kubectl get ic,mc,md,mr -A"
# A ModelReplica's name ends in the suffix its ModelDeployment generated for it.
_GENERATED = re.compile(r"(modelreplica\.modelfleet\.io/\S+)-[a-z0-9]{5}\b")


def fleet_view(plane: RealControlPlane) -> str:
    return plane.client.kubectl("get", "ic,mc,md,mr", "-A").rstrip("\n")


def comparable(view: str) -> list[list[str]]:
    """Each line's columns, without AGE (the last) and with generated suffixes masked."""
    rows = []
    for line in view.strip("\n").removeprefix("```text").removesuffix("```").splitlines():
        if not line.strip():
            continue
        columns = re.split(r"\s{2,}", _GENERATED.sub(r"\1-xxxxx", line.strip()))
        rows.append(columns[:-1])
    return rows


def documented_view() -> str:
    return section_body(GETTING_STARTED.read_text(), SECTION, "docs/getting-started.md")


def write_documented_view(view: str) -> None:
    write_sections(GETTING_STARTED, {SECTION: f"```text\n{view}\n```"})
