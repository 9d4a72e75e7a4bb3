"""Generated code and docs match the XRDs: the pydantic models and docs/reference/."""

import shutil
from pathlib import Path

import pytest
import yaml
from modelfleet_devtools import generate
from modelfleet_devtools.paths import REPO_ROOT, xrd_paths


def test_committed_models_and_reference_are_fresh() -> None:
    stale = [
        target.relative_to(REPO_ROOT).as_posix()
        for target, source in generate.generated_files()
        if not target.exists() or target.read_text() != source
    ]
    assert not stale, f"stale generated files (run `uv run modelfleet-generate`): {stale}"


def _leaf_paths(node: dict, path: str) -> list[str]:
    items = node.get("items")
    if node.get("type") == "array" and isinstance(items, dict) and items.get("properties"):
        return _leaf_paths(items, f"{path}[]")
    props = node.get("properties") or {}
    if not props:
        return [path]
    return [p for name, child in props.items() for p in _leaf_paths(child, f"{path}.{name}")]


@pytest.mark.parametrize("xrd_path", xrd_paths(), ids=lambda p: p.parent.name)
def test_reference_lists_every_field_rule_and_column(xrd_path: Path) -> None:
    xrd = yaml.safe_load(xrd_path.read_text())
    version = xrd["spec"]["versions"][0]
    schema = generate.served_schema(xrd)
    _, page = generate.render_reference(xrd_path)
    for part in ("spec", "status"):
        for path in _leaf_paths(schema["properties"][part], part):
            assert f"| `{path}` |" in page, path
    for column in version.get("additionalPrinterColumns") or []:
        assert f"| {column['name']} |" in page
    if version.get("additionalPrinterColumns"):
        assert "  ".join(generate.kubectl_get_header(xrd)) in page, "what kubectl get prints"
    messages = [str(rule["message"]) for rule in _all_rules(schema)]
    for message in messages:
        assert message.replace("|", "\\|") in page


def _all_rules(node: dict) -> list[dict]:
    found = list(node.get("x-kubernetes-validations") or [])
    for child in (node.get("properties") or {}).values():
        found += _all_rules(child)
    if isinstance(node.get("items"), dict):
        found += _all_rules(node["items"])
    return found


def test_check_fails_when_a_reference_page_is_stale(tmp_path, monkeypatch, capsys) -> None:
    models = tmp_path / "models"
    reference = tmp_path / "reference"
    shutil.copytree(generate.MODELS_DIR, models)
    shutil.copytree(generate.REFERENCE_DIR, reference)
    monkeypatch.setattr(generate, "MODELS_DIR", models)
    monkeypatch.setattr(generate, "REFERENCE_DIR", reference)
    assert generate.main(["--check"]) == 0

    page = reference / "modelcache.md"
    page.write_text(page.read_text().replace("sizeGiB", "sizeGB"))
    assert generate.main(["--check"]) == 1
    assert "modelcache.md" in capsys.readouterr().err
    assert generate.main([]) == 0  # regenerating repairs it
    assert generate.main(["--check"]) == 0
