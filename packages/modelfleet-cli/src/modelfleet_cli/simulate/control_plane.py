"""The simulated control plane: Crossplane's composite reconciler, round after round.

Each round every XR (user XRs first, then the XRs they compose, such as ModelReplicas) is
reconciled once through its Composition's pipeline (`modelfleet_cli.pipeline`), with its
observed composed resources as the simulated providers report them and required resources
resolved from the control plane's current objects. Desired resources are created or updated;
resources a function leaves out are deleted, as Crossplane does. Then the providers apply
managed resources to the workload clusters, the clusters' controllers act, and the providers
observe the result. Crossplane Usages are honoured: deleting a resource in use is refused
(and, with `replayDeletion`, carried out once its last Usage is gone).

`ControlPlane` holds the state; applying a pipeline's result (composing.py) and deleting
(deletion.py) are its methods, defined beside the state they read.
"""

import copy
import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import (
    API_VERSION,
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    OBJECT_API_VERSION,
    PROVIDER_CONFIG_KIND,
)
from modelfleet_contracts.conditions import Status, condition_true
from modelfleet_contracts.fields import mapping_at, mapping_path

from modelfleet_cli.discovery import composition_for
from modelfleet_cli.pipeline import Caller, PipelineResult, run_pipeline
from modelfleet_cli.simulate import clock, names, usages
from modelfleet_cli.simulate import faults as f
from modelfleet_cli.simulate.composing import Composing
from modelfleet_cli.simulate.fleet import Fleet, xr_id
from modelfleet_cli.simulate.objects import (
    Key,
    in_listing_order,
    in_reconcile_order,
    is_namespace_object,
    key_of,
    stored_secret,
)
from modelfleet_cli.simulate.provider import Providers, is_managed
from modelfleet_cli.simulate.records import Event, Loss, Refusal
from modelfleet_cli.simulate.store import Store
from modelfleet_cli.simulate.workload import HydrationFault, WorkloadCluster
from modelfleet_cli.xr_conditions import RESPONSIVE, set_conditions

START = datetime(2025, 1, 1, tzinfo=UTC)


MAX_REQUEUES = 2  # per round; a requeued XR changes composed specs, not composed statuses


@dataclass
class ControlPlane(Composing):
    fleet: Fleet
    compositions: list[dict[str, Any]]
    call: Caller
    clusters: dict[str, WorkloadCluster]
    faults: list[f.Fault] = field(default_factory=list)
    store: Store = field(default_factory=Store)
    refs: dict[Key, dict[str, Key]] = field(default_factory=dict)
    roots: dict[Key, Key] = field(default_factory=dict)
    losses: list[Loss] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    # Usages that refused a deletion and replay it once deleted: Usage -> the object in use.
    deletion_attempts: dict[Key, Key] = field(default_factory=dict)
    applied: dict[str, int] = field(default_factory=dict)  # fault -> round first applied
    # fault -> the round it first changed something (a fault whose target never showed up
    # while it was active did not test anything)
    took_effect: dict[str, int] = field(default_factory=dict)
    # None: composed resources are applied sorted by name; a Random shuffles that order
    # (reproducibly, per seed), as a real function may return them in any order.
    order: random.Random | None = None
    round: int = 0
    # Told of each step of a round (what, how many done, of how many): progress to show.
    on_step: Callable[[str, int, int], None] = lambda what, done, total: None
    _current: Key | None = None
    _serial: int = 0
    deleting_depth: int = 0  # depth of nested delete() calls (an XR takes its children)
    pending_replays: list[tuple[Key, str]] = field(default_factory=list)
    # XR -> the TTL in whole seconds its last reconcile's responses asked for (None: none
    # asked, or the pipeline failed): how soon a real Crossplane would run it again unless
    # something it watches changes first.
    recheck_after: dict[Key, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.pc_cluster: dict[str, str] = {}
        # When each XR was last reconciled, and last changed status (a running count of
        # reconciles), to requeue XRs whose composed XRs changed after them.
        self._sequence = 0
        self._reconciled: dict[Key, int] = {}
        self._changed: dict[Key, int] = {}
        self.hydration_faults: dict[f.Fault, HydrationFault] = {}
        self._added_xrs: list[Key] = []  # XRs added since the reconcile loop last looked
        for ic in self.fleet.xrs:
            if ic["kind"] != INFERENCE_CLUSTER:
                continue
            connection = mapping_path(ic, "spec", "connection")
            named = connection.get("providerConfigName")
            self.pc_cluster[str(named or ic["metadata"]["name"])] = ic["metadata"]["name"]
            if named:  # the platform team's provider config, assumed to exist
                self._put(
                    {
                        "apiVersion": OBJECT_API_VERSION,
                        "kind": PROVIDER_CONFIG_KIND,
                        "metadata": {"name": str(named)},
                        "spec": {"credentials": {"source": "InjectedIdentity"}},
                    }
                )
        for secret in self.fleet.secrets:
            self._put(stored_secret(secret))
        for xr in self.fleet.xrs:
            self._add_xr(copy.deepcopy(xr))
        for fault in self.faults:
            if fault.kind in (f.HYDRATION_FAILS, f.HYDRATION_FAILS_ALWAYS):
                if fault.target not in self.clusters:
                    continue  # nothing to fail there: the fault does not take effect
                failures = 1 if fault.kind == f.HYDRATION_FAILS else None
                self.hydration_faults[fault] = HydrationFault(failures)  # armed in its round
        self.providers = Providers(self.clusters, self._provider_config_cluster, self._secret)

    # --- the store ------------------------------------------------------------------------

    def xr_keys(self) -> list[Key]:
        return sorted((k for k in self.refs if k in self.store), key=in_listing_order)

    def _secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.store.get(("v1", "Secret", namespace, name))

    def _provider_config_cluster(self, name: str) -> str | None:
        exists = (
            OBJECT_API_VERSION,
            PROVIDER_CONFIG_KIND,
            "",
            name,
        ) in self.store  # cluster-scoped
        return self.pc_cluster.get(name) if exists else None

    # --- one round ------------------------------------------------------------------------

    def run_round(self) -> None:
        self.round += 1
        self._inject()
        self._reconcile_every_xr()
        self._requeue_parents()
        usages.mark_configured(self.store, self.now)
        # In the order they were created (composed resources sorted by name), Namespaces
        # first: the provider retries one whose namespace is not there within seconds.
        managed = [o for o in self.store.values() if is_managed(o)]
        managed.sort(key=lambda o: not is_namespace_object(o))
        for done, obj in enumerate(managed, 1):
            self.on_step("providers applying managed resources", done, len(managed))
            self.providers.sync(obj)
        for cluster in self.clusters.values():
            cluster.tick()
        for done, obj in enumerate(managed, 1):
            self.on_step("providers observing managed resources", done, len(managed))
            self.providers.observe(obj)
        for fault, hydration in self.hydration_faults.items():
            if hydration.attempts_failed:
                self._took_effect(fault)

    def _reconcile_every_xr(self) -> None:
        """Each XR once, in reconcile order; an XR composed meanwhile (a new ModelReplica)
        takes its place in that order. A heap, not a sort per reconcile: the fleet's size."""
        self._added_xrs.clear()  # those are in xr_keys() already
        queue = [(in_reconcile_order(k), k) for k in self.xr_keys()]
        heapq.heapify(queue)
        total = len(queue)
        done: set[Key] = set()
        while queue:
            _, key = heapq.heappop(queue)
            if key in done or key not in self.store:
                continue
            done.add(key)
            self.on_step(f"reconciling {xr_id(self.store[key])}", len(done), total)
            self.reconcile(key)
            for added in self._added_xrs:
                heapq.heappush(queue, (in_reconcile_order(added), added))
                total += 1
            self._added_xrs.clear()

    def _in_reconcile_order(self) -> list[Key]:
        return sorted(self.xr_keys(), key=in_reconcile_order)

    def _requeue_parents(self) -> None:
        """Crossplane requeues an XR when a resource it composed changes: an XR whose composed
        XR (a ModelDeployment's new ModelReplica) changed status after the XR's own reconcile
        is reconciled again, so that what it reports is not a round stale."""
        for _ in range(MAX_REQUEUES):
            stale = [
                key
                for key in self._in_reconcile_order()
                if any(
                    self._changed.get(child, -1) > self._reconciled.get(key, -1)
                    for child in self.refs.get(key, {}).values()
                )
            ]
            if not stale:
                return
            for key in stale:
                self.reconcile(key)

    def _active(self, kind: str) -> list[f.Fault]:
        return [x for x in self.faults if x.kind == kind and x.active(self.round)]

    def _active_on(self, kind: str, key: Key) -> bool:
        """Whether a fault of `kind` is active on the XR `key` now (it then takes effect)."""
        hits = [x for x in self._active(kind) if x.matches_xr(key[1], key[2], key[3])]
        for fault in hits:
            self._took_effect(fault)
        return bool(hits)

    def _took_effect(self, fault: f.Fault) -> None:
        self.took_effect.setdefault(fault.describe(), self.round)

    def _inject(self) -> None:
        """Faults that act at the start of a round: deletions and re-applies, and hydration
        faults armed on (or disarmed from) their cluster, whose Job attempts then fail."""
        for fault in self.faults:
            if fault.active(self.round):
                self.applied.setdefault(fault.describe(), self.round)
            if fault in self.hydration_faults:
                self._arm_hydration_fault(fault)
                continue
            if fault.kind == f.CLUSTER_DELETED:
                key: Key = (API_VERSION, INFERENCE_CLUSTER, "", fault.target)
            elif fault.kind == f.CACHE_DELETED:
                ns, _, name = fault.target.partition("/")
                key = (API_VERSION, MODEL_CACHE, ns, name)
            else:
                continue
            if self.round == fault.round and key in self.store:
                self._took_effect(fault)
                self.delete(key, f"fault {fault.describe()}")
            elif self.round == fault.until and key not in self.store:
                original = next(
                    (x for x in self.fleet.xrs if key_of(x) == key), None
                )  # the user applies it again
                if original is not None:
                    self._add_xr(copy.deepcopy(original))

    def _arm_hydration_fault(self, fault: f.Fault) -> None:
        armed = self.clusters[fault.target].hydration_faults
        hydration = self.hydration_faults[fault]
        if self.round == fault.round:
            armed.append(hydration)
        elif self.round == fault.until:
            armed[:] = [h for h in armed if h is not hydration]

    @property
    def now(self) -> datetime:
        """Simulate's clock: a minute per round, from START (the same stamps every run)."""
        return START + timedelta(minutes=self.round)

    def _call(self, name: str, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        key = self._current
        if key is not None and self._active_on(f.REQUIREMENT_UNRESOLVED, key):
            req = copy.deepcopy(req)
            req.ClearField("required_resources")
        return self.call(name, req)

    def reconcile(self, key: Key) -> None:
        xr = self.store[key]
        composition = composition_for(xr, self.compositions)
        if composition is None:
            raise RuntimeError(f"no Composition for {xr_id(xr)}")
        # What another XR controls is not this XR's to observe (nor to delete). Not copied:
        # run_pipeline only reads what it observes (a copy per reconcile cost a third of a
        # round at a hundred clusters).
        uid = mapping_at(xr, "metadata").get("uid")
        observed = {
            name: self.store[k]
            for name, k in self.refs[key].items()
            if k in self.store and names.controller_uid(self.store[k]) in ("", uid)
        }
        if self._active_on(f.OBSERVED_MISSING, key):
            observed = {}
        now = self.now
        set_conditions(xr, [RESPONSIVE], now)
        self._current = key
        try:
            result = run_pipeline(
                xr,
                composition,
                self._call,
                observed=observed,
                required_pool=self.store,
                context=clock.simulated_context(now),
                now=now,
            )
        finally:
            self._current = None
        self._record_results(xr, result)
        ttl = result.ttl
        self.recheck_after[key] = None if ttl is None else clock.whole_seconds(ttl)
        self.store[key] = result.composite
        self._sequence += 1
        self._reconciled[key] = self._sequence
        if result.composite.get("status") != xr.get("status"):
            self._changed[key] = self._sequence
        flapping = [x for x in self._active(f.CLUSTER_FLAPS) if x.target == key[3]]
        if key[1] == INFERENCE_CLUSTER and flapping:
            self._flap(result.composite)
            for fault in flapping:
                self._took_effect(fault)
        if result.fatal is not None:
            return  # nothing applied, nothing deleted
        for name in result.unready():
            # What Crossplane v2.3 emits on every reconcile for each composed resource a
            # function did not say is ready.
            message = f'Composed resource "{name}" is not yet ready'
            self.events.append(Event(self.round, xr_id(xr), "Normal", message))
        self._apply_desired(key, result, set(observed))

    def _record_results(self, xr: dict[str, Any], result: PipelineResult) -> None:
        severities = {
            fnv1.SEVERITY_FATAL: "Fatal",
            fnv1.SEVERITY_WARNING: "Warning",
            fnv1.SEVERITY_NORMAL: "Normal",
        }
        for r in result.results:
            self.events.append(
                Event(self.round, xr_id(xr), severities.get(r.severity, "Normal"), r.message)
            )

    def _flap(self, ic: dict[str, Any]) -> None:
        """The InferenceCluster's status reads disconnected for this round (what consumers
        that read it next will see)."""
        status = ic.setdefault("status", {})
        status.pop("workloadNamespace", None)
        if isinstance(status.get("storage"), dict):
            status["storage"]["ready"] = False
        message = "simulated fault: the cluster's API server did not answer"
        set_conditions(
            ic,
            [
                Status.false("Connected", "Unavailable", message).as_condition(),
                Status.false("Ready", "Unavailable", message).as_condition(),
            ],
            self.now,
        )

    # --- what the timeline reads ----------------------------------------------------------

    def xrs(self) -> list[dict[str, Any]]:
        return [self.store[k] for k in self.xr_keys()]

    def all_ready(self) -> bool:
        xrs = self.xrs()
        return bool(xrs) and all(condition_true(mapping_at(x, "status"), "Ready") for x in xrs)

    def faults_settled(self) -> bool:
        """Every fault has started, and every one with an end has ended."""
        return all(
            self.round >= x.round and (x.until is None or self.round >= x.until)
            for x in self.faults
        )
