"""The quickstart fleet on a real workload node (node.py), as its scenarios apply and read
it: applied as this machine can hold it, the pods of the workload namespace, the replica's
address and phase, a request from inside the cluster network, and what must last through a
fault."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from modelfleet_contracts.labels import kind_label
from modelfleet_contracts.served_names import served_name_in_args

from ..engine.tiny_model import tiny_model_files, tiny_model_repo
from ..loopback.hub import FakeHub, Repo
from ..paths import EXAMPLES_DIR
from .engine_cache import push_engine_image_for_nodes
from .fleet import (
    GROUP_VERSION,
    apply_fleet,
    delete_fleet,
    load_fleet,
    start_without,
    wait_for_nothing_left,
)
from .in_cluster import Answers, ask, curl, exited_containers
from .kube import KubeClient, resource_path
from .node import RealNode
from .processes import free_port, wait_for
from .quickstart import CLUSTER, QuickstartFleet
from .stack import E2E_EPOCH, RealControlPlane
from .staged import check_row

Json = dict[str, Any]
WORKLOAD_NAMESPACE = "modelfleet"
QUICKSTART = EXAMPLES_DIR / "quickstart"
SERVED_NAME = "qwen3-0.6b"  # the quickstart's --served-model-name
KV_CACHE_GIB = "1"
EAGER = "--enforce-eager"  # no torch.compile at start: docs/engine-image.md, "Starting faster"
ENGINE_PUSHED = "engine image pushed (built once, then cached)"
APPLIED = "applied, node bring-up included"


def run_on_this_machine(engine_image: str) -> Callable[[Json], None]:
    """An example changed only where this machine cannot hold it: in every ModelDeployment
    and ModelReplica, the CPU engine image, one replica, a 1 GiB KV cache and
    `--enforce-eager` (test_real_node_real.py says why)."""

    def edit(obj: Json) -> None:
        if obj["kind"] in ("ModelDeployment", "ModelReplica"):
            obj["spec"]["replicas"] = 1
            engine = obj["spec"]["engine"]
            engine["image"] = engine_image
            engine["args"] = [*engine.get("args", []), EAGER]
            engine["env"] = [{"name": "VLLM_CPU_KVCACHE_SPACE", "value": KV_CACHE_GIB}]

    return edit


def engine_image_for_nodes(plane: RealControlPlane, timings: dict[str, float]) -> str:
    """The CPU engine image pushed from its cache (built on the first call of any session:
    engine_cache.py), named as a real node pulls it; its seconds in `timings[ENGINE_PUSHED]`."""
    started = time.monotonic()
    engine_image = push_engine_image_for_nodes(
        plane.bins / "crane", plane.registry.host, plane.work / "engine-image", epoch=E2E_EPOCH
    )
    timings[ENGINE_PUSHED] = time.monotonic() - started
    return engine_image


@contextmanager
def tiny_models_in_the_hub(
    hub: FakeHub, caches: Sequence[Json], revisions: Sequence[str] = ()
) -> Iterator[None]:
    """While in the block, every Hub repo the caches stage serves the tiny model (a model
    the CPU engine runs in seconds) at the revision each cache names and at `revisions`,
    gated as the repo it stands in for; afterwards the repos are put back."""
    kept: dict[str, Repo | None] = {}
    for cache in caches:
        hf = (cache.get("spec") or {}).get("huggingFace") or {}
        name = hf.get("repo")
        if not name:
            continue
        if name not in kept:
            old = kept[name] = hub.repos.get(name)
            hub.repos[name] = tiny_model_repo()
            hub.repos[name].gated = bool(old and old.gated)
        for revision in {hf.get("revision") or "main", *revisions} - {"main"}:
            hub.repos[name].commit(revision, tiny_model_files())
    try:
        yield
    finally:
        for name, repo in kept.items():
            if repo is None:
                hub.repos.pop(name, None)
            else:
                hub.repos[name] = repo


@contextmanager
def quickstart_on_a_real_node(
    plane: RealControlPlane,
    timings: dict[str, float],
    *,
    revisions: Sequence[str] = (),
    before_apply: Callable[[], None] | None = None,
) -> Iterator[QuickstartFleet]:
    """The quickstart applied on a real node (run_on_this_machine), what an earlier module
    left of it deleted first. The CPU engine image is pushed (engine_image_for_nodes), and
    the loopback Hub serves the tiny model as the quickstart's repo at `main` and at each of
    `revisions`; then `before_apply` (a fault to arm) and the apply. Afterwards the fleet is
    deleted, nothing may be left, the Hub's repo is put back and the node removed. `timings`
    gets the push's and the apply's seconds (ENGINE_PUSHED, APPLIED) and the teardown's: each
    kind's deletion, the wait for nothing left, the node's stop."""
    hub = plane.clusters.sources.hub if plane.clusters.sources else None
    assert hub is not None, "a real node needs the loopback sources"
    objects = load_fleet(QUICKSTART)[0]
    start_without(plane, objects, CLUSTER)
    engine_image = engine_image_for_nodes(plane, timings)
    caches = [o for o in objects if o["kind"] == "ModelCache"]
    applied: list[Json] = []
    with tiny_models_in_the_hub(hub, caches, revisions):
        try:
            if before_apply is not None:
                before_apply()
            started = time.monotonic()
            applied = apply_fleet(
                plane, QUICKSTART, edit=run_on_this_machine(engine_image), real_nodes=True
            )
            timings[APPLIED] = time.monotonic() - started
            yield QuickstartFleet(plane, applied)
        finally:
            try:
                if applied:
                    delete_fleet(plane, applied, timings)
                    started = time.monotonic()
                    wait_for_nothing_left(plane, seconds=timings)
                    timings["deleted: nothing left"] = time.monotonic() - started
            finally:
                started = time.monotonic()
                plane.clusters.discard(CLUSTER)
                timings["deleted: the node stopped"] = time.monotonic() - started


def settled(hub: Any) -> dict[str, int]:
    """The Hub's bytes served per file once none has moved for a second: a file whose last
    byte was just served may not be on the cache's disk yet, and a pod killed then fetches it
    again by right. (Short: the stalled GET must not reach the hydrator's 10 s read timeout.)"""
    last: dict[str, int] | None = None
    for _ in range(5):
        with hub.lock:
            now = dict(hub.bytes_served)
        if now == last:
            return now
        last = now
        time.sleep(1)
    raise AssertionError(f"the Hub kept serving while the weights stalled: {last}")


def seconds_between(start: str, end: str) -> float:
    """Seconds between two Kubernetes timestamps (RFC 3339, whole seconds)."""
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def node_of(fleet: QuickstartFleet) -> RealNode:
    node = fleet.plane.clusters.clusters[CLUSTER].node
    assert node is not None, f"{CLUSTER} is not a real node"
    return node


def items(fleet: QuickstartFleet, api: str, plural: str) -> list[Json]:
    return fleet.workload().list(resource_path(api, plural, WORKLOAD_NAMESPACE))


def hydration_pods(fleet: QuickstartFleet) -> list[Json]:
    return [p for p in items(fleet, "v1", "pods") if "job-name" in p["metadata"]["labels"]]


def serving_pods(fleet: QuickstartFleet) -> list[Json]:
    return [p for p in items(fleet, "v1", "pods") if "job-name" not in p["metadata"]["labels"]]


def exited_engines(fleet: QuickstartFleet) -> list[str]:
    """How each serving container that exited ended (its reason and exit code)."""
    return exited_containers(serving_pods(fleet))


def replica_address(fleet: QuickstartFleet) -> str:
    namespace = fleet.deployment["metadata"]["namespace"]
    replicas = fleet.plane.client.list(resource_path(GROUP_VERSION, "modelreplicas", namespace))
    addresses = [(r.get("status") or {}).get("address") or "" for r in replicas]
    return addresses[0] if len(addresses) == 1 else ""


def chat(fleet: QuickstartFleet, model: str) -> tuple[int, str]:
    return curl(node_of(fleet), f"{replica_address(fleet)}/chat/completions", {
        "model": model, "max_tokens": 8, "messages": [{"role": "user", "content": "Hello"}],
    })  # fmt: skip


def replica_phase(fleet: QuickstartFleet) -> str:
    namespace = fleet.deployment["metadata"]["namespace"]
    replicas = fleet.plane.client.list(resource_path(GROUP_VERSION, "modelreplicas", namespace))
    return str(((replicas[0] if replicas else {}).get("status") or {}).get("phase") or "")


def what_lasts(fleet: QuickstartFleet) -> tuple[set[str], set[str]]:
    """The lasting Objects on the control plane and the claims' uids on the cluster."""
    return fleet.lasting_objects(), fleet.uids("v1", "persistentvolumeclaims")


def running_containers(fleet: QuickstartFleet) -> dict[str, tuple[str, int]]:
    """Each pod's running containers: (container id, restart count) by pod uid/name."""
    return {
        f"{p['metadata']['uid']}/{s['name']}": (s.get("containerID", ""), s["restartCount"])
        for p in items(fleet, "v1", "pods")
        if p["status"].get("phase") == "Running"
        for s in p["status"].get("containerStatuses") or []
    }


def lease_renewed_since(fleet: QuickstartFleet, since: datetime) -> bool:
    """Whether the kubelet renewed its node Lease after `since` (it does every 10 s)."""
    lease = fleet.workload().get(
        resource_path("coordination.k8s.io/v1", "leases", "kube-node-lease", CLUSTER)
    )
    renewed = str(((lease or {}).get("spec") or {}).get("renewTime") or "")
    return bool(renewed) and datetime.fromisoformat(renewed) > since


@contextmanager
def port_forward(client: KubeClient, namespace: str, target: str, port: int) -> Iterator[str]:
    """`kubectl port-forward TARGET LOCAL:PORT` as a user runs it (a free local port);
    yields its base URL once it forwards, and fails with kubectl's words if it stopped."""
    local = free_port()
    forwarding = subprocess.Popen(
        [str(client.kubectl_binary), "--kubeconfig", str(client.config.path),
         "-n", namespace, "port-forward", target, f"{local}:{port}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{local}"
    try:

        def forwards() -> bool:
            assert forwarding.poll() is None, "kubectl port-forward exited"
            return local_request(base)[0] > 0

        wait_for(forwards, what=f"kubectl port-forward {target}", timeout=60, every=1)
        yield base
    finally:
        forwarding.terminate()
        _, errors = forwarding.communicate(timeout=30)
        if forwarding.returncode not in (0, -15):
            raise AssertionError(f"kubectl port-forward: {errors.strip()}")


def local_request(url: str, body: Json | None = None) -> tuple[int, Any]:
    """An HTTP request from this host: (status, the JSON body or its text); status 0 when
    nothing answered."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answered:
            status, text = answered.status, answered.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    except OSError:
        return 0, ""
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


def staged_on_real_nodes(plane: RealControlPlane, caches: Sequence[Json]) -> tuple[int, list[str]]:
    """Check the copy every Ready row of `caches` (read from the control plane) names, in the
    directory of its claim's hostPath volume on the row's real node (staged.check_row);
    (the copies checked, what is wrong with them)."""
    sources = plane.clusters.sources
    assert sources is not None
    checked, problems = 0, []
    for cache in caches:
        for row in (cache.get("status") or {}).get("clusters") or []:
            if row.get("phase") != "Ready" or not row.get("claimName"):
                continue
            client = plane.clusters.clusters[row["name"]].client
            claims = [
                c
                for c in client.list(resource_path("v1", "persistentvolumeclaims"))
                if c["metadata"]["name"] == row["claimName"]
            ]
            if len(claims) != 1:
                problems.append(f"{row['name']}: {len(claims)} claims {row['claimName']}")
                continue
            volume = client.get(
                resource_path("v1", "persistentvolumes", name=claims[0]["spec"]["volumeName"])
            )
            path = Path(((volume or {}).get("spec") or {}).get("hostPath", {}).get("path", "/-"))
            row_checked, row_problems = check_row(cache, row, path, sources)
            checked += row_checked
            problems += row_problems
    return checked, problems


def served_name(container: Json) -> str:
    """The name a composed vLLM engine container serves under: its `--served-model-name`,
    else the model `vllm serve` is given first (vLLM's own default)."""
    args = [str(a) for a in container.get("args") or []]
    return served_name_in_args(args) or (args[0] if args and args[0][:1] != "-" else "")


def replicas_answer(
    plane: RealControlPlane, namespaces: Iterable[str]
) -> dict[str, tuple[str, Answers]]:
    """Every ModelReplica of `namespaces` asked, from inside its cluster's network, at its
    `status.address` (in_cluster.ask) for the name its engine serves (served_name, read
    from the Deployment it composed on its real node): that name and the answers, by
    replica."""
    answers = {}
    for namespace in sorted(set(namespaces)):
        for replica in plane.client.list(resource_path(GROUP_VERSION, "modelreplicas", namespace)):
            name = replica["metadata"]["name"]
            cluster = plane.clusters.clusters[replica["spec"]["clusterName"]]
            assert cluster.node is not None, f"{name}: {cluster.name} is not a real node"
            composed = [
                d
                for d in cluster.client.list(resource_path("apps/v1", "deployments"))
                if (d["metadata"].get("labels") or {}).get(kind_label("ModelReplica")) == name
            ]
            assert len(composed) == 1, f"{name}: {len(composed)} Deployments on {cluster.name}"
            (engine,) = composed[0]["spec"]["template"]["spec"]["containers"]
            address = (replica.get("status") or {}).get("address") or ""
            assert address, f"{name} reports no address"
            served = served_name(engine)
            answers[f"{namespace}/{name}"] = (served, ask(cluster.node, address, served))
    return answers


@contextmanager
def examples_on_real_nodes(
    plane: RealControlPlane, examples: Sequence[str], timings: dict[str, float]
) -> Iterator[Callable[[Json], None]]:
    """Before examples are applied on real nodes: what an earlier module left of them, and
    stand-in clusters of their names, deleted; the CPU engine image pushed; the tiny model
    served as every Hub repo their caches stage. Yields the edit that makes them fit this
    machine (run_on_this_machine); afterwards their nodes are removed, however far the
    apply got, and the Hub's repos put back."""
    hub = plane.clusters.sources.hub if plane.clusters.sources else None
    assert hub is not None, "a real node needs the loopback sources"
    objects = [o for example in examples for o in load_fleet(EXAMPLES_DIR / example)[0]]
    clusters = [o["metadata"]["name"] for o in objects if o["kind"] == "InferenceCluster"]
    for cluster in clusters:
        start_without(plane, objects, cluster)
    engine_image = engine_image_for_nodes(plane, timings)
    with tiny_models_in_the_hub(hub, [o for o in objects if o["kind"] == "ModelCache"]):
        try:
            yield run_on_this_machine(engine_image)
        finally:
            for cluster in clusters:
                plane.clusters.discard(cluster)
