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
from modelfleet_cli.composed import ANNOTATION_RESOURCE_NAME
from modelfleet_cli.discovery import repository_root
from modelfleet_cli.functions import FunctionServers
from modelfleet_cli.loading import LoadError, load_objects
from modelfleet_cli.main import main
from modelfleet_devtools.audit import record_text
from modelfleet_devtools.validation import require_shared_schemas, validate_manifest
from render_inputs import example_objects, render_inputs, required_files

ROOT = repository_root()
assert ROOT is not None
EXAMPLES = ROOT / "examples"
COMPOSITIONS = {
    "InferenceCluster": "apis/inferenceclusters/composition.yaml",
    "ModelCache": "apis/modelcaches/composition.yaml",
    "ModelDeployment": "apis/modeldeployments/composition.yaml",
    "ModelReplica": "apis/modelreplicas/composition.yaml",
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


def check_stream(docs: list[dict[str, Any]], kind: str) -> None:
    """What every render must look like: the XR with conditions first, composed resources
    sorted by composition-resource-name, each with Crossplane's metadata and schema-valid."""
    xr = docs[0]
    assert xr["kind"] == kind
    assert "Ready" in conditions(xr)
    assert "Synced" not in conditions(xr), "crossplane render does not print Synced"
    # The requirements loop ends with everything resolved; a first call's answer never shows.
    assert all(reason != "Resolving" for _, reason in conditions(xr).values())
    names = composed_names(docs)
    assert names == sorted(names)
    for doc in docs[1:]:
        meta = doc["metadata"]
        assert meta["labels"]["crossplane.io/composite"] == xr["metadata"]["name"]
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


CACHES = [
    # example, cache, clusters it stages to, whether a token Secret is composed
    ("quickstart", "qwen3-0-6b", ["gke-dev"], False),
    ("multinode", "kimi-k2", ["gke-us-central"], False),
    ("byo-claim", "qwen2-5-7b", ["onprem-lab"], False),
    ("gated-model", "llama-3-1-8b", ["eks-us-west"], True),
    ("single-replica", "qwen2-5-1-5b", ["eks-dev"], False),
]


@pytest.mark.parametrize(("ex", "cache", "clusters", "token"), CACHES)
def test_a_model_cache_composes_a_claim_and_a_hydration_job_per_cluster(
    functions_file: Path, ex: str, cache: str, clusters: list[str], token: bool
) -> None:
    docs = render(functions_file, example(ex) / "modelcache.yaml", *required(ex, "ModelCache"))
    check_stream(docs, "ModelCache")
    assert docs[0]["metadata"] == {"name": cache, "namespace": "ml-team"}
    kinds = sorted(remote(d).get("kind", "") for d in docs[1:])
    # Per cluster: the claim and the Job (which reports its progress with the cluster's
    # hydrator account, the InferenceCluster's).
    per_cluster = ["Job", "PersistentVolumeClaim"]
    expected = per_cluster * len(clusters) + (["Secret"] if token else [])
    assert kinds == sorted(expected)
    assert [c["name"] for c in docs[0]["status"]["clusters"]] == clusters
    assert conditions(docs[0])["ClustersMatched"][0] == "True"
    for doc in docs[1:]:
        assert doc["metadata"]["namespace"] == "ml-team", "a namespaced XR composes in place"
        assert doc["metadata"]["labels"]["modelfleet.io/modelcache"] == cache
    job = next(remote(d) for d in docs[1:] if remote(d).get("kind") == "Job")
    assert job["metadata"]["namespace"] == "modelfleet"


@pytest.mark.parametrize(("ex", "cache", "clusters", "token"), CACHES)
def test_a_model_cache_reports_ready_once_its_jobs_completed(
    functions_file: Path, ex: str, cache: str, clusters: list[str], token: bool
) -> None:
    docs = render(
        functions_file,
        example(ex) / "modelcache.yaml",
        *observed(ex, cache),
        *required(ex, "ModelCache"),
    )
    check_stream(docs, "ModelCache")
    assert conditions(docs[0])["Ready"] == ("True", "Available")
    assert {c["name"]: c["phase"] for c in docs[0]["status"]["clusters"]} == dict.fromkeys(
        clusters, "Ready"
    )
    assert docs[0]["status"]["summary"]["ready"] == f"{len(clusters)}/{len(clusters)}"


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
    replicas = {d["spec"]["clusterName"]: d["spec"]["replicas"] for d in docs[1:]}
    assert replicas == placement
    assert all(d["kind"] == "ModelReplica" for d in docs[1:])
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
    [replica] = docs[1:]
    assert replica["spec"]["nodes"] >= 2, "a gang of several nodes"


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
    """(example, file, XR name) of every XR in every example, new examples included."""
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
    if kind in ("InferenceCluster", "ModelCache"):
        assert conditions(docs[0])["Ready"] == ("True", "Available"), "settled state is Ready"
