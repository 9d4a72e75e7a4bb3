"""Benchmark `modelfleet simulate` on fleets of quickstart copies: N InferenceClusters and
MODELS ModelCaches with a ModelDeployment each (examples/quickstart's, renamed), simulated
until every XR is Ready, through the four functions served on loopback as `simulate` serves
them.

Reported per fleet size: the XRs, the rounds to Ready, the claims and workloads lost (LOST
lines: none expected), and per round on average: the wall time, the part spent in the
functions (the gRPC calls, waiting included), simulate's own (the rest: the control plane,
the simulated providers and clusters, the timeline) and simulate's own per cluster, which
stays flat when its cost grows no faster than the fleet; then the printed timeline's widest
line and its number of lines.

Run: uv run python packages/modelfleet-cli/benchmarks/bench_simulate.py
[SIZES... | --write-docs | --write-timeline]
(--write-docs measures every default size, writes the table into its section of
docs/benchmarks.md and the 300-cluster run's output into its section of docs/cli.md; the three
sizes took 21 minutes on the 2-core development machine, 14 of them the 1000-cluster fleet.
--write-timeline runs the 300-cluster fleet alone and writes its output into docs/cli.md
only: what simulate prints changed, the measured figures did not need to be taken again.)
"""

import argparse
import contextlib
import io
import os
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_cli.functions import running_functions
from modelfleet_cli.output import whole_numbers_as_int
from modelfleet_cli.pipeline import Caller
from modelfleet_cli.simulate.command import FUNCTIONS, print_summary, simulate_fleet
from modelfleet_cli.simulate.timeline import Progress, Timeline
from modelfleet_devtools import docs_sections as docs
from modelfleet_devtools.bench import provenance

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the fleet of quickstart copies of the tests

from quickstart_fleet import fleet_names, write_quickstart_fleet  # noqa: E402

SIZES = (30, 300, 1000)
MODELS = 10
SECTION = docs.section_name(__file__)  # its section of docs/benchmarks.md
# The run whose output docs/cli.md shows, in its own section there.
SHOWN_SIZE = 300
CLI_DOC = docs.BENCHMARKS_DOC.parent / "cli.md"
CLI_SECTION = docs.section_name(__file__, "timeline")
SHOWN_XRS = ("ModelCache ml-team/m00", "ModelDeployment ml-team/m00")
XR_HEADER = re.compile(r"^round \d+ +(\S+ \S+) {2,}")
TITLE = (
    f"modelfleet simulate: N clusters, {MODELS} ModelCaches and {MODELS} ModelDeployments "
    "(quickstart copies), until Ready"
)


class TimedCalls:
    """The functions' caller, adding up the seconds spent in calls."""

    def __init__(self, call: Caller) -> None:
        self.call = call
        self.seconds = 0.0

    def __call__(self, name: str, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        start = time.perf_counter()
        try:
            return self.call(name, req)
        finally:
            self.seconds += time.perf_counter() - start


@dataclass(frozen=True)
class Run:
    """What one fleet size measured, and what simulate printed (`printed`: stdout's lines,
    `progress`: stderr's)."""

    clusters: int
    xrs: int
    rounds: int
    result: str
    lost: int
    wall_s: float
    functions_s: float
    widest: int
    lines: int
    printed: tuple[str, ...] = ()
    progress: tuple[str, ...] = ()

    @property
    def own_s(self) -> float:
        return self.wall_s - self.functions_s

    def row(self) -> str:
        per_round = self.wall_s / self.rounds
        functions = self.functions_s / self.rounds
        own = self.own_s / self.rounds
        per_cluster_ms = own / self.clusters * 1000
        return (
            f"| {self.clusters} | {self.xrs} | {self.rounds} | {self.result} | {self.lost} "
            f"| {self.wall_s:.0f} s | {per_round:.1f} s | {functions:.1f} s | {own:.1f} s "
            f"| {per_cluster_ms:.0f} ms | {self.widest} | {self.lines} |"
        )


HEADER = (
    "| clusters | XRs at the end | rounds | result | LOST | wall | per round | in the functions "
    "per round | simulate's own per round | own per cluster per round | widest line | "
    "lines printed |\n|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def measure(clusters: int, call: Caller, work: Path, models: int = MODELS) -> Run:
    """Simulate `clusters` quickstart clusters and `models` models until Ready (or the round
    limit), timing the whole run and the calls to the functions."""
    names = fleet_names(clusters, models)
    directory = write_quickstart_fleet(work / f"fleet-{clusters}-{models}", *names)
    timed = TimedCalls(call)
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    result = simulate_fleet(
        directory,
        rounds=None,
        fault_texts=(),
        timeline=Timeline(out=out),
        progress=Progress(err),  # not a terminal: a line per round, one per 10 s within
        call=timed,
    )
    wall = time.perf_counter() - start
    with contextlib.redirect_stdout(out):
        print_summary(whole_numbers_as_int(result))
    printed = out.getvalue().splitlines()
    return Run(
        clusters=clusters,
        xrs=len(result["xrs"]),
        rounds=int(result["rounds"]),
        result=str(result["result"]),
        lost=len(result["losses"]),
        wall_s=wall,
        functions_s=timed.seconds,
        widest=max(map(len, printed)),
        lines=len(printed),
        printed=tuple(printed),
        progress=tuple(err.getvalue().splitlines()),
    )


def excerpt(run: Run, flag: str = "--write-docs") -> str:
    """The part of a run's output docs/cli.md shows: the progress lines of its longest round
    (three of them), the first and the last block of each of SHOWN_XRS and the closing line;
    `flag`: the option of this script that wrote it."""
    blocks: list[list[str]] = []
    for line in run.printed:
        if line.startswith("round ") or not blocks or not line.startswith(" "):
            blocks.append([line])
        else:
            blocks[-1].append(line)
    shown: list[str] = []
    for ident in SHOWN_XRS:
        mine = [b for b in blocks if (h := XR_HEADER.match(b[0])) and h[1] == ident]
        for block in (mine[0], mine[-1]) if len(mine) > 1 else mine:
            shown += [*block, "..."]
    within = [p for p in run.progress if "XRs ready" not in p]
    rounds = Counter(p.split(",")[0] for p in within)  # "simulate: round 3/30"
    longest = rounds.most_common(1)[0][0] if rounds else ""
    steps = [p for p in within if p.startswith(longest + ",")][:3]
    return "\n".join(
        [
            f"Produced by `{docs.script_command(__file__)} {flag}` ({run.clusters} clusters, "
            f"{MODELS} models): stderr's progress within its longest round, then stdout.",
            "",
            "```text",
            *steps,
            "```",
            "",
            "```text",
            *shown,
            run.printed[-1],
            "```",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sizes", nargs="*", type=int, help=f"clusters (default: {SIZES})")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--write-timeline", action="store_true")
    args = parser.parse_args(argv)
    if (args.write_docs or args.write_timeline) and args.sizes:
        parser.error("--write-docs and --write-timeline choose the sizes: give none with them")
    if args.write_timeline:
        return write_timeline()
    if args.write_docs:
        try:
            docs.check_sections(docs.BENCHMARKS_DOC, [SECTION])
            docs.check_sections(CLI_DOC, [CLI_SECTION])
        except docs.SectionError as err:
            raise SystemExit(f"--write-docs: {err}") from err
    command = " ".join([docs.script_command(__file__), *map(str, args.sizes)])
    runs = []
    load_before = os.getloadavg()[0]
    with running_functions(start=FUNCTIONS) as servers, tempfile.TemporaryDirectory() as work:
        for clusters in tuple(args.sizes) or SIZES:
            runs.append(measure(clusters, servers, Path(work)))
            print(runs[-1].row(), file=sys.stderr, flush=True)
    load_after = os.getloadavg()[0]
    text = "\n\n".join(
        [
            f"### {TITLE}",
            provenance(command, load_before, load_after),
            "\n".join([HEADER, *(r.row() for r in runs)]),
        ]
    )
    print(text)
    if args.write_docs:
        docs.write_sections(docs.BENCHMARKS_DOC, {SECTION: text})
        [shown] = [r for r in runs if r.clusters == SHOWN_SIZE]
        docs.write_sections(CLI_DOC, {CLI_SECTION: excerpt(shown)})
    return 0 if all(r.result == "Ready" and not r.lost for r in runs) else 1


def write_timeline() -> int:
    """Run the SHOWN_SIZE fleet and write its excerpt into docs/cli.md (nothing else)."""
    try:
        docs.check_sections(CLI_DOC, [CLI_SECTION])
    except docs.SectionError as err:
        raise SystemExit(f"--write-timeline: {err}") from err
    with running_functions(start=FUNCTIONS) as servers, tempfile.TemporaryDirectory() as work:
        run = measure(SHOWN_SIZE, servers, Path(work))
    print(run.row(), file=sys.stderr, flush=True)
    docs.write_sections(CLI_DOC, {CLI_SECTION: excerpt(run, "--write-timeline")})
    return 0 if run.result == "Ready" and not run.lost else 1


if __name__ == "__main__":
    sys.exit(main())
