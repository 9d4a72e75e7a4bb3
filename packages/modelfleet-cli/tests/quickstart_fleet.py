"""A fleet of quickstart copies at any size: N InferenceClusters and M ModelCaches and
ModelDeployments, each a copy of examples/quickstart's with its own name (what a platform
team trying `simulate` at scale writes)."""

import copy
from pathlib import Path
from typing import Any

import yaml

QUICKSTART = Path(__file__).resolve().parents[3] / "examples" / "quickstart"


def _quickstart(kind_file: str) -> dict[str, Any]:
    return yaml.safe_load((QUICKSTART / kind_file).read_text())


def cluster_name(index: int) -> str:
    return f"c{index:03d}"


def model_name(index: int) -> str:
    return f"m{index:02d}"


def fleet_names(clusters: int, models: int) -> tuple[list[str], list[str]]:
    """The names of a fleet of `clusters` clusters (c000, c001, ...) and `models` models (m00,
    m01, ...)."""
    return [cluster_name(i) for i in range(clusters)], [model_name(i) for i in range(models)]


def quickstart_fleet(clusters: list[str], models: list[str]) -> list[dict[str, Any]]:
    """An InferenceCluster for each of `clusters`, reached through a provider config of the
    same name, and a ModelCache with its ModelDeployment for each of `models`."""
    objects = []
    for cluster in clusters:
        ic = _quickstart("inferencecluster.yaml")
        ic["metadata"]["name"] = ic["spec"]["connection"]["providerConfigName"] = cluster
        objects.append(ic)
    cache, deployment = _quickstart("modelcache.yaml"), _quickstart("modeldeployment.yaml")
    for name in models:
        mc, md = copy.deepcopy(cache), copy.deepcopy(deployment)
        mc["metadata"]["name"] = md["metadata"]["name"] = md["spec"]["modelCacheRef"]["name"] = name
        objects += [mc, md]
    return objects


def write_quickstart_fleet(directory: Path, clusters: list[str], models: list[str]) -> Path:
    """The fleet written as one file per kind in `directory` (created); returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in quickstart_fleet(clusters, models):
        by_kind.setdefault(obj["kind"].lower(), []).append(obj)
    for kind, objects in by_kind.items():
        (directory / f"{kind}s.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return directory
