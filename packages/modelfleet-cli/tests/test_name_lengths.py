"""An XR's name ends up in label values: Crossplane labels everything composed beneath an XR
`crossplane.io/composite: <the root XR's name>`, and the functions label what they compose
`modelfleet.io/<kind>: <name>` and `modelfleet.io/cluster: <cluster>`. A label value is at most
63 characters, so Crossplane's CRD for every XRD refuses a longer name (`metadata.name`
`maxLength: 63`; tests/e2e/test_crossplane_validation_real.py shows it on the real API
server), `render` and `simulate` refuse it with the API server's words, and every name
accepted yields composed objects whose names and labels the API server accepts, down the
whole tree: InferenceCluster; ModelCache -> ModelCacheShard -> Objects; ModelDeployment ->
ModelReplica -> Objects.
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.simulate.names import child_name
from render_world import EXAMPLES, render, required
from test_xr_checks import fleet_with, quickstart, run

LONGEST = 63
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
UID = "0b7c1f2e-5d1a-4c3e-9f00-63c4a5f1e001"
REFUSAL = "metadata.name: Too long: may not be more than 63 bytes"


def named(stem: str, length: int) -> str:
    """A valid name of exactly `length` characters starting with `stem`."""
    return (stem + "-" + "x" * length)[:length]


def metadata_blocks(node: Any) -> Iterator[dict[str, Any]]:
    """Every object's metadata in `node`: the composed resource's, its remote manifest's and
    the pod templates' inside it."""
    if isinstance(node, dict):
        meta = node.get("metadata")
        if isinstance(meta, dict):
            yield meta
        for value in node.values():
            yield from metadata_blocks(value)
    elif isinstance(node, list):
        for item in node:
            yield from metadata_blocks(item)


def refusals(docs: list[dict[str, Any]]) -> list[str]:
    """What the API server would refuse in the composed resources' names and labels."""
    found = []
    for doc in docs[1:]:
        for meta in metadata_blocks(doc):
            for key, value in (meta.get("labels") or {}).items():
                if len(str(value)) > LONGEST or not LABEL_VALUE.fullmatch(str(value)):
                    found.append(f"label {key}={value!r} ({len(str(value))} characters)")
            name = meta.get("name")
            if name is not None and (len(name) > 253 or not SUBDOMAIN.fullmatch(name)):
                found.append(f"name {name!r}")
    return found


def write(tmp_path: Path, name: str, objects: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects))
    return path


def composed_xr(parent: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """A composed XR (a shard, a replica) as Crossplane creates it from `doc`."""
    meta = doc["metadata"]
    name = meta.get("name") or child_name(
        meta["generateName"], UID, meta["annotations"]["crossplane.io/composition-resource-name"]
    )
    return {
        "apiVersion": doc["apiVersion"],
        "kind": doc["kind"],
        "metadata": {
            "name": name,
            "namespace": parent["metadata"]["namespace"],
            "labels": meta["labels"],
        },
        "spec": doc["spec"],
    }


def long_cluster(tmp_path: Path, example: str) -> tuple[str, Path]:
    """The example's clusters, the first renamed to the longest name."""
    clusters = list(
        yaml.safe_load_all((EXAMPLES / example / "render" / "clusters.yaml").read_text())
    )
    clusters = [c for c in clusters if c]
    clusters[0]["metadata"]["name"] = named(clusters[0]["metadata"]["name"], LONGEST)
    return clusters[0]["metadata"]["name"], write(tmp_path, "clusters.yaml", clusters)


def test_a_cluster_of_the_longest_name_composes_what_the_api_server_accepts(
    functions_file: Path, tmp_path: Path
) -> None:
    xr = quickstart("inferencecluster.yaml")
    xr["metadata"]["name"] = named("gke-dev", LONGEST)
    docs = render(
        functions_file,
        write(tmp_path, "ic.yaml", [xr]),
        *required("quickstart", "InferenceCluster"),
    )
    assert len(docs) > 1 and refusals(docs) == []


def test_a_cache_of_the_longest_name_on_a_cluster_of_the_longest_name_down_to_its_objects(
    functions_file: Path, tmp_path: Path
) -> None:
    cluster, clusters = long_cluster(tmp_path, "quickstart")
    cache = quickstart("modelcache.yaml")
    cache["metadata"]["name"] = named("qwen3-0-6b", LONGEST)
    docs = render(
        functions_file, write(tmp_path, "mc.yaml", [cache]), "--required-resources", str(clusters)
    )
    assert refusals(docs) == []
    [shard_doc] = [d for d in docs[1:] if d["kind"] == "ModelCacheShard"]
    shard = composed_xr(cache, shard_doc)
    assert len(shard["metadata"]["name"]) <= LONGEST
    shard_docs = render(
        functions_file,
        write(tmp_path, "shard.yaml", [shard]),
        "--required-resources",
        str(clusters),
    )
    objects = [d for d in shard_docs[1:] if d["kind"] == "Object"]
    assert objects and refusals(shard_docs) == []
    labels = [d["spec"]["forProvider"]["manifest"]["metadata"]["labels"] for d in objects]
    assert {(lb["modelfleet.io/modelcache"], lb["modelfleet.io/cluster"]) for lb in labels} == {
        (cache["metadata"]["name"], cluster)
    }


def test_a_deployment_of_the_longest_name_down_to_its_workload(
    functions_file: Path, tmp_path: Path
) -> None:
    deployment = quickstart("modeldeployment.yaml")
    deployment["metadata"]["name"] = named("qwen3-0-6b", LONGEST)
    flags = required("quickstart", "ModelDeployment")
    docs = render(functions_file, write(tmp_path, "md.yaml", [deployment]), *flags)
    assert refusals(docs) == []
    [replica_doc] = [d for d in docs[1:] if d["kind"] == "ModelReplica"]
    replica = composed_xr(deployment, replica_doc)
    replica_docs = render(
        functions_file,
        write(tmp_path, "mr.yaml", [replica]),
        *required("quickstart", "ModelReplica"),
    )
    assert any(d["kind"] == "Object" for d in replica_docs[1:])
    assert refusals(replica_docs) == []


@pytest.mark.parametrize(
    "kind_file", ["inferencecluster.yaml", "modelcache.yaml", "modeldeployment.yaml"]
)
def test_a_name_one_longer_is_refused_by_render_and_simulate(
    tmp_path: Path, kind_file: str
) -> None:
    xr = quickstart(kind_file)
    xr["metadata"]["name"] = named(xr["metadata"]["name"], LONGEST + 1)
    fleet, path = fleet_with(tmp_path, xr)
    rendered = run("render", str(path))
    simulated = run("simulate", str(fleet), "--quiet")
    assert rendered.exit_code == simulated.exit_code == ExitCode.INPUT_ERROR
    said = rendered.stderr.removeprefix("modelfleet render: ")
    assert said == simulated.stderr.removeprefix("modelfleet simulate: ")
    assert REFUSAL in said and rendered.stdout == ""
