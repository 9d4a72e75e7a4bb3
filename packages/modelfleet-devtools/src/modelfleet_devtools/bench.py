"""RunFunction benchmark harness: latency and peak memory beside the decode/encode floor.

The floor is what any function pays for a request of that size: decoding the request bytes
and encoding a response as large as the one the function returned. A function's own work
is the gap between its latency and that floor, so the table reports the ratio.

`run_script` is every function benchmark script's command line; its --write-docs puts each
table, as printed, into its section of docs/benchmarks.md (`docs_sections`).
"""

import argparse
import gc
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Protocol

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.internal import api_implementation

from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    SectionError,
    check_sections,
    script_command,
    section_name,
    write_sections,
)

MIB = 1024 * 1024
GRPC_DEFAULT_LIMIT = 4 * MIB


class Runner(Protocol):
    def run(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse: ...


@dataclass(frozen=True)
class Row:
    size: int
    request_bytes: int
    response_bytes: int
    latency_ms: float
    floor_ms: float
    peak_mib: float
    floor_peak_mib: float

    @property
    def ratio(self) -> float:
        return self.latency_ms / self.floor_ms if self.floor_ms else float("inf")


def _elapsed_ms(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _paired_medians_ms(
    fn: Callable[[], object], floor: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Median latency of `fn` and of `floor`, sampled alternately so that both see the same
    machine load (on a shared machine, timing one block after the other skews the ratio)."""
    samples: list[float] = []
    floor_samples: list[float] = []
    for _ in range(repeats):
        samples.append(_elapsed_ms(fn))
        floor_samples.append(_elapsed_ms(floor))
    return statistics.median(samples), statistics.median(floor_samples)


def _peak_mib(fn: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / MIB


def measure(
    size: int, build_request: Callable[[int], fnv1.RunFunctionRequest], runner: Runner
) -> Row:
    """One row: the function end to end (bytes in, bytes out) against the floor."""
    payload = build_request(size).SerializeToString()
    response = runner.run(fnv1.RunFunctionRequest.FromString(payload))

    def function_call() -> bytes:
        req = fnv1.RunFunctionRequest.FromString(payload)
        return runner.run(req).SerializeToString()

    def floor_call() -> bytes:
        fnv1.RunFunctionRequest.FromString(payload)
        return response.SerializeToString()

    repeats = max(5, min(50, 2000 // max(size, 1)))
    function_call()  # warm caches and imports
    latency_ms, floor_ms = _paired_medians_ms(function_call, floor_call, repeats)
    return Row(
        size=size,
        request_bytes=len(payload),
        response_bytes=response.ByteSize(),
        latency_ms=latency_ms,
        floor_ms=floor_ms,
        peak_mib=_peak_mib(function_call),
        floor_peak_mib=_peak_mib(floor_call),
    )


def format_table(rows: Sequence[Row], axis: str = "clusters") -> str:
    """A Markdown table of the rows; `axis` names what the size counts."""
    lines = [
        f"| {axis} | request | response | latency | floor | ratio | peak mem | floor peak mem |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        flag = " ⚠ >4 MiB" if r.response_bytes >= GRPC_DEFAULT_LIMIT else ""
        lines.append(
            f"| {r.size} | {r.request_bytes / MIB:.2f} MiB "
            f"| {r.response_bytes / MIB:.2f} MiB{flag} "
            f"| {r.latency_ms:.1f} ms | {r.floor_ms:.1f} ms | {r.ratio:.2f}x "
            f"| {r.peak_mib:.1f} MiB | {r.floor_peak_mib:.1f} MiB |"
        )
    return "\n".join(lines)


def require_ready(runner: Runner, req: fnv1.RunFunctionRequest, what: str) -> None:
    """Stop unless the function reports the composite Ready for `req`: a benchmark of the
    steady state must not silently measure an error or a hold path instead."""
    rsp = runner.run(req)
    if rsp.desired.composite.ready != fnv1.READY_TRUE:
        reasons = ", ".join(f"{c.type}={c.reason}: {c.message}" for c in rsp.conditions)
        raise SystemExit(f"{what}: expected the composite Ready, got {reasons or 'no conditions'}")


def exit_status(rows: Sequence[Row]) -> int:
    """A benchmark script's exit status: 0 when every response fits under the 4 MiB
    Crossplane's gRPC client accepts, 1 otherwise."""
    return 0 if all(r.response_bytes < GRPC_DEFAULT_LIMIT for r in rows) else 1


@dataclass(frozen=True)
class Scenario:
    """One table of a benchmark script: its heading, the request it measures at each size and,
    when the script has several tables, the table's name in its docs section's name."""

    title: str
    build_request: Callable[[int], fnv1.RunFunctionRequest]
    table: str | None = None


def scenario_sections(script: Path | str, scenarios: Sequence[Scenario]) -> dict[str, Scenario]:
    """Each scenario of `script` by the name of the docs section its table goes to."""
    sections = {section_name(script, s.table): s for s in scenarios}
    if len(sections) != len(scenarios):
        raise ValueError(f"{script}: two scenarios would write the same docs section")
    return sections


def _arguments(
    doc: str | None, default: Sequence[int], argv: Sequence[str] | None
) -> argparse.Namespace:
    """The sizes a script was asked for and whether to write the docs, which must show the
    full table (so no sizes with --write-docs)."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "sizes",
        nargs="*",
        type=int,
        help=f"sizes to measure (default: {' '.join(map(str, default))})",
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="measure every default size and write each table as printed into its section "
        f"of docs/{BENCHMARKS_DOC.name}",
    )
    args = parser.parse_args(argv)
    if args.write_docs and args.sizes:
        parser.error("--write-docs measures every default size: give no sizes with it")
    return args


def provenance(command: str, load_before: float, load_after: float) -> str:
    """The line under a table's heading saying what printed it, when and on what machine."""
    return (
        f"Measured by `{command}` on {datetime.now(UTC):%Y-%m-%d}: {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, protobuf {metadata.version('protobuf')} "
        f"({api_implementation.Type()}); 1-minute load average {load_before:.2f} before this "
        f"table, {load_after:.2f} after."
    )


def run_script(
    doc: str | None,
    script: Path | str,
    runner: Runner,
    scenarios: Sequence[Scenario],
    default_sizes: Sequence[int],
    *,
    axis: str = "clusters",
    argv: Sequence[str] | None = None,
    docs: Path = BENCHMARKS_DOC,
) -> int:
    """A benchmark script's command line: prints each scenario's heading, `provenance` line
    and table at the sizes asked (all of `default_sizes` when none are). With --write-docs,
    each table as printed also replaces its section of `docs` (`scenario_sections`), whose
    markers are checked before anything is measured. Returns the exit status
    (`exit_status`)."""
    args = _arguments(doc, default_sizes, argv)
    sizes = tuple(args.sizes) or tuple(default_sizes)
    sections = scenario_sections(script, scenarios)
    if args.write_docs:
        try:
            check_sections(docs, sections)
        except SectionError as err:
            raise SystemExit(f"--write-docs: {err}") from err
    # The command that prints the table: --write-docs only adds where the output goes.
    command = " ".join([script_command(script), *map(str, args.sizes)])
    printed: dict[str, str] = {}
    rows: list[Row] = []
    for name, scenario in sections.items():
        load_before = os.getloadavg()[0]
        measured = [measure(size, scenario.build_request, runner) for size in sizes]
        load_after = os.getloadavg()[0]
        printed[name] = "\n\n".join(
            [
                f"### {scenario.title}",
                provenance(command, load_before, load_after),
                format_table(measured, axis),
            ]
        )
        print(printed[name], end="\n\n", flush=True)
        rows += measured
    if args.write_docs:
        write_sections(docs, printed)
    return exit_status(rows)
