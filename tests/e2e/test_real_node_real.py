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

Then the faults, each losing nothing: the hydration pod killed mid-download (the Job
controller's next pod fetches only what was not finished), a serving pod killed (the
Deployment replaces it), the kubelet restarted and containerd restarted (the pods run on).
Last, the cluster lost (modelfleet_devtools.e2e.lost_cluster): its kube-apiserver alone
stopped, seen within a minute and losing nothing; then provider-kubernetes v1.2.1 takes the
fleet over, stages a source change and does not see a short outage. They come last, in this
module's order, because they change the fleet's source and provider; the one fleet serves
every scenario (one node bring-up, hydration, engine start and deletion per run).

The quickstart is changed only where this machine cannot hold it: the CPU engine image for
vLLM's GPU one, one replica (two CPU engines would take half of the shared machine's memory),
a 1 GiB KV cache (`VLLM_CPU_KVCACHE_SPACE`, the CPU engine's default is 4), and
`--enforce-eager`: the engine runs the model without compiling it first (torch.compile's
inductor C++ build of the graph is the largest part of a CPU engine's start,
docs/engine-image.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from modelfleet_devtools.e2e import lost_cluster
from modelfleet_devtools.e2e.in_cluster import condition_true, curl
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.lost_cluster import REVISION
from modelfleet_devtools.e2e.node_fleet import (
    APPLIED,
    EAGER,
    SERVED_NAME,
    WORKLOAD_NAMESPACE,
    chat,
    exited_engines,
    hydration_pods,
    items,
    lease_renewed_since,
    local_request,
    node_of,
    port_forward,
    quickstart_on_a_real_node,
    replica_address,
    replica_phase,
    running_containers,
    seconds_between,
    serving_pods,
    settled,
    what_lasts,
)
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.quickstart import CLUSTER, QuickstartFleet
from modelfleet_devtools.e2e.sources import QUICKSTART_REPO
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.e2e.staged import check_row
from modelfleet_devtools.engine.tiny_model import tiny_model_files

Json = dict[str, Any]
# The hydration's first GET of the weights stops halfway until released, so that the scenario
# can kill the hydration pod mid-download (tiny_model.py: the weights are about 1.5 MB).
STALLED_FILE = "model.safetensors"
STALLED_AT = 512 * 1024
timings: dict[str, float] = {}
applied_at: list[float] = []  # when `apply_fleet` began (monotonic)


@pytest.fixture(scope="module")
def on_a_real_node(real_control_plane: RealControlPlane) -> Iterator[QuickstartFleet]:
    """The quickstart on a real node (node_fleet.quickstart_on_a_real_node), its weights'
    first download stalled halfway; the Hub serves REVISION too, for the source change."""
    sources = real_control_plane.clusters.sources
    assert sources is not None
    hub = sources.hub

    def stall_the_weights() -> None:
        hub.reset_counts()
        hub.release.clear()
        hub.stalled.clear()
        hub.faults.stall_after[STALLED_FILE] = STALLED_AT

    try:
        with quickstart_on_a_real_node(
            real_control_plane, timings, revisions=[REVISION], before_apply=stall_the_weights
        ) as fleet:
            applied_at.append(time.monotonic() - timings[APPLIED])
            yield fleet
    finally:
        hub.faults.stall_after.pop(STALLED_FILE, None)
        hub.release.set()
        print(f"\nreal node timings (s): {json.dumps(timings)}")


def waited(fleet: QuickstartFleet, what: str, probe: Any, timeout: float) -> Any:
    def alive_and() -> Any:
        fleet.plane.check_alive()
        node_of(fleet).check_alive()
        return probe()

    started = time.monotonic()
    result = wait_for(alive_and, what=what, timeout=timeout, every=3)
    timings[what] = time.monotonic() - started
    return result


def test_the_workload_cluster_is_a_ready_node_running_containerd(
    on_a_real_node: QuickstartFleet,
) -> None:
    node = on_a_real_node.workload().get(resource_path("v1", "nodes", name=CLUSTER)) or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    assert condition_true(node, "Ready")
    assert info.get("containerRuntimeVersion", "").startswith("containerd://")
    assert node["status"]["capacity"].get("nvidia.com/gpu") == "2"  # the pool's 2 x 1 GPU
    assert node["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == "l4"


def test_a_hydration_pod_killed_mid_download_is_followed_by_one_that_fetches_only_the_rest(
    on_a_real_node: QuickstartFleet,
) -> None:
    fleet = on_a_real_node
    hub = fleet.plane.clusters.sources.hub  # type: ignore[union-attr]
    node = node_of(fleet)
    # Tight polling: the stalled GET must not outlive the hydrator's read timeout.
    wait_for(hub.stalled.is_set, what="the weights' download stalled halfway", timeout=600,
             every=0.2)  # fmt: skip
    (first,) = waited(fleet, "the hydration pod running", lambda: [
        p for p in hydration_pods(fleet) if (p["status"].get("containerStatuses") or [{}])[0]
        .get("state", {}).get("running")
    ], timeout=30)  # fmt: skip
    sizes = {f"{QUICKSTART_REPO}/{n}": len(d) for n, d in tiny_model_files().items()}
    served = settled(hub)
    finished = {k for k, size in sizes.items() if served.get(k) == size}
    assert finished, f"no file finished before the stall: {served}"
    assert node.kill_container(first), "no process of the hydration container found"
    hub.release.set()

    waited(fleet, "the cache Ready after the killed hydration",
           lambda: fleet.row().get("phase") == "Ready", timeout=600)  # fmt: skip
    (job,) = items(fleet, "batch/v1", "jobs")
    assert condition_true(job, "Complete"), job.get("status")
    assert job["status"].get("failed") == 1, job["status"]  # the killed pod, counted
    pods = {p["metadata"]["name"]: p["status"]["phase"] for p in hydration_pods(fleet)}
    assert pods.get(first["metadata"]["name"]) == "Failed" and "Succeeded" in pods.values(), pods
    with hub.lock:
        served_after = dict(hub.bytes_served)
    refetched = {k: served_after[k] - served[k] for k in finished if served_after[k] != served[k]}
    assert not refetched, f"finished files fetched again: {refetched}"
    assert all(served_after.get(k, 0) >= size for k, size in sizes.items()), served_after


def test_the_hydration_job_ran_as_pods_of_the_hydrator_image_and_staged_the_model(
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
    pods = [p for p in hydration_pods(fleet) if p["status"]["phase"] == "Succeeded"]
    assert len(pods) == 1, [p["metadata"]["name"] for p in hydration_pods(fleet)]
    assert pods[0]["spec"]["nodeName"] == CLUSTER
    ran = pods[0]["status"]["containerStatuses"][0]
    assert ran["image"].endswith(image.partition("/")[2]) and ran["imageID"], ran
    timings["staging (the Job's pods, the kill included)"] = seconds_between(
        job["status"]["startTime"], job["status"]["completionTime"]
    )

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
    (engine,) = pod["spec"]["containers"]
    assert engine["image"].startswith("ghcr.io/modelfleet/vllm-cpu:")
    assert EAGER in engine["args"], engine["args"]  # the user's flag, passed on as written


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
    (pod,) = serving_pods(fleet)
    assert condition_true(pod, "Ready")
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    started = pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
    timings["engine start (container started to Ready)"] = seconds_between(
        started, ready["lastTransitionTime"]
    )
    timings["pod created to container started (image pull included)"] = seconds_between(
        pod["metadata"]["creationTimestamp"], started
    )


def test_the_model_answers_at_the_replicas_address_from_inside_the_cluster(
    on_a_real_node: QuickstartFleet,
) -> None:
    fleet = on_a_real_node
    assert not exited_engines(fleet), exited_engines(fleet)
    address = waited(fleet, "the replica's address", lambda: replica_address(fleet), 300)
    assert ".svc.cluster.local" in address, address
    node = node_of(fleet)

    status, listed = curl(node, f"{address}/models")
    assert status == 200, listed
    assert SERVED_NAME in [m["id"] for m in json.loads(listed)["data"]]

    started = time.monotonic()
    status, answered = chat(fleet, SERVED_NAME)
    timings["chat completion"] = time.monotonic() - started
    timings["apply to the first answer"] = time.monotonic() - applied_at[0]
    assert status == 200, answered
    completion = json.loads(answered)
    assert completion["model"] == SERVED_NAME
    assert completion["choices"][0]["message"]["role"] == "assistant"
    assert completion["usage"]["completion_tokens"] >= 1
    assert chat(fleet, "another-model")[0] == 404


def test_the_getting_started_commands_find_the_service_and_answer_through_a_port_forward(
    on_a_real_node: QuickstartFleet,
) -> None:
    """docs/getting-started.md, "Talk to the model": the Service found by its labels, a
    `kubectl port-forward` to it, and the two curls (on a free local port, not 8000)."""
    fleet = on_a_real_node
    client = fleet.workload()
    selector = "modelfleet.io/modeldeployment=qwen3-0-6b,modelfleet.io/namespace=ml-team"
    service = client.kubectl("-n", WORKLOAD_NAMESPACE, "get", "service", "-o", "name",
                             "-l", selector).strip()  # fmt: skip
    assert service.startswith("service/"), service
    (pod,) = serving_pods(fleet)
    engine_log = client.kubectl("-n", WORKLOAD_NAMESPACE, "logs", pod["metadata"]["name"])
    assert "/health" in engine_log or "Uvicorn" in engine_log, engine_log[-500:]

    with port_forward(client, WORKLOAD_NAMESPACE, service, 8000) as base:
        status, listed = local_request(f"{base}/v1/models")
        assert status == 200 and SERVED_NAME in [m["id"] for m in listed["data"]]
        status, answered = local_request(f"{base}/v1/chat/completions", {
            "model": SERVED_NAME, "max_tokens": 8,
            "messages": [{"role": "user", "content": "Say hello in one word."}],
        })  # fmt: skip
        assert status == 200 and answered["choices"][0]["message"]["role"] == "assistant"


def test_a_serving_pod_killed_is_replaced_the_replica_goes_progressing_then_ready(
    on_a_real_node: QuickstartFleet,
) -> None:
    fleet = on_a_real_node
    lasting, claims = what_lasts(fleet)
    (killed,) = serving_pods(fleet)
    name = killed["metadata"]["name"]
    fleet.workload().request("DELETE", resource_path("v1", "pods", WORKLOAD_NAMESPACE, name),
                             query={"gracePeriodSeconds": "0"})  # fmt: skip
    phases: list[str] = []

    def replaced_and_ready() -> bool:
        phase = replica_phase(fleet)
        if not phases or phases[-1] != phase:
            phases.append(phase)
        pods = serving_pods(fleet)
        return (
            phase == "Ready"
            and "Progressing" in phases
            and len(pods) == 1
            and pods[0]["metadata"]["name"] != name
            and condition_true(pods[0], "Ready")
        )

    waited(fleet, "the killed serving pod replaced and Ready", replaced_and_ready, 600)
    assert phases[phases.index("Progressing") :][-1] == "Ready", phases
    assert chat(fleet, SERVED_NAME)[0] == 200
    assert what_lasts(fleet)[0] >= lasting and what_lasts(fleet)[1] == claims


@pytest.mark.parametrize("part", ["kubelet", "containerd"])
def test_a_restarted_node_part_keeps_the_running_pods_and_the_fleet_ready(
    on_a_real_node: QuickstartFleet, part: str
) -> None:
    fleet = on_a_real_node
    node = node_of(fleet)
    lasting, claims = what_lasts(fleet)
    before = running_containers(fleet)
    assert before and fleet.everything_ready()
    node.restart(part)
    restarted = datetime.now(UTC)

    def back() -> bool:
        # The kubelet renewed its Lease since (the restarted one, or the one that lived
        # through containerd's restart), containerd knows the pods' containers again, and
        # the fleet answers.
        ids = {container_id.partition("://")[2] for container_id, _ in before.values()}
        return (
            lease_renewed_since(fleet, restarted)
            and ids <= node.running_tasks()
            and fleet.everything_ready()
            and chat(fleet, SERVED_NAME)[0] == 200
        )

    waited(fleet, f"the fleet Ready and answering after a {part} restart", back, 300)
    assert running_containers(fleet) == before, f"pods restarted or replaced by the {part} restart"
    assert what_lasts(fleet)[0] >= lasting and what_lasts(fleet)[1] == claims


def test_a_lost_cluster_shows_within_a_minute_and_loses_nothing(
    on_a_real_node: QuickstartFleet,
) -> None:
    """The cluster's API server is stopped for lost_cluster.OUTAGE seconds: `Connected` turns
    False within a minute, nothing lasting goes, the engine answers throughout; back, all is
    Ready again within a minute, on the same pod, never restarted (lost_cluster.py)."""
    lost_cluster.lost_for_a_while(on_a_real_node, timings)


def test_on_provider_v1_2_1_the_fleet_works_and_a_lost_cluster_waits_for_its_poll(
    on_a_real_node: QuickstartFleet,
) -> None:
    """provider-kubernetes v1.2.1, the newest release users can install, takes the fleet over:
    a source change is staged anew by a real hydration Job losing nothing, and a short outage
    goes unseen and loses nothing either (lost_cluster.py); then the suite's build is back."""
    lost_cluster.taken_over_by_v1_2_1(on_a_real_node, timings)
