"""`simulate` on a fleet behind a Gateway: the quickstart with the cluster's gatewayRef (and,
in one case, the Inference Extension) and the Gateway seeded on the cluster. The simulated
gateway controller programs the Gateway and accepts the model's route; each replica then
shows its address through the Gateway, the one the real control plane reports for the same
setup (tests/e2e/test_routes_real.py)."""

import shutil
from pathlib import Path

import pytest
import yaml
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.command import FUNCTIONS
from quickstart_fleet import QUICKSTART
from simulate_runs import simulate_with_timeline

# What tests/e2e/test_routes_real.py sees the real control plane report for the same setup.
THROUGH = "http://10.96.0.80/ml-team/qwen3-0-6b/v1"
GATEWAY = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "Gateway",
    "metadata": {"name": "inference", "namespace": "gateway-system"},
    "spec": {
        "gatewayClassName": "e2e",
        "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}],
    },
}


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def behind_a_gateway(tmp_path: Path, *, extension: bool, seeded: bool) -> Path:
    fleet = tmp_path / "fleet"
    shutil.copytree(QUICKSTART, fleet, ignore=shutil.ignore_patterns("render"))
    path = fleet / "inferencecluster.yaml"
    ic = yaml.safe_load(path.read_text())
    ic["spec"]["gatewayRef"] = {"name": "inference", "namespace": "gateway-system"}
    if extension:
        ic["spec"]["inferenceExtension"] = {"enabled": True}
    path.write_text(yaml.safe_dump(ic))
    # Seeded: the e2e's Gateway takes the place of the one the cluster declares; not seeded:
    # the platform team has not created it.
    cluster = {"objects": [GATEWAY]} if seeded else {"missingGateway": True}
    settings = {"clusters": {"gke-dev": cluster}}
    (fleet / "simulation.yaml").write_text(yaml.safe_dump(settings))
    return fleet


def replica(result):
    [row] = [x for x in result["xrs"].values() if x["kind"] == "ModelReplica"]
    return row


def kinds_on_the_cluster(result):
    return {o["kind"] for o in result["clusters"]["gke-dev"]["objects"]}


# (case, Inference Extension?, the route's backend kind on the cluster)
CASES = [
    ("gatewayRef: routed to the Service", False, "Service"),
    ("with the Inference Extension: routed to an InferencePool", True, "InferencePool"),
]


@pytest.mark.parametrize(("extension", "pool"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_replica_shows_its_address_through_the_gateway(functions, tmp_path, extension, pool):
    text, result = simulate_with_timeline(
        functions, behind_a_gateway(tmp_path, extension=extension, seeded=True)
    )
    assert result["result"] == "Ready"
    status = replica(result)["status"]
    assert status["gatewayAddress"] == THROUGH
    routed = next(c for c in status["conditions"] if c["type"] == "GatewayRouted")
    assert (routed["status"], routed["reason"]) == ("True", "Accepted")
    assert f"through the Gateway at {THROUGH}" in text
    assert "GatewayRouted=True Accepted" in text
    kinds = kinds_on_the_cluster(result)
    assert "HTTPRoute" in kinds and ("InferencePool" in kinds) == extension


def test_without_the_gateway_the_route_waits_and_says_so(functions, tmp_path):
    text, result = simulate_with_timeline(
        functions, behind_a_gateway(tmp_path, extension=False, seeded=False), rounds=12
    )
    assert "gatewayAddress" not in replica(result)["status"]
    assert "GatewayNotFound" in text
