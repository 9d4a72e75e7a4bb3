"""What the render tests share: the examples, the functions file, and reading a rendered
stream (test_render_examples.py, test_render_caches.py)."""

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from modelfleet_cli.composed import ANNOTATION_RESOURCE_NAME
from modelfleet_cli.discovery import repository_root
from modelfleet_cli.loading import load_objects
from modelfleet_cli.main import main
from modelfleet_devtools.audit import record_text
from modelfleet_devtools.validation import require_shared_schemas, validate_manifest
from render_inputs import required_files

ROOT = repository_root()
assert ROOT is not None
EXAMPLES = ROOT / "examples"
COMPOSITIONS = {
    "InferenceCluster": "apis/inferenceclusters/composition.yaml",
    "ModelCache": "apis/modelcaches/composition.yaml",
    "ModelCacheShard": "apis/modelcacheshards/composition.yaml",
    "ModelDeployment": "apis/modeldeployments/composition.yaml",
    "ModelReplica": "apis/modelreplicas/composition.yaml",
    "ModelService": "apis/modelservices/composition.yaml",
}


def render(
    functions_file: Path, xr: Path, *flags: str, composition: str | None = None
) -> list[dict[str, Any]]:
    kind = load_objects(xr)[0]["kind"]
    comp = composition or str(ROOT / COMPOSITIONS[kind])
    args = ["render", str(xr), comp, str(functions_file), *flags]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    record_text(f"modelfleet render {xr.name}", result.output)  # audited for test tokens
    assert result.exit_code == 0, result.output
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc is not None]


def single(tmp_path: Path, path: Path, name: str) -> Path:
    """The object called `name` of a multi-object file, alone in a file (render takes one XR)."""
    [obj] = [o for o in load_objects(path) if o["metadata"]["name"] == name]
    out = tmp_path / f"{name}.yaml"
    out.write_text(yaml.safe_dump(obj))
    return out


def conditions(xr: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in xr["status"]["conditions"]}


def composed_names(docs: list[dict[str, Any]]) -> list[str]:
    return [d["metadata"]["annotations"][ANNOTATION_RESOURCE_NAME] for d in docs[1:]]


def remote(doc: dict[str, Any]) -> dict[str, Any]:
    return doc.get("spec", {}).get("forProvider", {}).get("manifest", {})


def check_stream(docs: list[dict[str, Any]], kind: str, root: str | None = None) -> None:
    """What every render must look like: the XR with conditions first, composed resources
    sorted by composition-resource-name, each with Crossplane's metadata and schema-valid.
    `root`: the XR at the top of the tree, whose name labels everything composed beneath it
    (the ModelCache, for a ModelCacheShard); else read from the XR's labels (-x), or the XR."""
    xr = docs[0]
    assert xr["kind"] == kind
    assert "Ready" in conditions(xr)
    assert "Synced" not in conditions(xr), "crossplane render does not print Synced"
    # The requirements loop ends with everything resolved; a first call's answer never shows.
    assert all(reason != "Resolving" for _, reason in conditions(xr).values())
    names = composed_names(docs)
    assert names == sorted(names)
    labels = xr["metadata"].get("labels", {})
    root = root or labels.get("crossplane.io/composite", xr["metadata"]["name"])
    for doc in docs[1:]:
        meta = doc["metadata"]
        assert meta["labels"]["crossplane.io/composite"] == root
        [owner] = [r for r in meta["ownerReferences"] if r.get("controller")]
        assert (owner["kind"], owner["name"]) == (kind, xr["metadata"]["name"])
        assert meta.get("name") or meta.get("generateName")
        require_shared_schemas()
        errors = validate_manifest(doc)
        if doc.get("spec", {}).get("managementPolicies") == ["Observe"]:
            # An Observe-only Object's manifest only names what to watch (provider-kubernetes
            # never applies it), so only the Object itself must be valid.
            errors = [e for e in errors if " -> " not in e]
        assert not errors, errors


def example(name: str) -> Path:
    return EXAMPLES / name


def observed(example_name: str, xr_name: str) -> list[str]:
    path = EXAMPLES / example_name / "render" / f"observed-{xr_name}.yaml"
    return ["--observed-resources", str(path)]


def required(example_name: str, kind: str) -> list[str]:
    """What an XR of `kind` requires (never the XR itself: see render_inputs.py)."""
    return [
        flag
        for path in required_files(EXAMPLES / example_name, kind)
        for flag in ("--required-resources", str(path))
    ]
