"""`modelfleet simulate` end to end: every example reaches Ready through the real functions,
and the fleet survives its faults (nothing precious deleted on clusters that still
match, phases recover, the user is told)."""

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelfleet_cli.discovery import repository_compositions
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate import simulate
from modelfleet_cli.simulate.clusters import workload_clusters
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_cli.simulate.control_plane import ControlPlane
from modelfleet_cli.simulate.fleet import load_fleet
from modelfleet_contracts.api import API_VERSION, MODEL_CACHE, MODEL_DEPLOYMENT
from modelfleet_devtools.audit import record_text

# Test helpers sit beside the tests (pytest runs in importlib mode).
sys.path.insert(0, str(Path(__file__).parent))
from simulate_runs import simulate_with_timeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
EXAMPLE_DIRS = sorted(p for p in EXAMPLES.iterdir() if p.is_dir() and any(p.glob("*.yaml")))


@pytest.fixture(scope="module")
def functions():
    """The four functions, started once for every fleet of this module."""
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def run(functions, directory: Path, *faults: str, rounds: int | None = None) -> dict[str, Any]:
    timeline, result = simulate_with_timeline(functions, directory, *faults, rounds=rounds)
    # The functions run in subprocesses: their statuses and events reach the audit as text.
    record_text(f"modelfleet simulate {directory.name}", timeline)
    record_text(f"modelfleet simulate {directory.name} result", json.dumps(result, default=str))
    return result


def remote(result: dict[str, Any], cluster: str, kind: str) -> list[dict[str, Any]]:
    return [o for o in result["clusters"][cluster]["objects"] if o["kind"] == kind]


# --- every example --------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLE_DIRS, ids=lambda p: p.name)
def test_every_example_reaches_ready(functions, example):
    result = run(functions, example)
    assert result["result"] == "Ready", result["reason"]
    assert all(xr["ready"] for xr in result["xrs"].values())
    assert result["losses"] == []


def test_quickstart_cache_goes_pending_hydrating_ready_before_the_deployment(functions):
    result = run(functions, EXAMPLES / "quickstart")
    cache = result["xrs"]["ModelCache ml-team/qwen3-0-6b"]["history"]
    phases = [h["summary"].split()[1] for h in cache]
    assert phases[:1] == ["Pending"] and "Hydrating" in phases and phases[-1] == "Ready"
    deployment = result["xrs"]["ModelDeployment ml-team/qwen3-0-6b"]["history"]
    cache_ready = next(h["round"] for h in cache if h["summary"].endswith("1/1 ready"))
    assert deployment[-1]["round"] > cache_ready
    assert deployment[-1]["summary"].endswith("2/2 ready")


def test_multinode_gang_lands_on_the_rwx_cluster_and_the_other_is_rejected(functions):
    result = run(functions, EXAMPLES / "multinode")
    assert result["result"] == "Ready"
    gangs = remote(result, "gke-us-central", "LeaderWorkerSet")
    assert [(g["size"], g["readyReplicas"]) for g in gangs] == [(2, 1)]
    assert remote(result, "gke-us-east", "LeaderWorkerSet") == []
    rows = {
        r["name"]: r for r in result["xrs"]["ModelDeployment ml-team/kimi-k2"]["status"]["clusters"]
    }
    assert (
        "multi-node model requires shared storage on the inference cluster"
        in rows["gke-us-east"]["message"]
    )
    assert rows["gke-us-central"]["phase"] == "Ready"


# --- faults ---------------------------------------------------------------------------------

TWO_CLUSTERS = """
apiVersion: modelfleet.io/v1alpha1
kind: InferenceCluster
metadata: {name: NAME, labels: {modelfleet.io/region: us}}
spec:
  connection: {providerConfigName: NAME}
  storage: {storageClassName: filestore-rwx}
  nodePools:
  - {name: l4, nodeCount: 2, gpu: {count: 1, memoryGiB: 24}, nodeSelector: {pool: l4}}
"""


@pytest.fixture(scope="module")
def two_clusters(tmp_path_factory) -> Path:
    """Quickstart's cache and deployment over two clusters (one replica on each)."""
    directory = tmp_path_factory.mktemp("two-clusters")
    clusters = [TWO_CLUSTERS.replace("NAME", n) for n in ("gke-a", "gke-b")]
    (directory / "clusters.yaml").write_text("---".join(clusters))
    for name in ("modelcache.yaml", "modeldeployment.yaml"):
        (directory / name).write_text((EXAMPLES / "quickstart" / name).read_text())
    return directory


def _precious(result: dict[str, Any], cluster: str) -> set[tuple[str, str]]:
    kinds = {"PersistentVolumeClaim", "Deployment", "LeaderWorkerSet"}
    return {
        (o["kind"], o["name"]) for o in result["clusters"][cluster]["objects"] if o["kind"] in kinds
    }


FAULTS = [
    pytest.param(
        "hydration-fails:gke-a@3", "attempts failed", id="hydration fails once, then succeeds"
    ),
    pytest.param(
        "cluster-flaps:gke-a@6+2", "not connected", id="cluster status flaps for 2 rounds"
    ),
    pytest.param("observed-missing:*@6", "", id="every observed resource missing for a round"),
    pytest.param(
        "observed-missing:InferenceCluster/gke-a@6+2",
        "not connected",
        id="a cluster's observed Namespace missing",
    ),
    pytest.param(
        "requirement-unresolved:*@6",
        "Resolving: waiting for Crossplane to resolve",
        id="every requirement unresolved for a round",
    ),
    pytest.param("cluster-deleted:gke-b@6", "gke-b", id="a cluster deleted"),
]


@pytest.fixture(scope="module")
def baseline(functions, two_clusters) -> dict[str, Any]:
    """The two-cluster fleet without faults."""
    return run(functions, two_clusters)


@pytest.mark.parametrize(("fault", "told"), FAULTS)
def test_fleet_survives_fault(functions, two_clusters, baseline, fault, told):
    result = run(functions, two_clusters, fault)
    [verdict] = result["faults"]
    assert verdict["applied_round"] is not None and verdict["took_effect"] is not None
    assert verdict["lost"] == [] and result["losses"] == []
    assert verdict["at_risk"] == []
    # claims and workloads stay on the clusters that still match
    for cluster in ("gke-a",) if "gke-b" in fault else ("gke-a", "gke-b"):
        assert _precious(baseline, cluster) <= _precious(result, cluster)
    assert result["result"] == "Ready", result["reason"]  # phases recover
    assert verdict["survived"], verdict
    if told:
        assert any(told in line for line in verdict["told"]), verdict["told"]


def test_every_xr_held_for_unresolved_requirements_says_what_it_waits_for(functions, two_clusters):
    """Each XR goes Ready=False for the round; each one's main condition names what
    Crossplane has not resolved, and the next round reads Ready again."""
    result = run(functions, two_clusters, "requirement-unresolved:*@6")
    [verdict] = result["faults"]
    told = {
        line.split(": ", 1)[0].removeprefix("round 6 ")
        for line in verdict["told"]
        if line.startswith("round 6 ") and "Resolving: waiting for Crossplane to resolve " in line
    }
    # two clusters, a cache with its shard, a deployment with its two replicas
    assert told == set(result["xrs"]) and len(told) == 7, verdict["told"]
    assert all(xr["ready"] for xr in result["xrs"].values())


def test_hydration_that_always_fails_is_reported_and_nothing_is_deleted(functions, two_clusters):
    result = run(functions, two_clusters, "hydration-fails-always:gke-a@3", rounds=12)
    assert result["result"] == "RoundLimit"
    assert "hydration failed" in result["reason"] and "BackoffLimitExceeded" in result["reason"]
    rows = {
        r["name"]: r for r in result["xrs"]["ModelCache ml-team/qwen3-0-6b"]["status"]["clusters"]
    }
    assert rows["gke-a"]["phase"] == "Failed" and rows["gke-b"]["phase"] == "Ready"
    assert remote(result, "gke-a", "Job") and result["losses"] == []
    [verdict] = result["faults"]
    assert (verdict["verdict"], verdict["survived"], verdict["recovered"]) == (
        "contained",
        False,
        None,
    ), "the cache ends Failed: not 'survived'"


CACHE_IN_USE = "ModelCache ml-team/qwen3-0-6b"


def test_cache_deleted_while_in_use_is_refused_and_nothing_is_lost(
    functions, two_clusters, baseline
):
    """The replicas' Usages make Crossplane refuse the deletion: the user is told which
    replica uses the cache, the cache and its claims stay (none Terminating), the fleet
    stays Ready. (Before the Usages, the claims went Terminating under running pods.)"""
    result = run(functions, two_clusters, "cache-deleted:ml-team/qwen3-0-6b@8+2")
    [verdict] = result["faults"]
    assert verdict["at_risk"] == [], "no claim Terminating"
    assert verdict["lost"] == [] and result["losses"] == []
    assert CACHE_IN_USE not in result["deleted"] and result["xrs"][CACHE_IN_USE]["ready"]
    [refusal] = result["refusals"]
    assert (refusal["round"], refusal["what"]) == (8, CACHE_IN_USE)
    assert "in-use by 2 usage(s)" in refusal["message"]
    assert "by resource ModelReplica/qwen3-0-6b-gke-" in refusal["message"]
    assert any("deletion refused" in line for line in verdict["told"]), verdict["told"]
    for cluster in ("gke-a", "gke-b"):
        assert _precious(baseline, cluster) <= _precious(result, cluster)
        claims = remote(result, cluster, "PersistentVolumeClaim")
        assert claims and not any(c["terminating"] for c in claims)
    assert result["result"] == "Ready", result["reason"]
    assert verdict["survived"], verdict


def test_a_refused_cache_deletion_happens_once_the_deployment_is_deleted(functions, two_clusters):
    """replayDeletion: deleting the deployment and the cache together works, in order."""
    fleet = load_fleet(two_clusters)
    plane = ControlPlane(
        fleet, repository_compositions(), functions, workload_clusters(fleet, {}), []
    )
    while not plane.all_ready() and plane.round < 30:
        plane.run_round()
    assert plane.all_ready()
    cache = (API_VERSION, MODEL_CACHE, "ml-team", "qwen3-0-6b")
    deployment = (API_VERSION, MODEL_DEPLOYMENT, "ml-team", "qwen3-0-6b")
    assert len(plane.usages_of(cache)) == 2, "one Usage per replica (one per cluster)"

    assert not plane.delete(cache, "kubectl delete modelcache")
    assert cache in plane.store
    assert plane.delete(deployment, "kubectl delete modeldeployment")
    assert cache not in plane.store, "replayed once the replicas and their Usages were gone"
    plane.run_round()
    for cluster in plane.clusters.values():
        kinds = {kind for kind, _, _ in cluster.objects}
        assert not kinds & {"Deployment", "PersistentVolumeClaim"}, cluster.name
    assert plane.losses == []


# --- the command ----------------------------------------------------------------------------

BAD_DIRS = [
    pytest.param({}, "no InferenceCluster", id="no XRs"),
    pytest.param({"a.yaml": "kind: [unclosed"}, "YAML error", id="YAML error"),
    pytest.param(
        {
            "a.yaml": "apiVersion: modelfleet.io/v1alpha1\nkind: ModelCache\n"
            "metadata: {name: x}\nspec: {source: FTP}\n"
        },
        "is invalid: spec.",
        id="invalid XR",
    ),
]


@pytest.mark.parametrize(("files", "message"), BAD_DIRS)
def test_bad_directory_is_one_clear_line(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    outcome = CliRunner().invoke(simulate, [str(tmp_path), "--quiet"])
    assert outcome.exit_code == 1
    assert message in outcome.output
    assert "Traceback" not in outcome.output and len(outcome.output.strip().splitlines()) == 1


def test_missing_directory_is_one_clear_line(tmp_path):
    outcome = CliRunner().invoke(simulate, [str(tmp_path / "nope")])
    assert outcome.exit_code == 1 and "no such directory" in outcome.output


def test_command_prints_a_timeline_and_json(tmp_path):
    outcome = CliRunner().invoke(
        simulate, [str(EXAMPLES / "quickstart"), "--quiet", "--output", "json"]
    )
    assert outcome.exit_code == 0, outcome.output
    result = json.loads(outcome.output)
    assert result["result"] == "Ready" and result["rounds"] >= 3
    assert yaml.safe_load(outcome.output)  # JSON is YAML: tools can read either


def test_round_limit_exits_non_zero_with_the_reason():
    outcome = CliRunner().invoke(
        simulate, [str(EXAMPLES / "quickstart"), "--quiet", "--rounds", "2"]
    )
    assert outcome.exit_code == ExitCode.ROUND_LIMIT == 3
    assert (
        "not Ready after 2 rounds" in outcome.output
        and "ModelCache ml-team/qwen3-0-6b" in outcome.output
    )
