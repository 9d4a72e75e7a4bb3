"""`modelfleet render` on every example, through the real functions: the output is a YAML
stream a platform engineer can read and `kubectl apply`-validate, and it says the right
things (kinds, names, conditions), compared for meaning, not byte for byte.

The four functions are started once for the session and dialled as Development targets
(the same path `crossplane render` takes with examples/functions.yaml; conftest.py).
"""

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelfleet_cli.functions import FunctionServers
from modelfleet_cli.loading import LoadError, load_objects
from modelfleet_cli.main import main
from modelfleet_devtools.validation import validate_manifest
from render_inputs import example_objects, render_inputs, shard_files
from render_world import (
    COMPOSITIONS,
    EXAMPLES,
    ROOT,
    check_stream,
    composed_names,
    conditions,
    example,
    observed,
    remote,
    render,
    required,
    single,
)

# The hydrator's ServiceAccount, Role and RoleBinding: every cluster's.
HYDRATOR = ["hydrator-role", "hydrator-role-binding", "hydrator-service-account"]
CLUSTERS = [
    # example, file, cluster, composed resources once connected, conditions
    (
        "quickstart",
        "inferencecluster.yaml",
        "gke-dev",
        [*HYDRATOR, "storage-class", "workload-namespace"],
        {"Ready": "True", "Connected": "True", "StorageReady": "True"},
    ),
    (
        "multinode",
        "inferenceclusters.yaml",
        "gke-us-central",
        [*HYDRATOR, "leaderworkerset", "storage-class", "workload-namespace"],
        {"Ready": "True", "LeaderWorkerSetReady": "True"},
    ),
    (
        "multinode",
        "inferenceclusters.yaml",
        "gke-us-east",
        [*HYDRATOR, "workload-namespace"],
        {"Ready": "True", "StorageReady": "True"},
    ),
    ("byo-claim", "inferencecluster.yaml", "onprem-lab", None, {"Connected": "True"}),
    ("gated-model", "inferencecluster.yaml", "eks-us-west", None, {"Connected": "True"}),
    ("single-replica", "inferencecluster.yaml", "eks-dev", None, {"Connected": "True"}),
]


@pytest.mark.parametrize(("ex", "file", "cluster", "composed", "expected"), CLUSTERS)
def test_an_inference_cluster_renders_connected_once_its_objects_are_observed(
    functions_file: Path,
    tmp_path: Path,
    ex: str,
    file: str,
    cluster: str,
    composed: list[str] | None,
    expected: dict[str, str],
) -> None:
    xr = single(tmp_path, example(ex) / file, cluster)
    docs = render(
        functions_file, xr, *observed(ex, cluster), *required(ex, "InferenceCluster"), "-x"
    )
    check_stream(docs, "InferenceCluster")
    status = docs[0]["status"]
    assert status["providerConfigName"] and status["workloadNamespace"]
    assert status["hydratorServiceAccount"] == "modelfleet-hydrator"
    got = conditions(docs[0])
    assert {t: got[t][0] for t in expected} == expected
    if composed is not None:
        assert composed_names(docs) == composed
    assert not validate_manifest(docs[0]), "with --include-full-xr the XR is schema-valid"


def test_a_cluster_seen_for_the_first_time_is_not_connected_yet(
    functions_file: Path,
) -> None:
    docs = render(functions_file, example("quickstart") / "inferencecluster.yaml")
    check_stream(docs, "InferenceCluster")
    assert conditions(docs[0])["Connected"] == ("False", "ProviderConfigNotFound")
    assert conditions(docs[0])["Ready"] == ("False", "Creating")
    assert "providerConfigName" not in docs[0]["status"], "status only from what was observed"


DEPLOYMENTS = [
    # example, deployment, replicas per cluster
    ("quickstart", "qwen3-0-6b", {"gke-dev": 2}),
    ("multinode", "kimi-k2", {"gke-us-central": 1}),
    ("byo-claim", "qwen2-5-7b", {"onprem-lab": 2}),
    ("gated-model", "llama-3-1-8b", {"eks-us-west": 1}),
]


@pytest.mark.parametrize(("ex", "name", "placement"), DEPLOYMENTS)
def test_a_model_deployment_places_one_model_replica_per_cluster(
    functions_file: Path, ex: str, name: str, placement: dict[str, int]
) -> None:
    docs = render(
        functions_file,
        example(ex) / "modeldeployment.yaml",
        *required(ex, "ModelDeployment"),
        "-r",
    )
    results = [d for d in docs if d["kind"] == "Result"]
    docs = [d for d in docs if d["kind"] != "Result"]
    check_stream(docs, "ModelDeployment")
    assert conditions(docs[0])["Scheduled"] == ("True", "Scheduled")
    assert conditions(docs[0])["ModelCacheReady"] == ("True", "Ready")
    composed = docs[1:]
    replicas = {d["spec"]["clusterName"]: d["spec"]["replicas"] for d in of_kind(composed)}
    assert replicas == placement
    # Beside each ModelReplica, the Usages by it (of its cache and cluster): nothing else.
    assert {d["kind"] for d in composed} <= {"ModelReplica", "Usage"}
    usages_by = {u["spec"]["by"]["resourceRef"]["name"] for u in of_kind(composed, "Usage")}
    assert usages_by == {r["metadata"]["name"] for r in of_kind(composed)}
    assert all(r["apiVersion"] == "render.crossplane.io/v1beta1" for r in results)
    assert {r["severity"] for r in results} <= {"SEVERITY_NORMAL", "SEVERITY_WARNING"}
    # Only the last call of the requirements loop counts: its first call's event is not shown.
    assert results and not [r for r in results if "Resolving" in r["message"]], results


def test_the_multinode_deployment_is_rejected_on_the_cluster_without_shared_storage(
    functions_file: Path,
) -> None:
    docs = render(
        functions_file,
        example("multinode") / "modeldeployment.yaml",
        *required("multinode", "ModelDeployment"),
    )
    message = next(
        c["message"] for c in docs[0]["status"]["conditions"] if c["type"] == "Scheduled"
    )
    assert (
        "multi-node model requires shared storage on the inference cluster gke-us-east" in message
    )
    [replica] = of_kind(docs[1:])
    assert replica["spec"]["nodes"] >= 2, "a gang of several nodes"


def of_kind(docs: list[dict], kind: str = "ModelReplica") -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def test_a_model_replica_serves_from_the_cache_once_it_is_ready(functions_file: Path) -> None:
    docs = render(
        functions_file,
        example("single-replica") / "modelreplica.yaml",
        *required("single-replica", "ModelReplica"),
    )
    check_stream(docs, "ModelReplica")
    workloads = [remote(d) for d in docs[1:] if remote(d).get("kind") == "Deployment"]
    assert len(workloads) == 1
    pod = workloads[0]["spec"]["template"]["spec"]
    assert any("persistentVolumeClaim" in v for v in pod.get("volumes", []))


def test_render_inputs_are_what_the_functions_report(servers: FunctionServers) -> None:
    """examples/*/render/ are fresh: regenerating them from the real functions changes
    nothing and leaves no other file (regenerate with
    `uv run python packages/modelfleet-cli/tests/render_inputs.py`)."""
    for ex in sorted(p for p in EXAMPLES.iterdir() if (p / "render").is_dir()):
        generated = render_inputs(ex, servers)
        assert sorted(p.name for p in (ex / "render").glob("*.yaml")) == sorted(generated)
        for name, content in generated.items():
            on_disk = (ex / "render" / name).read_text()
            assert on_disk == content, f"{ex.name}/render/{name} is stale"


def documented_commands() -> list[list[str]]:
    """The `uv run modelfleet render ...` command lines of docs/cli.md."""
    text = (ROOT / "docs" / "cli.md").read_text().replace("\\\n", " ")
    return [
        shlex.split(line.strip())[4:]
        for line in text.splitlines()
        if re.match(r"\s*uv run modelfleet render ", line)
    ]


def test_every_documented_render_command_works(functions_file: Path) -> None:
    """Each command of docs/cli.md, run from the repository root with the session's
    functions (COMPOSITION and FUNCTIONS given explicitly when the docs leave them out)."""
    commands = documented_commands()
    assert len(commands) >= 4
    runner = CliRunner()
    for args in commands:
        if "--help" in args or any(a.endswith("functions.yaml") for a in args):
            continue  # help, and the example that needs functions you started yourself
        xr = ROOT / args[0]
        comp = str(ROOT / COMPOSITIONS[load_objects(xr)[0]["kind"]])
        rest = [str(ROOT / a) if (ROOT / a).exists() else a for a in args[1:]]
        result = runner.invoke(main, ["render", str(xr), comp, str(functions_file), *rest])
        assert result.exit_code == 0, (args, result.output)
        assert yaml.safe_load_all(result.stdout)


def every_example_xr() -> list[tuple[str, str, str]]:
    """(example, file, XR name) of every XR in every example, new examples included, and of
    every ModelCacheShard its ModelCaches compose (render/<cache>-shard-<n>.yaml)."""
    cases = []
    for ex in sorted(p for p in EXAMPLES.iterdir() if (p / "render").is_dir()):
        for obj in example_objects(ex):
            if obj["kind"] in COMPOSITIONS:
                file = next(
                    f.name
                    for f in sorted(ex.glob("*.yaml"))
                    if any(
                        o["metadata"]["name"] == obj["metadata"]["name"]
                        and o["kind"] == obj["kind"]
                        for o in _objects_or_none(f)
                    )
                )
                cases.append((ex.name, file, obj["metadata"]["name"]))
        for path in shard_files(ex):
            [obj] = load_objects(path)
            cases.append((ex.name, f"render/{path.name}", obj["metadata"]["name"]))
    return cases


def _objects_or_none(path: Path) -> list[dict[str, Any]]:
    try:
        return load_objects(path)
    except LoadError:
        return []


@pytest.mark.parametrize(("ex", "file", "name"), every_example_xr())
def test_every_xr_of_every_example_renders_valid_yaml_once_settled(
    functions_file: Path, tmp_path: Path, ex: str, file: str, name: str
) -> None:
    xr = single(tmp_path, example(ex) / file, name)
    state = EXAMPLES / ex / "render" / f"observed-{name}.yaml"
    flags = ["--observed-resources", str(state)] if state.exists() else []
    kind = load_objects(xr)[0]["kind"]
    docs = render(functions_file, xr, *flags, *required(ex, kind), "-x")
    check_stream(docs, kind)
    assert not validate_manifest(docs[0]), "the XR with its status is schema-valid"
    if kind in ("InferenceCluster", "ModelCache", "ModelCacheShard"):
        assert conditions(docs[0])["Ready"] == ("True", "Available"), "settled state is Ready"
