"""`modelfleet render` of every example's ModelCache and of its ModelCacheShard, through the
real functions: a cache composes shards listing its clusters; a shard composes a claim and a
hydration Job per cluster; each reports Ready once what it composed is done.
"""

from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_cli.loading import load_objects
from render_world import (
    EXAMPLES,
    check_stream,
    composed_names,
    conditions,
    example,
    observed,
    remote,
    render,
    required,
)

CACHES = [
    # example, cache, clusters it stages to, whether a token Secret is composed
    ("quickstart", "qwen3-0-6b", ["gke-dev"], False),
    ("multinode", "kimi-k2", ["gke-us-central"], False),
    ("byo-claim", "qwen2-5-7b", ["onprem-lab"], False),
    ("gated-model", "llama-3-1-8b", ["eks-us-west"], True),
    ("single-replica", "qwen2-5-1-5b", ["eks-dev"], False),
]


def shard(example_name: str, cache: str, index: int = 0) -> Path:
    """The example's ModelCacheShard as its ModelCache composes it (render/, generated)."""
    return EXAMPLES / example_name / "render" / f"{cache}-shard-{index}.yaml"


def rows(xr: dict[str, Any]) -> dict[str, str]:
    return {row["name"]: row["phase"] for row in xr["status"]["clusters"]}


@pytest.mark.parametrize(("ex", "cache", "clusters", "token"), CACHES)
def test_a_model_cache_composes_a_shard_listing_its_clusters(
    functions_file: Path, ex: str, cache: str, clusters: list[str], token: bool
) -> None:
    """A new cache stages nothing itself: it composes a ModelCacheShard for its matched
    clusters, tells it the cache's spec, and lists each cluster Pending until the shard
    reports it."""
    docs = render(functions_file, example(ex) / "modelcache.yaml", *required(ex, "ModelCache"))
    check_stream(docs, "ModelCache")
    assert docs[0]["metadata"] == {"name": cache, "namespace": "ml-team"}
    assert composed_names(docs) == ["shard-0"]
    [composed] = docs[1:]
    assert composed["kind"] == "ModelCacheShard"
    assert composed["metadata"]["namespace"] == "ml-team", "a namespaced XR composes in place"
    assert composed["metadata"]["labels"]["modelfleet.io/modelcache"] == cache
    spec = composed["spec"]
    assert spec["cacheName"] == cache
    assert [c["name"] for c in spec["clusters"]] == clusters
    [xr] = load_objects(example(ex) / "modelcache.yaml")
    assert spec["cache"] == {k: v for k, v in xr["spec"].items() if k != "clusterSelector"}
    assert rows(docs[0]) == dict.fromkeys(clusters, "Pending")
    assert all("ModelCacheShard" in row["message"] for row in docs[0]["status"]["clusters"])
    assert conditions(docs[0])["ClustersMatched"][0] == "True"
    assert conditions(docs[0])["Ready"] == ("False", "Creating")
    assert conditions(docs[0])["ArtifactReady"] == ("False", "Hydrating")


def test_a_model_cache_of_many_clusters_shares_them_out_among_shards(
    functions_file: Path, tmp_path: Path
) -> None:
    """33 matched clusters: two shards, the first with 32, every cluster in exactly one."""
    [gke_dev] = load_objects(EXAMPLES / "quickstart" / "render" / "clusters.yaml")
    fleet = []
    for i in range(33):
        cluster = yaml.safe_load(yaml.safe_dump(gke_dev))
        cluster["metadata"]["name"] = f"gke-{i:02d}"
        fleet.append(cluster)
    clusters = tmp_path / "clusters.yaml"
    clusters.write_text(yaml.safe_dump_all(fleet))
    docs = render(
        functions_file,
        example("quickstart") / "modelcache.yaml",
        "--required-resources",
        str(clusters),
    )
    check_stream(docs, "ModelCache")
    assert composed_names(docs) == ["shard-0", "shard-1"]
    members = [[c["name"] for c in d["spec"]["clusters"]] for d in docs[1:]]
    assert [len(m) for m in members] == [32, 1]
    assert sorted(members[0] + members[1]) == [c["metadata"]["name"] for c in fleet]
    assert docs[0]["status"]["summary"]["ready"] == "0/33"


@pytest.mark.parametrize(("ex", "cache", "clusters", "token"), CACHES)
def test_a_shard_composes_a_claim_and_a_hydration_job_per_cluster(
    functions_file: Path, ex: str, cache: str, clusters: list[str], token: bool
) -> None:
    """The shard, on its first reconcile, stages the cache on each cluster it lists: what the
    ModelCache composed before shards, named and labelled after the cache."""
    docs = render(functions_file, shard(ex, cache), *required(ex, "ModelCacheShard"))
    check_stream(docs, "ModelCacheShard", root=cache)
    kinds = sorted(remote(d).get("kind", "") for d in docs[1:])
    # Per cluster: the claim and the Job (which reports its progress with the cluster's
    # hydrator account, the InferenceCluster's).
    per_cluster = ["Job", "PersistentVolumeClaim"]
    expected = per_cluster * len(clusters) + (["Secret"] if token else [])
    assert kinds == sorted(expected)
    assert all(name.startswith(tuple(clusters)) for name in composed_names(docs))
    assert list(rows(docs[0])) == clusters
    assert set(rows(docs[0]).values()) <= {"Pending", "Hydrating"}
    assert conditions(docs[0])["Ready"] == ("False", "Creating")
    for doc in docs[1:]:
        assert doc["metadata"]["namespace"] == "ml-team", "a namespaced XR composes in place"
        assert doc["metadata"]["labels"]["modelfleet.io/modelcache"] == cache
        assert doc["metadata"]["generateName"] == f"{cache}-", "named after the root XR"
    job = next(remote(d) for d in docs[1:] if remote(d).get("kind") == "Job")
    assert job["metadata"]["namespace"] == "modelfleet"


def test_a_shard_stages_only_the_clusters_it_lists(functions_file: Path) -> None:
    """multinode's clusters.yaml holds gke-us-central and gke-us-east; kimi-k2's shard lists
    gke-us-central only (the cache selects clusters with shared storage), and reads and stages that
    one alone."""
    required_clusters = load_objects(EXAMPLES / "multinode" / "render" / "clusters.yaml")
    assert {c["metadata"]["name"] for c in required_clusters} >= {"gke-us-central", "gke-us-east"}
    docs = render(
        functions_file, shard("multinode", "kimi-k2"), *required("multinode", "ModelCacheShard")
    )
    assert list(rows(docs[0])) == ["gke-us-central"]
    assert {d["metadata"]["labels"]["modelfleet.io/cluster"] for d in docs[1:]} == {
        "gke-us-central"
    }


@pytest.mark.parametrize(("ex", "cache", "clusters", "token"), CACHES)
def test_a_shard_reports_ready_once_its_jobs_completed(
    functions_file: Path, ex: str, cache: str, clusters: list[str], token: bool
) -> None:
    docs = render(
        functions_file,
        shard(ex, cache),
        *observed(ex, f"{cache}-shard-0"),
        *required(ex, "ModelCacheShard"),
    )
    check_stream(docs, "ModelCacheShard", root=cache)
    assert conditions(docs[0])["Ready"] == ("True", "Available")
    assert conditions(docs[0])["ArtifactReady"] == ("True", "Staged")
    assert rows(docs[0]) == dict.fromkeys(clusters, "Ready")
    assert docs[0]["status"]["summary"]["ready"] == f"{len(clusters)}/{len(clusters)}"
    # A completed Job's Object turns slim: it only watches the Job (its TTL removes it on
    # the cluster), and deletes it with the cache; the claim (and the token's Secret) stay.
    jobs = [d for d in docs[1:] if remote(d).get("kind") == "Job"]
    assert len(jobs) == len(clusters)
    assert all(d["spec"]["managementPolicies"] == ["Observe", "Delete"] for d in jobs)
    assert "PersistentVolumeClaim" in {remote(d).get("kind") for d in docs[1:]}


@pytest.mark.parametrize(("ex", "cache", "clusters", "token"), CACHES)
def test_a_model_cache_reports_ready_once_its_shards_did(
    functions_file: Path, ex: str, cache: str, clusters: list[str], token: bool
) -> None:
    """The cache lists the rows its shards report: Ready on every cluster, so Ready."""
    docs = render(
        functions_file,
        example(ex) / "modelcache.yaml",
        *observed(ex, cache),
        *required(ex, "ModelCache"),
    )
    check_stream(docs, "ModelCache")
    assert conditions(docs[0])["Ready"] == ("True", "Available")
    assert conditions(docs[0])["ArtifactReady"] == ("True", "Staged")
    assert rows(docs[0]) == dict.fromkeys(clusters, "Ready")
    assert docs[0]["status"]["summary"]["ready"] == f"{len(clusters)}/{len(clusters)}"
    [composed] = docs[1:]
    assert composed["kind"] == "ModelCacheShard"
    assert composed["metadata"]["name"] == f"{cache}-shard-0", "the observed shard, kept"


def test_a_shard_is_told_the_cache_spec_not_crossplanes_fields(
    functions_file: Path, tmp_path: Path
) -> None:
    """On a control plane a ModelCache's spec also holds what Crossplane writes there
    (`spec.crossplane`: its Composition, the resources it composed); a shard is told the
    cache's own fields only, so it does not change whenever the cache composes something."""
    [xr] = load_objects(example("quickstart") / "modelcache.yaml")
    xr["spec"]["crossplane"] = {
        "compositionRef": {"name": "modelcaches"},
        "resourceRefs": [
            {"apiVersion": "modelfleet.io/v1alpha1", "kind": "ModelCacheShard", "name": "x"}
        ],
    }
    path = example("quickstart") / "render" / "clusters.yaml"
    stored = tmp_path / "modelcache.yaml"
    stored.write_text(yaml.safe_dump(xr))
    docs = render(functions_file, stored, "--required-resources", str(path))
    [composed] = docs[1:]
    assert "crossplane" not in composed["spec"]["cache"]
