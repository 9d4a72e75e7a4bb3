"""`modelfleet simulate examples/canary`: a ModelService splitting one model name 90/10 between a
stable and a canary ModelDeployment on two clusters' Gateways, then moved to 50/50 and to 100%
canary by edits; the timeline shows each step's routed weights and addresses, and what lands on
the clusters (each HTTPRoute, admitted by its Gateway) is what the status says."""

import shutil
import sys
from pathlib import Path

import pytest
import yaml
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS

sys.path.insert(0, str(Path(__file__).parent))
from simulate_runs import simulate_with_timeline

CANARY = Path(__file__).resolve().parents[3] / "examples" / "canary"
SERVICE = "ModelService ml-team/qwen3"
CLUSTERS = ("gke-eu", "gke-us")


def service_routes(result, cluster):
    """The ModelService's HTTPRoutes on `cluster` (each replica composes one of its own too)."""
    return [
        o
        for o in result["clusters"][cluster]["objects"]
        if o["kind"] == "HTTPRoute" and o["name"].startswith("modelservice-")
    ]


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


@pytest.fixture(scope="module")
def canary(functions):
    return simulate_with_timeline(functions, CANARY)


def test_the_canary_moves_from_10_to_50_to_100_percent_on_the_timeline(canary):
    timeline, result = canary
    assert result["result"] == "Ready", result["reason"]
    weights = [h["summary"].split("weights ", 1)[1] for h in result["xrs"][SERVICE]["history"]]
    moves = [w for i, w in enumerate(weights) if i == 0 or w != weights[i - 1]]
    assert moves == [
        "qwen3-0-6b-stable=90 qwen3-0-6b-canary=10",
        "qwen3-0-6b-stable=50 qwen3-0-6b-canary=50",
        "qwen3-0-6b-stable=0 qwen3-0-6b-canary=100",
    ]
    assert "edited ModelService/ml-team/qwen3" in timeline
    for name in CLUSTERS:
        assert f"{name}: qwen3-0-6b-stable 90, qwen3-0-6b-canary 10 at http://" in timeline
        assert f"{name}: qwen3-0-6b-canary 100 at http://" in timeline


def test_what_lands_on_each_cluster_is_what_the_status_says(canary):
    _, result = canary
    status = result["xrs"][SERVICE]["status"]
    assert status["summary"]["routed"] == "2/2"
    replicas = {
        x["status"]["address"]: x
        for x in result["xrs"].values()
        if x["kind"] == "ModelReplica" and x["status"].get("address")
    }
    for row in status["clusters"]:
        [route] = service_routes(result, row["name"])
        assert route["accepted"] == ["True"]
        # The Service each weight goes to is the one the canary's replica there answers at.
        [(service, weight)] = [(s, w) for s, w in route["backends"].items() if w]
        assert weight == 100
        [replica] = [r for a, r in replicas.items() if f"//{service}." in a]
        assert replica["name"].startswith("qwen3-0-6b-canary-")
        assert replica["status"]["phase"] == "Ready"
        assert row["address"].endswith("/models/qwen3-0.6b/v1")
        assert row["address"].startswith("http://10.")


def test_a_gateway_the_platform_team_has_not_created_is_said_so_and_the_other_routes(
    functions, tmp_path
):
    fleet = tmp_path / "canary"
    shutil.copytree(CANARY, fleet)
    settings = yaml.safe_load((fleet / "simulation.yaml").read_text())
    settings.pop("edits")
    settings["rounds"] = 10
    settings["clusters"] = {"gke-eu": {"missingGateway": True}}
    (fleet / "simulation.yaml").write_text(yaml.safe_dump(settings))
    _, result = simulate_with_timeline(functions, fleet)
    status = result["xrs"][SERVICE]["status"]
    rows = {r["name"]: r for r in status["clusters"]}
    assert rows["gke-eu"]["reason"] == "GatewayNotFound"
    assert "not found on the cluster" in rows["gke-eu"]["message"]
    assert rows["gke-us"]["routed"] is True
    assert status["summary"]["routed"] == "1/2"
    assert service_routes(result, "gke-eu") == []
