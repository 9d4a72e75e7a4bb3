"""A ModelDeployment reconciled round after round, with time passing between rounds.

What Crossplane does between two calls is played here: the response's conditions are
stored on the XR the way Crossplane stores them (a condition that says the same as before
keeps its `lastTransitionTime`; one that changes is stamped now), the composed ModelReplicas
and their Usages become the observed ones, and each replica reports the readiness the test
gives it. Time passes by moving every stored stamp into the past, which is what the function
measures.
"""

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from deployment_world import (
    cache_on,
    deployment,
    desired_replicas,
    desired_usages,
    placement,
    schedule,
)
from modelfleet_contracts.labels import REPLACES_ANNOTATION
from modelfleet_devtools.requests import condition_status, events


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Fleet:
    """One deployment (`replicas`, `moveAfterSeconds`) over `clusters`, with a cache whose
    phase per cluster is `cache`; `serving`: ready replicas each cluster's ModelReplica
    reports (missing: none ready)."""

    clusters: dict[str, dict[str, Any]]
    cache: dict[str, str]
    replicas: int = 1
    move_after: int | None = 60
    serving: dict[str, int] = field(default_factory=dict)
    xr: dict[str, Any] = field(init=False)
    observed: dict[str, dict[str, Any]] = field(default_factory=dict)
    usages: dict[str, dict[str, Any]] = field(default_factory=dict)
    last: fnv1.RunFunctionResponse | None = None

    def __post_init__(self) -> None:
        healing = {} if self.move_after is None else {"moveAfterSeconds": self.move_after}
        self.xr = deployment(
            replicas=self.replicas, modelCacheRef={"name": "kimi-k2"}, healing=healing
        )
        self.xr["status"] = {"conditions": []}

    def reconcile(self) -> fnv1.RunFunctionResponse:
        cache = cache_on()
        cache["status"]["clusters"] = [{"name": c, "phase": p} for c, p in self.cache.items()]
        observed = {}
        for key, replica in self.observed.items():
            cluster = replica["spec"]["clusterName"]
            ready = self.serving.get(cluster, 0)
            observed[key] = replica | {
                "status": {"phase": "Ready" if ready else "Progressing", "readyReplicas": ready}
            }
        observed.update(self.usages)
        rsp = schedule(self.xr, list(self.clusters.values()), cache=cache, observed=observed)
        self._store_conditions(rsp)
        self.observed = copy.deepcopy(desired_replicas(rsp))
        self.usages = copy.deepcopy(desired_usages(rsp))
        self.last = rsp
        return rsp

    def _store_conditions(self, rsp: fnv1.RunFunctionResponse) -> None:
        now = rfc3339(datetime.now(UTC))
        before = {c["type"]: c for c in self.xr["status"]["conditions"]}
        stored = []
        for c in rsp.conditions:
            new = {
                "type": c.type,
                "status": condition_status(c),
                "reason": c.reason,
                "message": c.message,
            }
            old = before.get(c.type)
            same = old is not None and all(old.get(k) == v for k, v in new.items())
            stored.append(new | {"lastTransitionTime": old["lastTransitionTime"] if same else now})
        self.xr["status"]["conditions"] = stored

    def wait(self, seconds: int) -> None:
        """`seconds` pass: every stored stamp moves that far into the past."""
        for c in self.xr["status"]["conditions"]:
            moment = datetime.fromisoformat(c["lastTransitionTime"].replace("Z", "+00:00"))
            c["lastTransitionTime"] = rfc3339(moment - timedelta(seconds=seconds))

    # What a test reads of the last response.
    def placement(self) -> dict[str, int]:
        assert self.last is not None
        return placement(self.last)

    def health(self) -> tuple[str, str, str]:
        assert self.last is not None
        [c] = [c for c in self.last.conditions if c.type == "PlacementHealthy"]
        return condition_status(c), c.reason, c.message

    def replaces(self) -> dict[str, str]:
        """Cluster -> the clusters its ModelReplica says it replaces."""
        return {
            r["spec"]["clusterName"]: r["metadata"].get("annotations", {})[REPLACES_ANNOTATION]
            for r in self.observed.values()
            if REPLACES_ANNOTATION in r["metadata"].get("annotations", {})
        }

    def used_by(self) -> dict[str, set[str]]:
        """ModelReplica name -> the kinds its Usages in the last response protect."""
        out: dict[str, set[str]] = {}
        for usage in self.usages.values():
            by = usage["spec"]["by"]["resourceRef"]["name"]
            out.setdefault(by, set()).add(usage["spec"]["of"]["kind"])
        return out

    def events(self) -> list[tuple[str, str]]:
        assert self.last is not None
        return events(self.last)
