"""The quickstart fleet behind a Gateway on a real control plane: the cluster's gatewayRef
makes the replica compose its HTTPRoute, the Inference Extension option an InferencePool
the route sends to; the workload cluster's real API server admits both (its Gateway API and
Inference Extension CRDs are the pinned files). The test plays the gateway controller: it
programs the Gateway with an address and accepts the route; the replica then reports the
address through the Gateway, the same (and the same Service address) as `modelfleet simulate`
reports for the same fleet with the same Gateway seeded. Deleting the fleet leaves nothing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml
from modelfleet_devtools.e2e.fleet import (
    ServedFleet,
    apply_fleet,
    condition,
    delete_fleet,
    wait_for_nothing_left,
    xr_path,
)
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.routed import simulated_status
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.e2e.workload import ensure_namespace
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
CLUSTER = "gke-dev"
GATEWAY_NAMESPACE = "gateway-system"
GATEWAY_ADDRESS = "10.96.0.80"
GATEWAYS = resource_path("gateway.networking.k8s.io/v1", "gateways", GATEWAY_NAMESPACE)
ROUTES = resource_path("gateway.networking.k8s.io/v1", "httproutes")
POOLS = resource_path("inference.networking.k8s.io/v1", "inferencepools")
SERVICES = resource_path("v1", "services")
REPLICAS = resource_path("modelfleet.io/v1alpha1", "modelreplicas")
# What the quickstart's model is served at through the Gateway: /<namespace>/<deployment>/v1.
THROUGH = f"http://{GATEWAY_ADDRESS}/ml-team/qwen3-0-6b/v1"


def behind_the_gateway(obj: Json) -> None:
    if obj["kind"] == "InferenceCluster":
        obj["spec"]["gatewayRef"] = {"name": "inference", "namespace": GATEWAY_NAMESPACE}


GATEWAY = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "Gateway",
    "metadata": {"name": "inference", "namespace": GATEWAY_NAMESPACE},
    "spec": {
        "gatewayClassName": "e2e",
        "listeners": [
            {
                "name": "http",
                "port": 80,
                "protocol": "HTTP",
                "allowedRoutes": {"namespaces": {"from": "All"}},
            }
        ],
    },
}
GATEWAY_STATUS = {"addresses": [{"type": "IPAddress", "value": GATEWAY_ADDRESS}]}


def simulated_replica(folder: Path) -> Json:
    """`modelfleet simulate --output json` on the quickstart behind the same Gateway, with
    the Inference Extension: the ModelReplica's final status."""
    fleet = folder / "fleet"
    shutil.copytree(EXAMPLES_DIR / "quickstart", fleet, ignore=shutil.ignore_patterns("render"))
    ic = yaml.safe_load((fleet / "inferencecluster.yaml").read_text())
    behind_the_gateway(ic)
    ic["spec"]["inferenceExtension"] = {"enabled": True}
    (fleet / "inferencecluster.yaml").write_text(yaml.safe_dump(ic))
    seeded = GATEWAY | {"status": GATEWAY_STATUS}
    settings = {"clusters": {CLUSTER: {"objects": [seeded]}}}
    (fleet / "simulation.yaml").write_text(yaml.safe_dump(settings))
    return simulated_status(fleet, "ModelReplica")


def true(kind: str, reason: str) -> Json:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": "set by the test, playing the gateway controller",
        "observedGeneration": 1,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


def program_the_gateway(client: Any) -> None:
    """A Gateway as a platform team declares it, Programmed at an address as its controller
    would report it."""
    ensure_namespace(client, GATEWAY_NAMESPACE)
    client.create(GATEWAYS, GATEWAY)
    conditions = [true("Accepted", "Accepted"), true("Programmed", "Programmed")]
    client.merge_patch(
        f"{GATEWAYS}/inference",
        {"status": GATEWAY_STATUS | {"conditions": conditions}},
        status=True,
    )


def test_routes_and_pools_are_admitted_and_the_address_through_the_gateway_is_reported(
    real_control_plane: RealControlPlane, tmp_path: Path
) -> None:
    plane = real_control_plane
    objects = apply_fleet(plane, EXAMPLES_DIR / "quickstart", edit=behind_the_gateway)
    fleet = ServedFleet(plane, objects)
    workload = plane.clusters.clusters[CLUSTER].client
    program_the_gateway(workload)
    ic = next(o for o in objects if o["kind"] == "InferenceCluster")

    def routes() -> list[Json]:
        return workload.list(ROUTES)

    # gatewayRef only: one route, to the replica's Service.
    wait_for(lambda: len(routes()) == 1, what="the HTTPRoute admitted", timeout=180, every=3)
    [service] = [s for s in workload.list(SERVICES) if s["metadata"]["name"].startswith("model-")]
    [backend] = routes()[0]["spec"]["rules"][0]["backendRefs"]
    assert (backend["kind"], backend["name"]) == ("Service", service["metadata"]["name"])

    # With the Inference Extension: an InferencePool over the Service's pods, routed to.
    plane.client.merge_patch(xr_path(ic), {"spec": {"inferenceExtension": {"enabled": True}}})
    wait_for(
        lambda: (
            len(workload.list(POOLS)) == 1
            and routes()[0]["spec"]["rules"][0]["backendRefs"][0]["kind"] == "InferencePool"
        ),
        what="the InferencePool admitted and the route sending to it",
        timeout=180,
        every=3,
    )
    [pool] = workload.list(POOLS)
    assert pool["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
    assert pool["spec"]["endpointPickerRef"]["name"] == f"{pool['metadata']['name']}-epp"
    assert pool["metadata"]["labels"]["modelfleet.io/modeldeployment"] == "qwen3-0-6b"

    # The gateway controller accepts the route: the replica reports the address through it.
    [route] = routes()
    parent = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "inference"}
    parent["namespace"] = GATEWAY_NAMESPACE
    workload.merge_patch(
        resource_path(
            "gateway.networking.k8s.io/v1",
            "httproutes",
            route["metadata"]["namespace"],
            route["metadata"]["name"],
        ),
        {
            "status": {
                "parents": [
                    {
                        "parentRef": parent,
                        "controllerName": "modelfleet.io/e2e-gateway",
                        "conditions": [true("Accepted", "Accepted")],
                    }
                ]
            }
        },
        status=True,
    )

    def through() -> str | None:
        replicas = plane.client.list(REPLICAS)
        return ((replicas[0].get("status") or {}).get("gatewayAddress")) if replicas else None

    wait_for(lambda: through() == THROUGH, what="the address through the Gateway", timeout=180)
    [real] = plane.client.list(REPLICAS)
    simulated = simulated_replica(tmp_path)
    for field in ("address", "gatewayAddress"):
        assert real["status"].get(field) == simulated.get(field), field
    assert condition(fleet.get(fleet.deployment), "Ready").get("status") == "True"

    delete_fleet(plane, objects)
    wait_for_nothing_left(plane)
    assert not workload.list(ROUTES) and not workload.list(POOLS)
    workload.delete(f"{GATEWAYS}/inference")
