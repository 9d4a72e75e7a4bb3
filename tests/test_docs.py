"""The user docs say what the code does: their YAML is valid, their examples compose."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_devtools.generate import kubectl_get_header
from modelfleet_devtools.paths import REPO_ROOT
from modelfleet_devtools.validation import validate_manifest

DOCS = REPO_ROOT / "docs"
USER_DOCS = [
    "getting-started.md",
    "concepts.md",
    "inferencecluster.md",
    "modelcache.md",
    "modeldeployment.md",
    "modelreplica.md",
    "modelservice.md",
]
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)


def yaml_documents(page: Path) -> list[object]:
    docs: list[object] = []
    for block in YAML_BLOCK.findall(page.read_text()):
        docs += [d for d in yaml.safe_load_all(block) if d is not None]
    return docs


def manifests(page: Path) -> list[dict[str, Any]]:
    """Every YAML document of the page that is a Kubernetes object (apiVersion and kind)."""
    return [
        d
        for d in yaml_documents(page)
        if isinstance(d, dict) and d.get("apiVersion") and d.get("kind")
    ]


@pytest.mark.parametrize("name", [n for n in USER_DOCS if (DOCS / n).exists()])
def test_every_yaml_block_parses_and_every_manifest_is_valid(name: str) -> None:
    """Modelfleet XRs against their XRDs (schema and CEL); upstream kinds against their CRDs
    or the Kubernetes schemas where known."""
    for manifest in manifests(DOCS / name):
        errors = validate_manifest(manifest)
        assert errors == [], f"{name}: {manifest['kind']}: {errors}"


@pytest.mark.parametrize("name", [n for n in USER_DOCS if (DOCS / n).exists()])
def test_relative_links_point_at_files_that_exist(name: str) -> None:
    page = DOCS / name
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
        if "://" in target:
            continue
        assert (page.parent / target).exists(), f"{name} links to missing {target}"


def test_readme_where_next_links_exist() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    table = readme.split("## Where next", 1)[1].split("\n## ", 1)[0]
    for target in re.findall(r"\]\(([^)]+)\)", table):
        assert (REPO_ROOT / target).exists(), target


# -- the gang shown in docs/modelreplica.md -------------------------------------------------

MULTINODE = REPO_ROOT / "examples" / "multinode"
_FIRST = ["apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations", "spec"]
_FIRST += ["replicas", "size", "image", "command", "args"]


def _tidy(value: Any) -> Any:
    """Whole floats (protobuf Structs carry numbers as floats) as ints; readable key order."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (_FIRST.index(k) if k in _FIRST else len(_FIRST), k))
        return {k: _tidy(value[k]) for k in keys}
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    return value


def multinode_gang() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ModelReplica the real scheduler composes for examples/multinode, and the remote
    manifests the real replica function composes once the cache is Ready there."""
    from compose_model_cache.fn import run_function as cache_fn
    from compose_model_deployment.fn import run_function as deployment_fn
    from compose_model_replica.fn import run_function as replica_fn
    from modelfleet_contracts.edge.runner import SafeRunner
    from modelfleet_devtools.requests import (
        desired_resources,
        desired_status,
        run_function_request,
    )
    from modelfleet_devtools.world import inference_cluster

    def observed(ic: dict[str, Any]) -> dict[str, Any]:
        meta, spec = ic["metadata"], ic["spec"]
        storage = "modelfleet-rwx" if spec.get("storage") else None
        return inference_cluster(
            meta["name"], labels=meta["labels"], storage_class=storage, node_pools=spec["nodePools"]
        )

    clusters = [
        observed(ic)
        for ic in yaml.safe_load_all((MULTINODE / "inferenceclusters.yaml").read_text())
    ]
    cache = yaml.safe_load((MULTINODE / "modelcache.yaml").read_text())
    deployment = yaml.safe_load((MULTINODE / "modeldeployment.yaml").read_text())
    staged = SafeRunner(cache_fn, "compose-model-cache").run(
        run_function_request(cache, required={"inference-clusters": clusters})
    )
    rows = [
        {k: v for k, v in row.items() if k != "message"} | {"phase": "Ready"}
        for row in desired_status(staged)["clusters"]
    ]
    cache["status"] = {"clusters": rows}
    scheduled = SafeRunner(deployment_fn, "compose-model-deployment").run(
        run_function_request(
            deployment,
            required={"inference-clusters": clusters, "model-cache": [cache], "model-replicas": []},
        )
    )
    (replica,) = [
        r for r in desired_resources(scheduled).values() if r["kind"] == "ModelReplica"
    ]  # its Usages aside
    replica["metadata"]["namespace"] = deployment["metadata"]["namespace"]
    cluster = next(c for c in clusters if c["metadata"]["name"] == replica["spec"]["clusterName"])
    composed = SafeRunner(replica_fn, "compose-model-replica").run(
        run_function_request(
            replica, required={"inference-cluster": [cluster], "model-cache": [cache]}
        )
    )
    manifests = [
        desired_resources(composed)[key]["spec"]["forProvider"]["manifest"]
        for key in ("workload", "service")
    ]
    return _tidy(replica), [_tidy(m) for m in manifests]


def test_the_documented_gang_is_what_the_functions_compose() -> None:
    replica, manifests = multinode_gang()
    documented = [d for d in yaml_documents(DOCS / "modelreplica.md") if isinstance(d, dict)]
    assert replica in documented, "docs/modelreplica.md: the ModelReplica is stale"
    for manifest in manifests:
        assert manifest in documented, f"docs/modelreplica.md: the {manifest['kind']} is stale"


if __name__ == "__main__":
    # Print the blocks for docs/modelreplica.md: uv run python tests/test_docs.py
    replica, manifests = multinode_gang()
    print(yaml.safe_dump(replica, sort_keys=False))
    print(yaml.safe_dump_all(manifests, sort_keys=False))


def test_the_documented_kubectl_get_ic_lists_crossplanes_columns_after_ours() -> None:
    """What `kubectl get ic` really prints: Crossplane puts the XRD's columns first, then
    SYNCED, READY, COMPOSITION and AGE (the CRD it generates from the XRD)."""
    xrd = yaml.safe_load((REPO_ROOT / "apis/inferenceclusters/definition.yaml").read_text())
    header = kubectl_get_header(xrd)
    assert header == ["NAME", "STORAGE", "CONNECTED", "SYNCED", "READY", "COMPOSITION", "AGE"]
    shown = (DOCS / "inferencecluster.md").read_text().split("`kubectl get ic` shows:", 1)[1]
    table = shown.split("```\n", 2)[1].splitlines()
    assert table[0].split() == header
    assert all(len(row.split()) == len(header) for row in table[1:]), table
