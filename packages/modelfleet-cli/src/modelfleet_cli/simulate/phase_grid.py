"""Every cluster's phase per round, and every ModelService's traffic split per round, as
`modelfleet simulate --timeline FILE.svg` draws them (grid_drawing).

A phase row is one cluster as one XR sees it: a ModelCache's or ModelDeployment's
`status.clusters[]` row (its `phase`), a ModelReplica's own `phase` on its cluster, an
InferenceCluster's readiness (`Ready`, else `NotReady`). ModelCacheShards are left out: their
ModelCache reports the same rows. A split row is one cluster of a ModelService: the weight its
route sends each backend (a backend held out sends nothing), or that it is not routed. A round
without a value (before the XR reports the cluster, after it is deleted) stays empty.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from modelfleet_contracts.api import (
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
    MODEL_SERVICE,
)
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.fields import list_at, mapping_at

from modelfleet_cli.simulate.fleet import xr_id

ROW_KINDS = (INFERENCE_CLUSTER, MODEL_CACHE, MODEL_DEPLOYMENT, MODEL_REPLICA)
Row = tuple[int, str, str]  # (kind's place, XR, cluster)
SplitRow = tuple[str, str]  # (ModelService, cluster)


@dataclass(frozen=True)
class Split:
    """What a ModelService's route on one cluster sends where, in its backends' order."""

    weights: tuple[tuple[str, int], ...]  # (ModelDeployment, weight); 0 when held out
    routed: bool
    reason: str = ""  # why it is not routed

    def text(self) -> str:
        """`90/10`: the weights in order; `not routed` without a route."""
        return "/".join(str(w) for _, w in self.weights) if self.routed else "not routed"

    def described(self) -> str:
        """`qwen-stable 90, qwen-canary 10`, or `not routed (NoAvailableBackend)`."""
        if not self.routed:
            return f"not routed ({self.reason})"
        return ", ".join(f"{name} {weight}" for name, weight in self.weights)


def cluster_phases(xr: dict[str, Any]) -> dict[str, str]:
    """Cluster -> phase, as `xr` reports it now."""
    kind, status = xr.get("kind"), mapping_at(xr, "status")
    if kind == INFERENCE_CLUSTER:
        name = str(mapping_at(xr, "metadata").get("name"))
        return {name: "Ready" if condition_true(status, "Ready") else "NotReady"}
    if kind == MODEL_REPLICA:
        cluster = mapping_at(xr, "spec").get("clusterName")
        phase = status.get("phase")
        return {str(cluster): str(phase)} if cluster and phase else {}
    if kind in (MODEL_CACHE, MODEL_DEPLOYMENT):
        return {
            str(row["name"]): str(row.get("phase") or "?")
            for row in list_at(status, "clusters")
            if isinstance(row, dict) and row.get("name")
        }
    return {}


def _weight(value: Any) -> int:
    return int(value) if isinstance(value, int | float) else 0


def cluster_splits(xr: dict[str, Any]) -> dict[str, Split]:
    """Cluster -> the split a ModelService reports there now (nothing for another kind)."""
    if xr.get("kind") != MODEL_SERVICE:
        return {}
    splits = {}
    for row in list_at(mapping_at(xr, "status"), "clusters"):
        if not isinstance(row, dict) or not row.get("name"):
            continue
        backends = [b for b in list_at(row, "backends") if isinstance(b, dict)]
        weights = tuple((str(b.get("modelDeployment")), _weight(b.get("weight"))) for b in backends)
        routed = bool(row.get("routed"))
        splits[str(row["name"])] = Split(weights, routed, "" if routed else str(row.get("reason")))
    return splits


@dataclass
class PhaseGrid:
    """Phases and splits by row and round, recorded after each round."""

    rounds: int = 0
    cells: dict[Row, dict[int, str]] = field(default_factory=dict)
    splits: dict[SplitRow, dict[int, Split]] = field(default_factory=dict)

    def record(self, round_no: int, xrs: Iterable[dict[str, Any]]) -> None:
        self.rounds = max(self.rounds, round_no)
        for xr in xrs:
            for cluster, split in cluster_splits(xr).items():
                self.splits.setdefault((xr_id(xr), cluster), {})[round_no] = split
            if xr.get("kind") not in ROW_KINDS:
                continue
            place = ROW_KINDS.index(str(xr["kind"]))
            for cluster, phase in cluster_phases(xr).items():
                self.cells.setdefault((place, xr_id(xr), cluster), {})[round_no] = phase

    def rows(self) -> list[Row]:
        return sorted(self.cells)

    def split_rows(self) -> list[SplitRow]:
        return sorted(self.splits)

    def phases_in_row_order(self) -> list[str]:
        """Every phase seen, in the order a reader meets it: row by row, round by round."""
        seen: dict[str, None] = {}
        for row in self.rows():
            for _, phase in sorted(self.cells[row].items()):
                seen.setdefault(phase, None)
        return list(seen)

    def backends(self) -> list[str]:
        """Every ModelService backend seen, in the order the split rows first list them."""
        seen: dict[str, None] = {}
        for row in self.split_rows():
            for _, split in sorted(self.splits[row].items()):
                for name, _ in split.weights:
                    seen.setdefault(name, None)
        return list(seen)
