"""What a ModelService routes, in terms both `modelfleet simulate` and a real run can be read in,
and the check that a change of what it routes drops no route to a healthy backend."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from modelfleet_cli.simulate.gateways import gateway_address

from .fleet import SETTINGS_FILE

Json = dict[str, Any]
# One backend of a cluster's row: (ModelDeployment, weight, reason).
Backend = tuple[str, int, str]


def meaning(status: Json) -> Json:
    """A ModelService's status without its words: the weights, `x/y` routed, the Routed
    condition's status and reason, and per cluster (routed, reason, address, its backends)."""
    routed: Json = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "Routed"), {}
    )
    clusters = {}
    for row in status.get("clusters") or []:
        backends = sorted(
            (str(b.get("modelDeployment")), int(b.get("weight") or 0), str(b.get("reason")))
            for b in row.get("backends") or []
        )
        clusters[str(row.get("name"))] = (
            bool(row.get("routed")),
            str(row.get("reason")),
            row.get("address"),
            tuple(backends),
        )
    return {
        "weights": status.get("weights"),
        "routed": (status.get("summary") or {}).get("routed"),
        "condition": (routed.get("status"), routed.get("reason")),
        "clusters": clusters,
    }


def backends_of(meant: Json, cluster: str) -> dict[str, int]:
    """The deployments `meant` (a `meaning`) says the cluster's route sends to, at their
    weights."""
    row = meant["clusters"].get(cluster)
    if row is None:
        return {}
    return {name: weight for name, weight, reason in row[3] if reason == "Routed"}


@dataclass
class RoutePoll:
    """Each cluster's route, polled while a ModelService moves from `before` to `after`
    (each a `meaning`): a backend routed in both stays routed at every poll, at the weight of
    one or the other, and the route sends to nothing routed in neither."""

    before: Json
    after: Json
    polls: int = 0
    violations: list[str] = field(default_factory=list)

    def check(self, routes: dict[str, dict[str, int] | None]) -> None:
        """`routes`: per cluster, the route's backends ({ModelDeployment: weight}), None where
        there is no route."""
        self.polls += 1
        for cluster, backends in routes.items():
            old, new = backends_of(self.before, cluster), backends_of(self.after, cluster)
            kept = set(old) & set(new)
            if backends is None:
                if kept:
                    self.violations.append(f"poll {self.polls}: {cluster} has no route")
                continue
            for name in kept - set(backends):
                self.violations.append(f"poll {self.polls}: {cluster} dropped {name}")
            for name, weight in backends.items():
                if weight not in {old.get(name), new.get(name)} - {None}:
                    self.violations.append(
                        f"poll {self.polls}: {cluster} routes {name} at {weight} "
                        f"(before {old.get(name)}, after {new.get(name)})"
                    )


def gateway(name: str, namespace: str, address: str) -> Json:
    """A Gateway as a platform team declares it, asking for `address`, its listener open to
    routes from every namespace."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "gatewayClassName": "e2e",
            "addresses": [{"type": "IPAddress", "value": address}],
            "listeners": [
                {
                    "name": "http",
                    "port": 80,
                    "protocol": "HTTP",
                    "allowedRoutes": {"namespaces": {"from": "All"}},
                }
            ],
        },
    }


def with_gateways(objects: list[Json], settings: Json) -> tuple[Json, dict[str, str]]:
    """`settings` with each cluster's declared Gateway among the objects it holds, asking for
    an address of its own (the one simulate would give it, in the clusters' name order), so
    simulate and the real run (whose harness seeds them) route through the same addresses;
    and those addresses, per cluster."""
    settings = json.loads(json.dumps(settings))
    held = settings.setdefault("clusters", {})
    addresses: dict[str, str] = {}
    clusters = sorted(
        (o for o in objects if o["kind"] == "InferenceCluster"),
        key=lambda o: o["metadata"]["name"],
    )
    for index, ic in enumerate(clusters):
        ref = ic["spec"].get("gatewayRef")
        if not ref:
            continue
        name = ic["metadata"]["name"]
        addresses[name] = gateway_address(index)
        namespace = ref.get("namespace") or ic["spec"].get("workloadNamespace")
        entry = held.setdefault(name, {})
        entry["objects"] = [
            *entry.get("objects", []),
            gateway(ref["name"], namespace, addresses[name]),
        ]
    return settings, addresses


def simulated_service_status(
    folder: Path, objects: list[Json], settings: Json, edits: list[Json]
) -> Json:
    """`modelfleet simulate --output json` on `objects` with `settings` and only `edits`: the
    final status of the fleet's one ModelService."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fleet.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    (folder / SETTINGS_FILE).write_text(
        yaml.safe_dump({**settings, "edits": edits}, sort_keys=False)
    )
    return simulated_status(folder, "ModelService")


def simulated_status(folder: Path, kind: str) -> Json:
    """`modelfleet simulate --output json` on the fleet in `folder`: the final status of its
    one XR of `kind`."""
    modelfleet = Path(sys.executable).parent / "modelfleet"
    run = subprocess.run(
        [modelfleet, "simulate", str(folder), "--output", "json", "--quiet"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.stdout, f"modelfleet simulate printed nothing: {run.stderr[-2000:]}"
    report = json.loads(run.stdout)
    [xr] = [x for x in report["xrs"].values() if x["kind"] == kind]
    return dict(xr.get("status") or {})
