"""The quickstart on a real workload node: its pods really run.

The workload cluster `gke-dev` is a real single-node Kubernetes (modelfleet_devtools.e2e.node):
kube-scheduler places the pods, the kubelet runs them in containerd, the Job and Deployment
controllers of kube-controller-manager keep their status. Nothing plays them:

- the ModelCache's hydration Job runs as a pod of the hydrator image the functions compose,
  pulled through the node's registry mirror, and stages the model into the claim the hostPath
  provisioner bound (the one stand-in: docs/development.md);
- the ModelDeployment's Deployment is rolled out and its pod turns Ready when its readiness
  probe passes against the engine: the CPU engine image (docs/engine-image.md) serving the
  tiny model, which the loopback Hub serves as the quickstart's repo;
- from inside the cluster network, the replica's `status.address` (resolved through the
  cluster's CoreDNS, routed by kube-proxy) lists the served model and answers a chat request.

The quickstart is changed only where this machine cannot hold it: the CPU engine image for
vLLM's GPU one, one replica (two CPU engines would take half of the shared machine's memory),
and a 1 GiB KV cache (`VLLM_CPU_KVCACHE_SPACE`, the CPU engine's default is 4).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from modelfleet_devtools.e2e.engine_cache import push_engine_image
from modelfleet_devtools.e2e.fleet import (
    GROUP_VERSION,
    apply_fleet,
    delete_fleet,
    load_fleet,
    wait_for_nothing_left,
    xr_path,
)
from modelfleet_devtools.e2e.in_cluster import (
    REAL_NODE_ENV,
    ask,
    condition_true,
    exited_containers,
)
from modelfleet_devtools.e2e.in_cluster import (
    waited as waited_alive,
)
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.node import RealNode
from modelfleet_devtools.e2e.quickstart import CLUSTER, QuickstartFleet
from modelfleet_devtools.e2e.sources import QUICKSTART_REPO
from modelfleet_devtools.e2e.stack import E2E_EPOCH, RealControlPlane
from modelfleet_devtools.e2e.staged import check_row
from modelfleet_devtools.engine.tiny_model import tiny_model_repo
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
QUICKSTART = EXAMPLES_DIR / "quickstart"
WORKLOAD_NAMESPACE = "modelfleet"
SERVED_NAME = "qwen3-0.6b"  # the quickstart's --served-model-name
KV_CACHE_GIB = "1"
# Not yet in `.ci/run`: the module builds the 3 GB CPU engine image on a machine that has not
# cached it (7 to 16 min here) and its serving tests have not yet passed end to end on a real
# node (issue 45; docs/development.md, "A real workload node").
pytestmark = pytest.mark.skipif(
    os.environ.get(REAL_NODE_ENV) != "1",
    reason=f"the real-node scenario runs only with {REAL_NODE_ENV}=1 (not yet in CI: issue 45)",
)
timings: dict[str, float] = {}


def run_on_this_machine(engine_image: str) -> Any:
    def edit(obj: Json) -> None:
        if obj["kind"] == "ModelDeployment":
            obj["spec"]["replicas"] = 1
            engine = obj["spec"]["engine"]
            engine["image"] = engine_image
            engine["env"] = [{"name": "VLLM_CPU_KVCACHE_SPACE", "value": KV_CACHE_GIB}]

    return edit


@pytest.fixture(scope="module")
def on_a_real_node(real_control_plane: RealControlPlane) -> Iterator[QuickstartFleet]:
    plane = real_control_plane
    sources = plane.clusters.sources
    assert sources is not None
    objects, _ = load_fleet(QUICKSTART)
    if any(plane.client.get(xr_path(o)) for o in objects if o["kind"] != "Secret"):
        delete_fleet(plane, objects)  # an earlier module's quickstart
        wait_for_nothing_left(plane)
    plane.clusters.discard(CLUSTER)  # its stand-in cluster, if one is left

    started = time.monotonic()
    pushed = push_engine_image(
        plane.bins / "crane", plane.registry.host, plane.work / "engine-image", epoch=E2E_EPOCH
    )
    timings["engine image pushed (built once, then cached)"] = time.monotonic() - started
    # Pushed as a release image is: the node's ghcr.io mirror serves it (node_images.py).
    engine_image = "ghcr.io/modelfleet/" + pushed.rpartition("/")[2]

    kept = sources.hub.repos[QUICKSTART_REPO]
    sources.hub.repos[QUICKSTART_REPO] = tiny_model_repo()
    applied: list[Json] = []
    try:
        started = time.monotonic()
        applied = apply_fleet(
            plane, QUICKSTART, edit=run_on_this_machine(engine_image), real_nodes=True
        )
        timings["applied, node bring-up included"] = time.monotonic() - started
        yield QuickstartFleet(plane, applied)
    finally:
        try:
            if applied:
                delete_fleet(plane, applied)
                wait_for_nothing_left(plane)
        finally:
            sources.hub.repos[QUICKSTART_REPO] = kept
            plane.clusters.discard(CLUSTER)
            print(f"\nreal node timings (s): {json.dumps(timings)}")


def node_of(fleet: QuickstartFleet) -> RealNode:
    node = fleet.plane.clusters.clusters[CLUSTER].node
    assert node is not None, f"{CLUSTER} is not a real node"
    return node


def items(fleet: QuickstartFleet, api: str, plural: str) -> list[Json]:
    return fleet.workload().list(resource_path(api, plural, WORKLOAD_NAMESPACE))


def waited(fleet: QuickstartFleet, what: str, probe: Any, timeout: float) -> Any:
    alive = (fleet.plane.check_alive, node_of(fleet).check_alive)
    return waited_alive(what, probe, timeout, alive=alive, timings=timings)


def test_the_workload_cluster_is_a_ready_node_running_containerd(
    on_a_real_node: QuickstartFleet,
) -> None:
    node = on_a_real_node.workload().get(resource_path("v1", "nodes", name=CLUSTER)) or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    assert condition_true(node, "Ready")
    assert info.get("containerRuntimeVersion", "").startswith("containerd://")
    assert node["status"]["capacity"].get("nvidia.com/gpu") == "2"  # the pool's 2 x 1 GPU
    assert node["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == "l4"


def test_the_hydration_job_runs_as_a_pod_of_the_hydrator_image_and_the_cache_is_ready(
    on_a_real_node: QuickstartFleet,
) -> None:
    fleet = on_a_real_node
    waited(fleet, "the cache Ready on the real node",
           lambda: fleet.row().get("phase") == "Ready", timeout=600)  # fmt: skip
    jobs = items(fleet, "batch/v1", "jobs")
    assert len(jobs) == 1, [j["metadata"]["name"] for j in jobs]
    job = jobs[0]
    assert condition_true(job, "Complete"), job.get("status")  # the Job controller's word
    image = job["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image.startswith("ghcr.io/modelfleet/model-hydrator:"), image
    pods = [
        p
        for p in items(fleet, "v1", "pods")
        if p["metadata"].get("labels", {}).get("job-name") == job["metadata"]["name"]
    ]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    assert pods[0]["spec"]["nodeName"] == CLUSTER
    ran = pods[0]["status"]["containerStatuses"][0]
    assert ran["image"].endswith(image.partition("/")[2]) and ran["imageID"], ran

    row = fleet.row()
    claim = fleet.workload().get(
        resource_path("v1", "persistentvolumeclaims", WORKLOAD_NAMESPACE, row["claimName"])
    )
    assert claim is not None and claim["status"]["phase"] == "Bound"
    volume = fleet.workload().get(resource_path("v1", "persistentvolumes",
                                                name=claim["spec"]["volumeName"]))  # fmt: skip
    assert volume is not None
    checked, problems = check_row(
        fleet.get(fleet.cache), row, Path(volume["spec"]["hostPath"]["path"]),
        fleet.plane.clusters.sources,  # type: ignore[arg-type]
    )  # fmt: skip
    assert (checked, problems) == (1, [])


def serving_pods(fleet: QuickstartFleet) -> list[Json]:
    return [p for p in items(fleet, "v1", "pods") if "job-name" not in p["metadata"]["labels"]]


def exited_engines(fleet: QuickstartFleet) -> list[str]:
    """How each serving container that exited ended (its reason and exit code)."""
    return exited_containers(serving_pods(fleet))


def test_the_serving_deployment_schedules_its_pod_on_the_node_mounting_the_claim(
    on_a_real_node: QuickstartFleet,
) -> None:
    fleet = on_a_real_node

    def started() -> bool:
        pods = serving_pods(fleet)
        return len(pods) == 1 and any(
            "running" in (s.get("state") or {}) or (s.get("lastState") or {}).get("terminated")
            for s in (pods[0].get("status") or {}).get("containerStatuses") or []
        )

    # The Deployment controller made the pod, the scheduler placed it, the kubelet mounted
    # its volumes and pulled the engine image through the mirror, and containerd started it.
    waited(fleet, "the serving pod started on the node", started, timeout=900)
    (pod,) = serving_pods(fleet)
    assert pod["spec"]["nodeName"] == CLUSTER
    assert condition_true(pod, "PodScheduled")
    claims = [
        v["persistentVolumeClaim"]["claimName"]
        for v in pod["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    ]
    assert claims == [fleet.row()["claimName"]]
    assert pod["spec"]["containers"][0]["image"].startswith("ghcr.io/modelfleet/vllm-cpu:")


def test_the_serving_deployment_rolls_out_and_its_pod_turns_ready_on_the_engine(
    on_a_real_node: QuickstartFleet,
) -> None:
    fleet = on_a_real_node

    def rolled_out_or_exited() -> list[str] | bool:
        exited = exited_engines(fleet)
        if exited:
            return exited  # a real engine that exits is not waited out
        deployments = items(fleet, "apps/v1", "deployments")
        return bool(deployments) and all(
            (d.get("status") or {}).get("readyReplicas") == d["spec"]["replicas"]
            for d in deployments
        )

    outcome = waited(fleet, "the serving Deployment rolled out", rolled_out_or_exited, 900)
    assert outcome is True, f"the engine exited: {outcome}"
    (deployment,) = items(fleet, "apps/v1", "deployments")
    assert condition_true(deployment, "Available")
    assert condition_true(serving_pods(fleet)[0], "Ready")


def replica_address(fleet: QuickstartFleet) -> str:
    namespace = fleet.deployment["metadata"]["namespace"]
    replicas = fleet.plane.client.list(resource_path(GROUP_VERSION, "modelreplicas", namespace))
    addresses = [(r.get("status") or {}).get("address") or "" for r in replicas]
    return addresses[0] if len(addresses) == 1 else ""


def test_the_model_answers_at_the_replicas_address_from_inside_the_cluster(
    on_a_real_node: QuickstartFleet,
) -> None:
    fleet = on_a_real_node
    assert not exited_engines(fleet), exited_engines(fleet)
    address = waited(fleet, "the replica's address", lambda: replica_address(fleet), 300)
    assert ".svc.cluster.local" in address, address

    answers = ask(node_of(fleet), address, SERVED_NAME)
    timings["chat completion"] = answers.chat_seconds
    assert SERVED_NAME in answers.listed, answers.listed
    assert answers.chat_status == 200, answers.chat
    completion = answers.chat
    assert isinstance(completion, dict)
    assert completion["model"] == SERVED_NAME
    assert completion["choices"][0]["message"]["role"] == "assistant"
    assert completion["usage"]["completion_tokens"] >= 1
    assert answers.other_model_status == 404
