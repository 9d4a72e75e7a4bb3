"""What a fleet reaches, in terms both `modelfleet simulate` and a real run can be read in.

An XR's outcome is its readiness, each of Modelfleet's own conditions as (status, reason), and
each cluster row's phase. Crossplane's own conditions (Synced, Ready, Responsive) are left to
readiness: their reasons are the engine's, not the functions'.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .fleet import PLURALS, xr_path
from .kube import KubeClient

Json = dict[str, Any]
ENGINE_CONDITIONS = {"Synced", "Ready", "Responsive"}


@dataclass(frozen=True)
class XrOutcome:
    ready: bool
    conditions: tuple[tuple[str, str, str], ...]  # (type, status, reason), sorted
    rows: tuple[tuple[str, str], ...]  # (cluster, phase), sorted

    def describe(self) -> str:
        conditions = ", ".join(f"{t}={s} {r}" for t, s, r in self.conditions)
        rows = ", ".join(f"{c}: {p}" for c, p in self.rows)
        return f"ready={self.ready}; {conditions}" + (f"; rows {rows}" if rows else "")


def outcome_of(status: Json | None) -> XrOutcome:
    status = status or {}
    conditions = status.get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    own = tuple(
        sorted(
            (str(c["type"]), str(c.get("status")), str(c.get("reason", "")))
            for c in conditions
            if c.get("type") not in ENGINE_CONDITIONS
        )
    )
    rows = tuple(
        sorted(
            (str(row.get("name")), str(row.get("phase")))
            for row in status.get("clusters") or []
            if isinstance(row, dict)
        )
    )
    return XrOutcome(ready, own, rows)


# XRs an XR composes: a ModelDeployment's ModelReplicas, a ModelCache's shards.
COMPOSED_KINDS = ("ModelReplica", "ModelCacheShard")


def xr_key(kind: str, namespace: str | None, name: str) -> str:
    if kind in COMPOSED_KINDS:  # named <owner>[-<cluster>]-<suffix> (generated, or simulated)
        name = name.rsplit("-", 1)[0]
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def simulated_outcomes(folder: Path) -> tuple[str, dict[str, XrOutcome]]:
    """`modelfleet simulate DIR --output json`: its result and every XR's final outcome."""
    modelfleet = Path(sys.executable).parent / "modelfleet"
    run = subprocess.run(
        [modelfleet, "simulate", str(folder), "--output", "json", "--quiet"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    report = json.loads(run.stdout)
    outcomes = {
        xr_key(xr["kind"], xr.get("namespace") or None, xr["name"]): outcome_of(xr.get("status"))
        for xr in report["xrs"].values()
    }
    return str(report["result"]), outcomes


def real_outcomes(client: KubeClient, xrs: Iterable[Json]) -> dict[str, XrOutcome]:
    """The same, read from the real API server, for the XRs applied (composed ones included)."""
    found: dict[str, XrOutcome] = {}
    for xr in xrs:
        meta = xr["metadata"]
        obj = client.get(xr_path(xr)) or {}
        found[xr_key(xr["kind"], meta.get("namespace"), meta["name"])] = outcome_of(
            obj.get("status")
        )
    return found


def composed_xrs(client: KubeClient, namespaces: Iterable[str]) -> list[Json]:
    """ModelReplicas and ModelCacheShards the fleet's XRs composed (XRs too, with their own
    outcome)."""
    from .kube import resource_path

    composed = []
    for namespace in sorted(set(namespaces)):
        for kind in COMPOSED_KINDS:
            for item in client.list(
                resource_path("modelfleet.io/v1alpha1", PLURALS[kind], namespace)
            ):
                composed.append({"kind": kind, "metadata": item["metadata"]})
    return composed
