"""The multinode example's 2-node gang on a real workload node, run by the real LeaderWorkerSet
controller.

The workload cluster `gke-us-central` is a real single-node Kubernetes
(modelfleet_devtools.e2e.node) whose platform has LeaderWorkerSet installed: the node runs the
upstream lws-controller v0.10.0 with its webhooks (node_lws.py), where the example has
provider-helm install it (provider-helm is not among the real binaries, so the install is
left out of the applied spec: fleet.apply_fleet). Nothing plays the gang:

- the LWS controller makes the leader StatefulSet and the group's worker StatefulSet, its pod
  webhook gives each pod its group's size, rank and leader address, kube-controller-manager's
  StatefulSet controller makes the pods and the kubelet runs them;
- both pods run the composed `vllm serve` command lines (vLLM's own multi-node launcher,
  pipeline-parallel over the two pods) with the CPU engine image serving the tiny model, which
  the loopback Hub serves as the example's repo; the leader turns Ready on its real probe and
  the LeaderWorkerSet reports its ready replica;
- from inside the cluster network, the replica's `status.address` lists the served model and
  answers a chat request; another model name gets 404.

The example is changed only where this machine cannot hold it: gke-us-east is left out (a
second real node would not fit beside the first; the example shows it refusing the gang), the
cluster's Filestore storage becomes a ReadWriteMany class the hostPath provisioner serves, the
pool's GPUs are one per node (so both gang pods fit the one node, and each engine is one CPU
process: tensor-parallel 1 x pipeline-parallel 2), the hydration asks for no more CPU than
the node has, the CPU engine image replaces vLLM's GPU one, and the KV cache is 1 GiB
(`VLLM_CPU_KVCACHE_SPACE`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_devtools.e2e.engine_cache import push_engine_image_for_nodes
from modelfleet_devtools.e2e.fleet import (
    apply_fleet,
    delete_fleet,
    load_fleet,
    start_without,
    wait_for_nothing_left,
)
from modelfleet_devtools.e2e.in_cluster import (
    REAL_NODE_ENV,
    ask,
    condition_true,
    exited_containers,
    waited,
)
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.node import RealNode
from modelfleet_devtools.e2e.node_fleet import replica_address
from modelfleet_devtools.e2e.quickstart import QuickstartFleet
from modelfleet_devtools.e2e.stack import E2E_EPOCH, RealControlPlane
from modelfleet_devtools.engine.tiny_model import tiny_model_repo
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
MULTINODE = EXAMPLES_DIR / "multinode"
CLUSTER = "gke-us-central"
LEFT_OUT = "gke-us-east"
REPO = "moonshotai/Kimi-K2-Instruct"  # the example's ModelCache repo
SERVED_NAME = "kimi-k2"  # the example's --served-model-name
RWX_CLASS = "filestore-rwx"
KV_CACHE_GIB = "1"
LWS_API = "leaderworkerset.x-k8s.io/v1"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
# Opt-in as the quickstart on a real node is (test_real_node_real.py): not yet in `.ci/run`.
pytestmark = pytest.mark.skipif(
    os.environ.get(REAL_NODE_ENV) != "1",
    reason=f"the real-node gang runs only with {REAL_NODE_ENV}=1 (more minutes than CI holds)",
)
timings: dict[str, float] = {}


def run_on_this_machine(engine_image: str) -> Any:
    def edit(obj: Json) -> None:
        spec = obj["spec"]
        if obj["kind"] == "InferenceCluster":
            spec["storage"] = {"storageClassName": RWX_CLASS}
            for pool in spec["nodePools"]:
                pool["gpu"]["count"] = 1
        elif obj["kind"] == "ModelCache":
            spec["hydration"].pop("resources", None)  # 4 CPUs asked; the node has 2
        elif obj["kind"] == "ModelDeployment":
            # ceil(100 / (1 GPU x 80 GiB)) = 2 nodes: the example's 2-node gang.
            spec["resources"] = {"gpusPerNode": 1, "vramGiB": 100}
            engine = spec["engine"]
            engine["image"] = engine_image
            engine["env"] = [{"name": "VLLM_CPU_KVCACHE_SPACE", "value": KV_CACHE_GIB}]

    return edit


def fleet_folder(into: Path) -> Path:
    """The example without the cluster left out (apply_fleet would start a node for it)."""
    objects, _ = load_fleet(MULTINODE)
    kept = [o for o in objects if o["metadata"]["name"] != LEFT_OUT]
    into.mkdir(parents=True, exist_ok=True)
    (into / "fleet.yaml").write_text(yaml.safe_dump_all(kept, sort_keys=False))
    return into


@pytest.fixture(scope="module")
def gang(real_control_plane: RealControlPlane) -> Iterator[QuickstartFleet]:
    plane = real_control_plane
    sources = plane.clusters.sources
    assert sources is not None
    folder = fleet_folder(plane.work / "real-gang-fleet")
    start_without(plane, load_fleet(folder)[0], CLUSTER)

    started = time.monotonic()
    engine_image = push_engine_image_for_nodes(
        plane.bins / "crane", plane.registry.host, plane.work / "engine-image", epoch=E2E_EPOCH
    )
    timings["engine image pushed (built once, then cached)"] = time.monotonic() - started

    kept = sources.hub.repos.get(REPO)
    sources.hub.repos[REPO] = tiny_model_repo()
    applied: list[Json] = []
    try:
        started = time.monotonic()
        applied = apply_fleet(plane, folder, edit=run_on_this_machine(engine_image),
                              real_nodes=True)  # fmt: skip
        timings["applied, node and LWS bring-up included"] = time.monotonic() - started
        yield QuickstartFleet(plane, applied)
    finally:
        try:
            if applied:
                delete_fleet(plane, applied)
                wait_for_nothing_left(plane)
        finally:
            if kept is None:
                sources.hub.repos.pop(REPO, None)
            else:
                sources.hub.repos[REPO] = kept
            plane.clusters.discard(CLUSTER)
            print(f"\nreal gang timings (s): {json.dumps(timings)}")


def node_of(fleet: QuickstartFleet) -> RealNode:
    node = fleet.plane.clusters.clusters[CLUSTER].node
    assert node is not None, f"{CLUSTER} is not a real node"
    return node


def wait(fleet: QuickstartFleet, what: str, probe: Any, timeout: float) -> Any:
    alive = (fleet.plane.check_alive, node_of(fleet).check_alive)
    return waited(what, probe, timeout, alive=alive, timings=timings)


def listed(fleet: QuickstartFleet, api: str, plural: str) -> list[Json]:
    return fleet.workload(CLUSTER).list(resource_path(api, plural))


def gang_pods(fleet: QuickstartFleet) -> list[Json]:
    """The gang's pods, leader first (by worker index)."""
    pods = [p for p in listed(fleet, "v1", "pods") if LWS_NAME_LABEL in p["metadata"]["labels"]]
    return sorted(pods, key=lambda p: int(p["metadata"]["labels"][WORKER_INDEX_LABEL]))


def owner(obj: Json) -> tuple[str, str]:
    (ref,) = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")]
    return ref["kind"], ref["name"]


def test_the_node_runs_the_leaderworkerset_controller(gang: QuickstartFleet) -> None:
    node = node_of(gang)
    assert any(p.name == f"{CLUSTER}-lws-controller" and p.alive() for p in node.started)
    configurations = gang.workload(CLUSTER).list(
        resource_path("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations")
    )
    urls = [w["clientConfig"].get("url", "") for c in configurations for w in c["webhooks"]]
    assert any(u.endswith("/mutate--v1-pod") for u in urls), urls


def test_the_cache_is_staged_on_the_real_node(gang: QuickstartFleet) -> None:
    wait(gang, "the cache Ready on the real node",
         lambda: gang.row(CLUSTER).get("phase") == "Ready", timeout=900)  # fmt: skip


def test_the_lws_controller_makes_the_leader_and_worker_pods_which_turn_ready(
    gang: QuickstartFleet,
) -> None:
    fleet = gang

    def ready_or_exited() -> list[str] | bool:
        exited = exited_containers(gang_pods(fleet))
        if exited:
            return exited  # a real engine that exits is not waited out
        sets = listed(fleet, LWS_API, "leaderworkersets")
        return bool(sets) and all(
            (s.get("status") or {}).get("readyReplicas") == s["spec"]["replicas"] for s in sets
        )

    outcome = wait(fleet, "the LeaderWorkerSet ready", ready_or_exited, 1500)
    assert outcome is True, f"an engine exited: {outcome}"
    (lws,) = listed(fleet, LWS_API, "leaderworkersets")
    name = lws["metadata"]["name"]
    assert lws["status"]["readyReplicas"] == 1
    assert condition_true(lws, "Available"), lws["status"]

    leader, worker = gang_pods(fleet)
    # The LWS controller's own chain: leader StatefulSet <- LWS, worker StatefulSet <- leader.
    assert owner(leader) == ("StatefulSet", name)
    assert owner(worker) == ("StatefulSet", f"{name}-0")
    statefulsets = {s["metadata"]["name"]: s for s in listed(fleet, "apps/v1", "statefulsets")}
    assert owner(statefulsets[name]) == ("LeaderWorkerSet", name)
    assert owner(statefulsets[f"{name}-0"]) == ("Pod", leader["metadata"]["name"])
    for pod in (leader, worker):
        assert pod["spec"]["nodeName"] == CLUSTER
        assert pod["status"]["phase"] == "Running"
        assert condition_true(pod, "Ready"), pod["status"].get("conditions")
        assert pod["spec"]["containers"][0]["image"].startswith("ghcr.io/modelfleet/vllm-cpu:")
    # Ready on its real probe: the leader's is the engine's /health on the serving port.
    probe = leader["spec"]["containers"][0]["readinessProbe"]["httpGet"]
    assert probe["path"] == "/health", probe
    # The pod webhook gave each pod its rank in the group, which its argv reads.
    ranks = [p["metadata"]["labels"][WORKER_INDEX_LABEL] for p in (leader, worker)]
    assert ranks == ["0", "1"]
    env = {e["name"]: e.get("value") for e in worker["spec"]["containers"][0]["env"]}
    assert env.get("LWS_GROUP_SIZE") == "2" and env.get("LWS_WORKER_INDEX") == "1", env
    assert "--headless" in worker["spec"]["containers"][0]["args"]

    # The leader's address is its group's own headless Service, which LWS made; the serving
    # Service, named after the workload, sends to the leader only.
    services = {s["metadata"]["name"]: s for s in listed(fleet, "v1", "services")}
    assert services[f"{name}-0"]["spec"]["clusterIP"] == "None"
    assert env["LWS_LEADER_ADDRESS"] == f"{name}-0.{name}-0.{lws['metadata']['namespace']}"
    slices = [
        e for e in listed(fleet, "discovery.k8s.io/v1", "endpointslices")
        if e["metadata"]["labels"].get("kubernetes.io/service-name") == name
    ]  # fmt: skip
    addresses = [a for e in slices for p in e.get("endpoints") or [] for a in p["addresses"]]
    assert addresses == [leader["status"]["podIP"]], addresses


def test_the_gang_answers_at_the_replicas_address_from_inside_the_cluster(
    gang: QuickstartFleet,
) -> None:
    fleet = gang
    assert not exited_containers(gang_pods(fleet)), exited_containers(gang_pods(fleet))
    address = wait(fleet, "the replica's address", lambda: replica_address(fleet), 300)
    assert ".svc.cluster.local" in address, address

    answers = ask(node_of(fleet), address, SERVED_NAME)
    timings["chat completion"] = answers.chat_seconds
    assert SERVED_NAME in answers.listed, answers.listed
    assert answers.chat_status == 200, answers.chat
    assert isinstance(answers.chat, dict)
    assert answers.chat["model"] == SERVED_NAME
    assert answers.chat["choices"][0]["message"]["role"] == "assistant"
    assert answers.chat["usage"]["completion_tokens"] >= 1
    assert answers.other_model_status == 404
