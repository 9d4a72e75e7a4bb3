"""A Ready cluster stays Ready through the handover to shards, whatever the order in which
the ModelCache and its shard reconcile and whatever its InferenceCluster reports meanwhile:
no row lapses out of Ready and no hydration Job is composed for a copy that is Ready.

Each case is the world at each step of one interleaving: who reconciles (the ModelCache, or
its shard with its cluster as Crossplane resolved it: None on the first call of its
required-resources loop, else connected or not), and what must be reported (the cluster's
phase in the reconciling XR's status) and composed (never the hydration Job). Between steps
each XR's status is what its last response wrote, the shard's spec what the ModelCache last
composed, and the old Objects what the handover left of them."""

from dataclasses import dataclass
from typing import Any

import pytest
from cache_world import NOW, keys, model_cache
from compose_model_cache.cache.fleet import compose_fleet
from compose_model_cache.cache.handover import LegacyObject
from compose_model_cache.cache.shards import ObservedShard, shard_key
from compose_model_cache.shard.core import compose_shard
from modelfleet_contracts.clusters import read_cluster
from modelfleet_contracts.observed import Condition, ObservedObject
from modelfleet_devtools.world import inference_cluster

CLAIM, CREDS, JOB = keys("gke-us")
FINGERPRINT = JOB.rpartition("-")[2]
LABELS = {"modelfleet.io/region": "us"}
BOUND = ObservedObject(ready=True, remote_seen=True, remote_phase="Bound")
COMPLETE = ObservedObject(
    ready=True, remote_seen=True, remote_conditions=(Condition("Complete", "True"),)
)

# The shard's cluster as Crossplane resolves it for one call.
UNRESOLVED = None  # the first call of its required-resources loop
CONNECTED = "connected"
DISCONNECTED = "disconnected"  # a status flap while its InferenceCluster is upgraded
NO_STORAGE = "storage not ready"

CACHE = "cache"
SHARD = "shard"


def cluster(state: str) -> dict[str, Any]:
    if state == DISCONNECTED:
        return inference_cluster("gke-us", labels=LABELS, connected=False)
    if state == NO_STORAGE:
        return inference_cluster("gke-us", labels=LABELS, storage_ready=False)
    return inference_cluster("gke-us", labels=LABELS)


def old(facts: ObservedObject) -> LegacyObject:
    """An Object the release before shards composed on the ModelCache for gke-us."""
    spec = {
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "gke-us"},
        "forProvider": {"manifest": {"apiVersion": "v1", "kind": "Thing"}},
    }
    return LegacyObject(facts, spec)


@dataclass
class World:
    """The ModelCache, its shard and the old Objects between reconciles."""

    cache: dict[str, Any]
    legacy: dict[str, LegacyObject]
    shard: dict[str, Any] | None = None
    shard_observed: dict[str, ObservedObject] | None = None

    @classmethod
    def upgraded(cls) -> "World":
        """What the release before shards left: gke-us staged, Ready; its Job finished."""
        cache = model_cache(clusterSelector={"matchLabels": LABELS})
        cache["status"] = {
            "clusters": [
                {
                    "name": "gke-us",
                    "phase": "Ready",
                    "fingerprint": FINGERPRINT,
                    "bytesTotal": 4194386,
                }
            ]
        }
        return cls(cache, {CLAIM: old(BOUND), CREDS: old(BOUND), JOB: old(COMPLETE)})

    def reconcile_cache(self, state: str) -> tuple[str, set[str]]:
        shards = {}
        if self.shard is not None:
            rows = (self.shard.get("status") or {}).get("clusters") or []
            shards[shard_key(0)] = ObservedShard(
                tuple(e["name"] for e in self.shard["spec"]["clusters"]),
                {r["name"]: r for r in rows},
            )
        outcome = compose_fleet(
            self.cache, [read_cluster(cluster(state))], shards, self.legacy, now=NOW
        )
        assert not outcome.keep_everything
        self.cache["status"] = outcome.status
        desired = outcome.desired[shard_key(0)]
        assert isinstance(desired, dict)
        status = self.shard.get("status") if self.shard else None
        self.shard = {
            "apiVersion": desired["apiVersion"],
            "kind": desired["kind"],
            "metadata": {"name": "qwen-x1y2z", "namespace": "ml-team"},
            "spec": desired["spec"],
            **({"status": status} if status else {}),
        }
        # What the handover composed again (Observe-only) or kept stays; the rest goes.
        self.legacy = {
            key: LegacyObject(obj.facts, desired_object["spec"])
            if isinstance(desired_object := outcome.desired.get(key), dict)
            else obj
            for key, obj in self.legacy.items()
            if key in outcome.desired or key in outcome.kept
        }
        assert outcome.status is not None
        return _phase(outcome.status), set(outcome.desired)

    def reconcile_shard(self, state: str | None) -> tuple[str, set[str]]:
        assert self.shard is not None, "the ModelCache composes its shard first"
        clusters = None if state is None else [read_cluster(cluster(state))]
        observed = self.shard_observed or {}
        outcome = compose_shard(self.shard, clusters, observed)
        if outcome.keep_everything:
            return _phase(self.shard.get("status") or {}), set(observed)
        self.shard["status"] = outcome.status
        # The claim it composes is the PVC that is there: provider-kubernetes finds it Bound.
        self.shard_observed = {CLAIM: BOUND} if CLAIM in outcome.desired else {}
        assert outcome.status is not None
        return _phase(outcome.status), set(outcome.desired)


def _phase(status: dict[str, Any]) -> str:
    rows = {r["name"]: r["phase"] for r in status.get("clusters") or []}
    return rows.get("gke-us", "unreported")


# (who reconciles, the cluster as resolved then, the phase it must report for gke-us)
Step = tuple[str, str | None, str]

CALM: list[Step] = [
    (CACHE, CONNECTED, "Ready"),
    (SHARD, UNRESOLVED, "unreported"),
    (SHARD, CONNECTED, "Ready"),
    (CACHE, CONNECTED, "Ready"),
    (SHARD, CONNECTED, "Ready"),
    (CACHE, CONNECTED, "Ready"),
    (CACHE, CONNECTED, "Ready"),
]


def flap(state: str) -> list[Step]:
    """The shard's first full reconcile finds its cluster unable to stage for a moment;
    the ModelCache reads that report; then the cluster comes back."""
    return [
        (CACHE, CONNECTED, "Ready"),
        (SHARD, UNRESOLVED, "unreported"),
        (SHARD, state, "Ready"),
        (CACHE, state, "Ready"),
        (CACHE, CONNECTED, "Ready"),
        (SHARD, CONNECTED, "Ready"),
        (CACHE, CONNECTED, "Ready"),
        (SHARD, CONNECTED, "Ready"),
        (CACHE, CONNECTED, "Ready"),
    ]


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(CALM, id="calm: the shard latches the handed Ready row"),
        pytest.param(
            flap(DISCONNECTED),
            id="the cluster flaps to not connected at the shard's first full reconcile",
        ),
        pytest.param(
            flap(NO_STORAGE),
            id="its storage flaps to not ready at the shard's first full reconcile",
        ),
        pytest.param(
            [
                (CACHE, DISCONNECTED, "Ready"),
                (SHARD, UNRESOLVED, "unreported"),
                (SHARD, DISCONNECTED, "Ready"),
                (SHARD, DISCONNECTED, "Ready"),
                (CACHE, DISCONNECTED, "Ready"),
                (SHARD, CONNECTED, "Ready"),
                (CACHE, CONNECTED, "Ready"),  # its old Objects turn Observe-only only now
                (SHARD, CONNECTED, "Ready"),
                (CACHE, CONNECTED, "Ready"),
            ],
            id="not connected from the upgrade on, then back",
        ),
    ],
)
def test_a_ready_cluster_stays_ready_through_the_handover_whatever_the_interleaving(steps):
    world = World.upgraded()
    for number, (who, state, must_report) in enumerate(steps, 1):
        if who == CACHE:
            assert state is not None
            phase, composed = world.reconcile_cache(state)
        else:
            phase, composed = world.reconcile_shard(state)
        where = f"step {number} ({who}, cluster {state})"
        assert phase == must_report, f"{where}: gke-us reported {phase}"
        if who == SHARD:
            assert JOB not in composed, f"{where}: a hydration Job composed for a Ready copy"
    # The handover is done: the shard reports the cluster Ready and the old Objects are gone
    # (their remote objects stay: they were Observe-only when left out).
    assert not world.legacy, f"old Objects not handed over: {sorted(world.legacy)}"
    assert world.shard is not None
    assert all("staged" not in e for e in world.shard["spec"]["clusters"])


def test_a_shard_that_reported_a_handed_cluster_short_of_ready_latches_it_at_its_next_reconcile():
    """Whatever made a shard report a handed Ready cluster short of Ready, the ModelCache
    keeps its Ready row and keeps handing it, with the old claim, until the shard reports
    the cluster Ready; the shard latches it from the handed row, composing no Job."""
    world = World.upgraded()
    world.reconcile_cache(CONNECTED)
    assert world.shard is not None
    world.shard["status"] = {
        "clusters": [
            {
                "name": "gke-us",
                "phase": "Pending",
                "fingerprint": FINGERPRINT,
                "message": "creating claim",
            }
        ]
    }
    assert world.reconcile_cache(CONNECTED)[0] == "Ready"
    (entry,) = world.shard["spec"]["clusters"]
    assert entry["staged"]["phase"] == "Ready"
    assert CLAIM in world.legacy and world.legacy[CLAIM].observe_only
    phase, composed = world.reconcile_shard(CONNECTED)
    assert (phase, JOB in composed) == ("Ready", False)
    assert world.reconcile_cache(CONNECTED)[0] == "Ready"
    assert world.reconcile_cache(CONNECTED)[0] == "Ready"
    assert not world.legacy
