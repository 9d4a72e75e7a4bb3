"""Upgrading Modelfleet in place loses nothing, on the real control plane.

The control plane starts with the previous release installed from its own packages and served by
its own functions (modelfleet_devtools.e2e.release.PREVIOUS_RELEASE, a commit of this
repository, in an environment from its own uv.lock). A small fleet is staged with it: two
InferenceClusters, a ModelCache over both, a ModelDeployment serving from it. Then the platform
team's upgrade (modelfleet_devtools.e2e.upgrade): the current release's Function packages and
Configuration (XRDs, Compositions), its functions in place of the previous ones. Until every XR
has been answered twice by the current release's functions, and a while after, the cache stays
Ready on every cluster and serving stays available; afterwards no claim or lasting Object was
deleted or re-created, no hydration Job ran (no byte downloaded again), and the serving
Deployments are the same objects with the same pod template, but for what this release changes
in every serving pod on purpose (SERVING_CHANGES): the Deployments roll once for that, in place.
Then a replica the previous release composed, with the Usages it composed then, is scaled away:
it is gone, Usages and all, rather than Terminating for good.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_devtools.e2e.batches import interfere
from modelfleet_devtools.e2e.fleet import (
    CONTROL_PLANE_LEFTOVERS,
    ServedFleet,
    apply_fleet,
    condition,
    delete_fleet,
    load_fleet,
    xr_path,
)
from modelfleet_devtools.e2e.functions import calls_answered, process_name
from modelfleet_devtools.e2e.kube import ApiError, resource_path
from modelfleet_devtools.e2e.played import PLAYED_EXAMPLES
from modelfleet_devtools.e2e.processes import wait_for
from modelfleet_devtools.e2e.release import current_release
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.e2e.upgrade import upgrade
from modelfleet_devtools.paths import EXAMPLES_DIR

Json = dict[str, Any]
EXAMPLES = PLAYED_EXAMPLES  # the upgrade fleet shares the control plane with these
NAMESPACE = "upgrade-team"
CLUSTERS = ("upgrade-a", "upgrade-b")
OBJECTS = resource_path("kubernetes.m.crossplane.io/v1alpha1", "objects")
DEPLOYMENTS = resource_path("apps/v1", "deployments")
CLAIMS = resource_path("v1", "persistentvolumeclaims")
# What a finished hydration lets go by design (not a loss when it goes).
HYDRATION_KINDS = frozenset({"Job", "ServiceAccount", "Role", "RoleBinding"})
POKE = "e2e.modelfleet.io/upgrade-poke"
CACHE_LABEL = "modelfleet.io/modelcache"


def remote_kind_and_name(obj: Json) -> str:
    manifest = obj["spec"]["forProvider"]["manifest"]
    return f"{manifest.get('kind')}/{manifest.get('metadata', {}).get('name')}"


SETTLE_SECONDS = 6  # watched after the second answer: provider-kubernetes polls every 2 s


def fleet_objects() -> list[Json]:
    selector = {"matchLabels": {"modelfleet.io/fleet": "upgrade"}}
    clusters = [
        {
            "apiVersion": "modelfleet.io/v1alpha1",
            "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": {"modelfleet.io/fleet": "upgrade"}},
            "spec": {
                "connection": {"providerConfigName": name},
                "workloadNamespace": "modelfleet",
                "storage": {"storageClassName": "filestore-rwx"},
                "nodePools": [
                    {
                        "name": "l4",
                        "nodeCount": 1,
                        "gpu": {"count": 1, "memoryGiB": 24, "product": "NVIDIA-L4"},
                    }
                ],
            },
        }
        for name in CLUSTERS
    ]
    meta = {"name": "qwen3-0-6b", "namespace": NAMESPACE}
    cache = {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelCache",
        "metadata": meta,
        "spec": {
            "source": "HuggingFace",
            "huggingFace": {"repo": "Qwen/Qwen3-0.6B", "revision": "main"},
            "sizeGiB": 5,
            "clusterSelector": selector,
        },
    }
    deployment = {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": meta,
        "spec": {
            "replicas": 2,  # one node per cluster: one replica on each
            "clusterSelector": selector,
            "modelCacheRef": {"name": "qwen3-0-6b"},
            "resources": {"gpusPerNode": 1, "vramGiB": 10},
            "engine": {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0", "port": 8000},
        },
    }
    return [*clusters, cache, deployment]


class Fleet(ServedFleet):
    def replicas(self) -> list[Json]:
        path = resource_path("modelfleet.io/v1alpha1", "modelreplicas", NAMESPACE)
        return self.plane.client.list(path)

    def xrs(self) -> list[Json]:
        """Every XR of the fleet as it is now, the ModelReplicas its deployment composed too."""
        return [self.get(o) for o in self.objects] + self.replicas()

    def workload(self, cluster: str) -> Any:
        return self.plane.clusters.clusters[cluster].client

    def not_serving(self) -> list[str]:
        """Why the fleet is not staged and serving everywhere (empty when it is)."""
        why = []
        for xr in (self.cache, self.deployment):
            ready = condition(self.get(xr), "Ready")
            if ready.get("status") != "True":
                why.append(f"{xr['kind']} not Ready: {ready}")
        rows = (self.get(self.cache).get("status") or {}).get("clusters") or []
        phases = {r.get("name"): r.get("phase") for r in rows}
        if phases != dict.fromkeys(CLUSTERS, "Ready"):
            why.append(f"cache rows {phases}")
        for cluster in CLUSTERS:
            serving = self.workload(cluster).list(DEPLOYMENTS)
            available = [d for d in serving if d.get("status", {}).get("availableReplicas", 0) >= 1]
            if not available:
                why.append(f"nothing available on {cluster}: {[d['status'] for d in serving]}")
        return why

    def snapshot(self) -> Json:
        """What must come through the upgrade unchanged."""
        objects = [
            o
            for o in self.plane.client.list(OBJECTS)
            if o["spec"]["forProvider"]["manifest"].get("kind") not in HYDRATION_KINDS
            and not o["metadata"].get("deletionTimestamp")  # one being deleted is as good as gone
        ]
        # A cache's Objects may move to its shards (releases before shards composed them on
        # the cache itself): what must last is what they manage on the clusters, each still
        # managed (`claims` checks the claims' UIDs). Every other Object must be the same one.
        lasting = {
            o["metadata"]["name"]: o["metadata"]["uid"]
            for o in objects
            if CACHE_LABEL not in (o["metadata"].get("labels") or {})
        }
        managed = {
            f"{o['spec']['providerConfigRef']['name']}/{remote_kind_and_name(o)}": True
            for o in objects
            if CACHE_LABEL in (o["metadata"].get("labels") or {})
        }
        claims, serving = {}, {}
        for cluster in CLUSTERS:
            for claim in self.workload(cluster).list(CLAIMS):
                claims[f"{cluster}/{claim['metadata']['name']}"] = claim["metadata"]["uid"]
            for d in self.workload(cluster).list(DEPLOYMENTS):
                serving[f"{cluster}/{d['metadata']['name']}"] = (
                    d["metadata"]["uid"],
                    yaml.safe_dump(without_serving_changes(d["spec"]["template"]), sort_keys=True),
                )
        stand_ins = [self.plane.clusters.clusters[c].stand_in for c in CLUSTERS]
        return {
            "lasting Objects": lasting,
            "what the cache's Objects manage": managed,
            "claims": claims,
            "serving Deployments": serving,
            "hydration Jobs run": sorted(
                f"{s.name}: {job}" for s in stand_ins for job in s.hydrations.values()
            ),
            "bytes fetched": sum(s.bytes_fetched for s in stand_ins),
        }


# What upgrading from the previous release changes in every serving pod, on purpose
# (docs/modeldeployment.md, "Upgrading"): the name clients send (vLLM's --served-model-name and
# MODELFLEET_SERVED_MODEL_NAME), readiness probed on the HTTP endpoint, and `vllm serve` with the
# model as its positional argument in place of the deprecated API server entrypoint and its
# --model. Nothing else of a pod may change. Empty this once PREVIOUS_RELEASE has them.
SERVING_CHANGES = {
    "args": ("--served-model-name", "--model=", "/mnt/models/"),
    "env": ("MODELFLEET_SERVED_MODEL_NAME",),
    "fields": ("readinessProbe", "command"),
}


def without_serving_changes(template: Json) -> Json:
    """The pod template less what SERVING_CHANGES lets the upgrade change."""
    template = yaml.safe_load(yaml.safe_dump(template))
    for container in template["spec"].get("containers") or []:
        container["args"] = [
            a for a in container.get("args") or [] if not a.startswith(SERVING_CHANGES["args"])
        ]
        container["env"] = [
            e for e in container.get("env") or [] if e.get("name") not in SERVING_CHANGES["env"]
        ]
        for field in SERVING_CHANGES["fields"]:
            container.pop(field, None)
    return template


class Watch:
    """Polls, on its own thread, that the fleet stays staged and serving; keeps each lapse."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet, self.lapses, self.polls = fleet, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="upgrade-watch", daemon=True)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set():
            try:
                why = self.fleet.not_serving()
            except Exception as error:  # an API server too busy to answer is no lapse
                why = [] if "timed out" in str(error) else [repr(error)]
            if why:
                self.lapses.append(f"{time.monotonic() - started:.0f}s: {'; '.join(why)}")
            self.polls += 1
            self._stop.wait(2)


def answered(plane: RealControlPlane) -> Counter[tuple[str, str, str]]:
    """Calls the current release's function processes answered, per XR."""
    total: Counter[tuple[str, str, str]] = Counter()
    for function in plane.endpoints:
        total += calls_answered(plane.work, process_name(plane.release, function))
    return total


def key(xr: Json) -> tuple[str, str, str]:
    meta = xr["metadata"]
    return (xr["kind"], meta.get("namespace", ""), meta["name"])


def answered_twice_each(fleet: Fleet) -> None:
    """Each XR of the fleet answered twice more by the current release's functions: poked
    (an annotation, as `kubectl annotate` does) so that Crossplane reconciles it now rather
    than when its function's TTL (a minute; ten for a settled InferenceCluster) runs out."""
    plane = fleet.plane
    before = answered(plane)
    for round_ in (1, 2):
        xrs = fleet.xrs()
        for xr in xrs:
            plane.client.merge_patch(
                xr_path(xr), {"metadata": {"annotations": {POKE: str(round_)}}}
            )

        def done(xrs: list[Json] = xrs, round_: int = round_) -> bool:
            plane.check_alive()
            now = answered(plane)
            return all(now[key(x)] - before[key(x)] >= round_ for x in xrs)

        wait_for(done, what=f"answer {round_} of the current functions to every XR",
                 timeout=120, every=1)  # fmt: skip


@pytest.fixture
def fleet(previous_release_plane: RealControlPlane, tmp_path: Path) -> Iterator[Fleet]:
    plane = previous_release_plane
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump_all(fleet_objects()))
    staged = Fleet(plane, apply_fleet(plane, tmp_path))
    try:
        yield staged
    finally:
        # Deleted alongside the next test (no example's selector or names meet this fleet's:
        # test_the_fleet_interferes_with_no_example), which the session's end waits for.
        plane.in_background("deleting the upgrade fleet", lambda: delete(staged))


def leftovers(plane: RealControlPlane) -> list[str]:
    """What of this fleet is still on the control plane (by the labels every composed
    resource carries)."""
    left = []
    for api, plural in CONTROL_PLANE_LEFTOVERS:
        try:
            items = plane.client.list(resource_path(api, plural))
        except ApiError as error:
            if error.status != 404:  # a kind not installed holds nothing
                raise
            continue
        for item in items:
            labels = item["metadata"].get("labels") or {}
            if (
                item["metadata"].get("namespace") == NAMESPACE
                or labels.get("modelfleet.io/namespace") == NAMESPACE
                or labels.get("modelfleet.io/inferencecluster") in CLUSTERS
            ):
                left.append(
                    f"{plural} {item['metadata'].get('namespace')}/{item['metadata']['name']}"
                )
    return left


def delete(fleet: Fleet) -> None:
    plane = fleet.plane
    try:
        delete_fleet(plane, fleet.objects)
        wait_for(lambda: not leftovers(plane), what="nothing of the upgrade fleet left",
                 timeout=180, every=2)  # fmt: skip
    finally:
        for name in CLUSTERS:
            plane.clusters.discard(name)


def test_the_fleet_interferes_with_no_example() -> None:
    examples = [o for e in EXAMPLES for o in load_fleet(EXAMPLES_DIR / e)[0]]
    assert not interfere(fleet_objects(), examples)


def test_upgrading_from_the_previous_release_loses_nothing(fleet: Fleet) -> None:
    plane = fleet.plane
    previous = plane.release
    started = time.monotonic()
    wait_for(lambda: not fleet.not_serving(), what="the fleet staged and serving by the "
             f"previous release ({previous.root.name})", timeout=300, every=2)  # fmt: skip
    before = fleet.snapshot()
    assert before["claims"] and before["serving Deployments"] and before["hydration Jobs run"]
    # The previous release's Jobs ran its own hydrator image, as containers, from the Hub.
    simulated = {c: plane.clusters.clusters[c].stand_in.simulated for c in CLUSTERS}
    assert not any(simulated.values()), f"hydration Jobs no container ran: {simulated}"
    phases = {"staged by the previous release": time.monotonic() - started}
    with Watch(fleet) as watch:
        upgrade(plane, current_release())
        phases["upgraded"] = time.monotonic() - started
        answered_twice_each(fleet)
        phases["answered twice"] = time.monotonic() - started
        time.sleep(SETTLE_SECONDS)
    after = fleet.snapshot()
    print("upgrade scenario:", ", ".join(f"{k} at {v:.0f}s" for k, v in phases.items()))
    assert watch.polls > 3 and not watch.lapses, f"stopped during the upgrade: {watch.lapses}"
    for what, was in before.items():
        now = after[what]
        if isinstance(was, dict):
            lost = {k: v for k, v in was.items() if now.get(k) != v}
            assert not lost, f"{what} deleted, re-created or changed: {lost} (now {now})"
        else:
            assert now == was, f"{what}: {was} before the upgrade, {now} after"
    assert not plane.clusters.stand_ins.errors()
    scaled_away_without_a_deadlock(fleet)


def scaled_away_without_a_deadlock(fleet: Fleet) -> None:
    """Scaled to one replica, the deployment drops a replica the previous release composed
    (Crossplane deletes it in the foreground); that replica and every Usage `by` it go."""
    plane = fleet.plane
    plane.client.merge_patch(xr_path(fleet.deployment), {"spec": {"replicas": 1}})
    usages = resource_path("protection.crossplane.io/v1beta1", "usages", NAMESPACE)
    left: list[str] = []

    def one_replica_and_its_usages_left() -> bool:
        replicas = {r["metadata"]["name"] for r in fleet.replicas()}
        by = {
            f"Usage {u['metadata']['name']} by {u['spec']['by']['resourceRef']['name']} "
            f"(deletionTimestamp {u['metadata'].get('deletionTimestamp')})"
            for u in plane.client.list(usages)
            if (u["spec"].get("by") or {}).get("kind") == "ModelReplica"
            and u["spec"]["by"]["resourceRef"]["name"] not in replicas
            and not u["spec"]["by"]["resourceRef"]["name"].startswith("Retired-")
        }
        left[:] = [
            f"ModelReplica {r['metadata']['name']} (deletionTimestamp "
            f"{r['metadata'].get('deletionTimestamp')})"
            for r in fleet.replicas()
        ] + sorted(by)
        return len(replicas) == 1 and not by

    try:
        wait_for(one_replica_and_its_usages_left, what="the scaled-away replica gone",
                 timeout=120, every=2)  # fmt: skip
    except TimeoutError as error:
        raise AssertionError(f"{error}; still there: {left}") from None
