"""Every example under examples/ is something a user can `kubectl apply` as written.

Each YAML document is validated on its own (so a failure names the example, file and
document): Modelfleet XRs against their XRD (OpenAPI schema and CEL rules), core kinds such
as the token Secret against the Kubernetes schemas, and the Function objects of
functions.yaml against the upstream Function CRD.

Not ours to validate here: `<example>/simulation.yaml` (the simulator's own scenario file)
and `<example>/render/` (expected render output, checked by the render tests).
"""

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_devtools.paths import EXAMPLES_DIR, SHARED_SCHEMAS_DIR
from modelfleet_devtools.validation import assert_valid, assert_valid_xr, require_shared_schemas

MODELFLEET_KINDS = {
    "InferenceCluster",
    "ModelCache",
    "ModelDeployment",
    "ModelReplica",
    "ModelService",
}
FUNCTION_CRD = SHARED_SCHEMAS_DIR / "pkg.crossplane.io_functions.yaml"


def _example_files() -> list[Path]:
    files = []
    for path in sorted(EXAMPLES_DIR.rglob("*.yaml")):
        relative = path.relative_to(EXAMPLES_DIR)
        if path.name == "simulation.yaml" or "render" in relative.parts[:-1]:
            continue
        files.append(path)
    return files


def _documents() -> list[tuple[str, dict[str, Any]]]:
    """(id, document) for every non-empty YAML document of every example file."""
    docs = []
    for path in _example_files():
        relative = path.relative_to(EXAMPLES_DIR).as_posix()
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc is None:
                continue
            name = doc.get("metadata", {}).get("name", "<unnamed>")
            docs.append((f"{relative}#{index}-{doc.get('kind')}-{name}", doc))
    return docs


DOCUMENTS = _documents()
FLEETS = (
    sorted(p for p in EXAMPLES_DIR.iterdir() if p.is_dir() and any(p.glob("*.yaml")))
    if EXAMPLES_DIR.is_dir()
    else []
)


def test_examples_exist() -> None:
    assert EXAMPLES_DIR.is_dir(), f"{EXAMPLES_DIR} is missing"
    assert DOCUMENTS, "examples/ holds no YAML documents"


@pytest.mark.parametrize("doc", [d for _, d in DOCUMENTS], ids=[i for i, _ in DOCUMENTS])
def test_example_document_is_valid(doc: dict[str, Any]) -> None:
    api_version = str(doc.get("apiVersion", ""))
    kind = doc.get("kind")
    group = api_version.rpartition("/")[0]
    if group == "modelfleet.io":
        assert kind in MODELFLEET_KINDS, f"unknown Modelfleet kind {kind}"
        assert_valid_xr(doc)
    elif group == "":
        assert kind == "Secret", f"only Secrets are expected among core kinds, got {kind}"
        assert_valid(doc)
    elif group == "pkg.crossplane.io":
        # Without the upstream CRD validate_manifest would accept anything: skip, saying so.
        require_shared_schemas()
        assert FUNCTION_CRD.is_file(), f"{FUNCTION_CRD} is missing"
        assert kind == "Function", f"only Functions are expected from pkg.crossplane.io, got {kind}"
        assert_valid(doc)
    else:
        pytest.fail(f"unexpected {api_version} {kind} in examples/")


def _kinds_in(folder: Path) -> Counter[str]:
    return Counter(
        doc["kind"]
        for path in _example_files()
        if path.parent == folder
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    )


@pytest.mark.parametrize("fleet", FLEETS, ids=[p.name for p in FLEETS])
def test_every_fleet_has_an_inference_cluster(fleet: Path) -> None:
    assert _kinds_in(fleet)["InferenceCluster"] >= 1, f"{fleet.name} registers no cluster"


def test_every_kind_has_an_example() -> None:
    kinds = Counter(doc.get("kind") for _, doc in DOCUMENTS)
    missing = sorted(k for k in MODELFLEET_KINDS if kinds[k] == 0)
    assert not missing, f"no example of {missing}"


def _functions_yaml() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES_DIR / "functions.yaml").read_text()) if d]


def test_functions_yaml_points_render_at_every_local_function() -> None:
    """crossplane render needs one Development-runtime Function per composition step."""
    functions = {f["metadata"]["name"]: f for f in _functions_yaml()}
    composed_by = {
        step["functionRef"]["name"]
        for path in sorted(EXAMPLES_DIR.parent.glob("apis/*/composition.yaml"))
        for step in yaml.safe_load(path.read_text())["spec"]["pipeline"]
    }
    assert set(functions) == composed_by
    targets = []
    for name, function in functions.items():
        annotations = function["metadata"]["annotations"]
        assert annotations["render.crossplane.io/runtime"] == "Development", name
        targets.append(annotations["render.crossplane.io/runtime-development-target"])
        assert name in function["spec"]["package"], name
    assert len(set(targets)) == len(targets), f"two functions share a target: {targets}"
