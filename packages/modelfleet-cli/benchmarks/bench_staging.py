"""Where a ModelCache stages, measured: `spec.staging` Everywhere against WhereServed with one
warm spare, on the same simulated fleet (`modelfleet simulate`, the four functions on loopback).

The fleet: CLUSTERS quickstart InferenceClusters (one L4 pool of two nodes each), MODELS
ModelCaches, each with a ModelDeployment of REPLICAS replicas serving from it (examples/
quickstart's, renamed), simulated until every XR is Ready; then one ModelDeployment is scaled up
by one replica, simulated until every XR is Ready again, and then the other two at once.
Reported per policy: the copies staged (cluster rows Ready at the end) and the bytes they
downloaded (the simulated model fills half its 5 GiB claim: 2.5 GiB), the same copies priced for
a 600 GB model, and for the first roll-out and for each scale-up, the rounds until every
ModelDeployment was Ready (time to serve; the caches may still be staging a new spare then) and
the replica-rounds spent WaitingForCache (a replica placed where its weights are not Ready yet:
it holds no GPU while it waits, but does not serve).

Run: uv run python packages/modelfleet-cli/benchmarks/bench_staging.py [--write-docs]
(--write-docs writes the table into its section of docs/benchmarks.md.)
"""

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from modelfleet_cli.discovery import repository_compositions
from modelfleet_cli.functions import running_functions
from modelfleet_cli.pipeline import Caller
from modelfleet_cli.simulate.clusters import workload_clusters
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_cli.simulate.control_plane import ControlPlane
from modelfleet_cli.simulate.fleet import load_fleet
from modelfleet_contracts.conditions import condition_true
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_devtools import docs_sections as docs
from modelfleet_devtools.bench import provenance

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the fleet of quickstart copies of the tests

from quickstart_fleet import fleet_names, quickstart_fleet  # noqa: E402

CLUSTERS, MODELS, REPLICAS = 50, 3, 2
GB = 1000**3
PRICED_GB = 600  # the model size
POLICIES = {
    "Everywhere (default)": None,
    "WhereServed + 1 spare": {"policy": "WhereServed", "warmSpares": 1},
}
SECTION = docs.section_name(__file__)
TITLE = (
    f"Where weights are staged: {CLUSTERS} clusters, {MODELS} ModelCaches, {MODELS} "
    f"ModelDeployments of {REPLICAS} replicas (modelfleet simulate, until Ready)"
)


@dataclass
class Phase:
    """One stretch of the run: the rounds until every ModelDeployment was Ready (`served`),
    until every XR was (`rounds`), and the replica-rounds spent WaitingForCache."""

    rounds: int = 0
    served: int = 0
    waiting: int = 0
    ready: bool = False


def run_until_ready(plane: ControlPlane, limit: int) -> Phase:
    phase = Phase()
    while phase.rounds < limit:
        plane.run_round()
        phase.rounds += 1
        phase.waiting += sum(
            1
            for x in plane.xrs()
            if x["kind"] == "ModelReplica"
            and mapping_at(x, "status").get("phase") == "WaitingForCache"
        )
        deployments = [x for x in plane.xrs() if x["kind"] == "ModelDeployment"]
        if not phase.served and all(
            condition_true(mapping_at(x, "status"), "Ready") for x in deployments
        ):
            phase.served = phase.rounds
        if plane.all_ready():
            phase.ready = True
            break
    return phase


@dataclass(frozen=True)
class Run:
    policy: str
    copies: int
    bytes_staged: int
    phases: tuple[Phase, ...]

    def row(self) -> str:
        priced = self.copies * PRICED_GB / 1000
        phases = " | ".join(f"{_rounds(p)} / {p.waiting}" for p in self.phases)
        return (
            f"| {self.policy} | {self.copies} | {self.bytes_staged / GB:.1f} GB | "
            f"{priced:.1f} TB | {phases} |"
        )


def _rounds(phase: Phase) -> str:
    return str(phase.served) if phase.ready else f"not Ready in {phase.rounds}"


HEADER = (
    "| spec.staging | copies staged | bytes staged (simulated 2.5 GiB model) | "
    f"the same copies of a {PRICED_GB} GB model | roll-out: rounds until every deployment "
    "is Ready / "
    "replica-rounds WaitingForCache | one deployment +1 replica: the same | the two others "
    "+1 at once: the same |\n|---|---:|---:|---:|---:|---:|---:|"
)
ROUND_LIMIT = 30


def fleet(staging: dict[str, Any] | None) -> list[dict[str, Any]]:
    clusters, models = fleet_names(CLUSTERS, MODELS)
    objects = quickstart_fleet(clusters, models)
    for obj in objects:
        if obj["kind"] == "ModelCache" and staging is not None:
            obj["spec"]["staging"] = dict(staging)
        if obj["kind"] == "ModelDeployment":
            obj["spec"]["replicas"] = REPLICAS
    return objects


def measure(policy: str, staging: dict[str, Any] | None, call: Caller, work: Path) -> Run:
    directory = work / policy.split()[0]
    directory.mkdir(parents=True)
    (directory / "fleet.yaml").write_text(yaml.safe_dump_all(fleet(staging), sort_keys=False))
    loaded = load_fleet(directory)
    plane = ControlPlane(loaded, repository_compositions(), call, workload_clusters(loaded, {}), [])
    phases = [run_until_ready(plane, ROUND_LIMIT)]
    deployments = sorted(
        (x for x in plane.xrs() if x["kind"] == "ModelDeployment"),
        key=lambda x: x["metadata"]["name"],
    )
    for scaled in (deployments[:1], deployments[1:]):
        for xr in scaled:
            xr["spec"]["replicas"] = REPLICAS + 1  # as `kubectl scale` would
        phases.append(run_until_ready(plane, ROUND_LIMIT))
    rows = [
        row
        for xr in plane.xrs()
        if xr["kind"] == "ModelCache"
        for row in list_at(mapping_at(xr, "status"), "clusters")
        if isinstance(row, dict) and row.get("phase") == "Ready"
    ]
    return Run(
        policy=policy,
        copies=len(rows),
        bytes_staged=sum(int(r.get("bytesTotal") or 0) for r in rows),
        phases=tuple(phases),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.write_docs:
        try:
            docs.check_sections(docs.BENCHMARKS_DOC, [SECTION])
        except docs.SectionError as err:
            raise SystemExit(f"--write-docs: {err}") from err
    load_before = os.getloadavg()[0]
    runs = []
    with running_functions(start=FUNCTIONS) as servers, tempfile.TemporaryDirectory() as work:
        for policy, staging in POLICIES.items():
            runs.append(measure(policy, staging, servers, Path(work)))
            print(runs[-1].row(), file=sys.stderr, flush=True)
    load_after = os.getloadavg()[0]
    text = "\n\n".join(
        [
            f"### {TITLE}",
            provenance(docs.script_command(__file__), load_before, load_after),
            "\n".join([HEADER, *(r.row() for r in runs)]),
        ]
    )
    print(text)
    if args.write_docs:
        docs.write_sections(docs.BENCHMARKS_DOC, {SECTION: text})
    return 0 if all(p.ready for r in runs for p in r.phases) else 1


if __name__ == "__main__":
    sys.exit(main())
