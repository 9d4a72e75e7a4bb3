"""The architecture diagram (docs/figures/architecture.svg) is drawn from its source
(docs/figures/architecture.yaml) by `uv run modelfleet-generate` (fresh: see
test_generated_files_are_fresh.py), shown in README.md and docs/concepts.md, names every kind
and function, and its text fits its boxes."""

import xml.etree.ElementTree as ET

import yaml
from modelfleet_contracts.api import (
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_CACHE_SHARD,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
)
from modelfleet_devtools import diagram
from modelfleet_devtools.paths import REPO_ROOT

SOURCE = yaml.safe_load(diagram.SOURCE.read_text())
FUNCTIONS = sorted(p.name for p in (REPO_ROOT / "functions").iterdir() if p.is_dir())


def test_the_picture_is_in_the_readme_and_the_concepts():
    assert "](docs/figures/architecture.svg)" in (REPO_ROOT / "README.md").read_text()
    assert "](figures/architecture.svg)" in (REPO_ROOT / "docs/concepts.md").read_text()


def test_it_names_every_kind_and_every_function():
    svg = diagram.TARGET.read_text()
    texts = {el.text for el in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")}
    kinds = [INFERENCE_CLUSTER, MODEL_CACHE, MODEL_CACHE_SHARD, MODEL_DEPLOYMENT, MODEL_REPLICA]
    assert set(kinds) <= texts
    assert set(FUNCTIONS) <= texts


def test_every_edge_joins_two_boxes_and_no_two_boxes_share_a_place():
    ids = [b["id"] for b in SOURCE["boxes"]]
    places = [(b["column"], b["row"]) for b in SOURCE["boxes"]]
    assert len(set(ids)) == len(ids) and len(set(places)) == len(places)
    assert all(e["from"] in ids and e["to"] in ids for e in SOURCE["edges"])
    assert all(b["kind"] in diagram.FILLS for b in SOURCE["boxes"])


def test_its_text_fits():
    assert diagram.overflows(SOURCE) == []
