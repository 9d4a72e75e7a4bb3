"""Staging one model from each source side by side: the hydrator, the fastest plain client of
that source, and the floor (the same bytes from the same loopback server into /dev/null).

The model (BIG files of BIG_MIB MiB and SMALL small files, random bytes) is served on
127.0.0.1 by three loopback sources at once:

- OCI: `crane registry serve` (realcp) holding a one-layer modelcar (the files under /models,
  gzipped by `crane append`); plain client `crane export IMAGE - | tar -x`;
- HuggingFace: the loopback Hub (modelfleet_devtools.loopback.hub); plain client `hf download`;
- S3: the loopback S3 (modelfleet_devtools.loopback.s3); plain client boto3's transfer
  manager with its defaults, every object queued at once (what `aws s3 cp --recursive` does);
  measured only when --python has boto3 (the image's requirements.txt installs it).

The hydrator runs as a composed Job runs it (the image's launcher, image/hydrate.py, with the
Job's arguments; no Job to report to), with the interpreter --python names; `hf download` and
the boto3 client run with that interpreter too. The floor is `curl` fetching the same URLs
(8 at once) into /dev/null.

Cases: unpaced, and through a paced link (--cases 1gbit,10gbit: the loopback interface of a
private network namespace shaped by `tc ... tbf`, which needs root and `unshare -n`). Each
case runs ROUNDS rounds, the contenders of a source in turn, alternating the order. Reported
per case and contender: the median wall time, MiB/s (model bytes / median time), the median
CPU seconds (user + system of the process and the children it waited for), the largest peak
RSS of one of its processes, and the ratio of the median times to the plain client's and to
the floor's.

Run: uv run python packages/modelfleet-hydrator/benchmarks/staging_speed.py [--write-docs]
(--write-docs replaces the section between the markers in docs/benchmarks.md with the output).
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    SectionError,
    check_sections,
    script_command,
    section_name,
    write_sections,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # staging_sources.py, beside this script
PACKAGES = HERE.parents[1]
SOURCE_PATHS = [PACKAGES / "modelfleet-hydrator" / "src", PACKAGES / "modelfleet-contracts" / "src"]
from staging_sources import (  # noqa: E402
    MIB,
    Launcher,
    Run,
    Source,
    curl_floor,
    has_boto3,
    hub_source,
    hydrator_argv,
    model,
    oci_source,
    s3_source,
)

RATES = {"unpaced": "", "1gbit": "1gbit", "10gbit": "10gbit"}  # case -> tc rate
SOURCES = ("OCI", "HuggingFace", "S3")
PLAIN = {"OCI": "crane export, tar -x", "HuggingFace": "hf download", "S3": "boto3 transfer"}
SECTION = section_name(__file__)
TBF = ["burst", "4mb", "latency", "200ms"]  # a bucket that holds a few loopback packets


def shape(rate: str) -> None:
    """Pace this network namespace's loopback interface to `rate` ("" : unpaced)."""
    subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True, check=False)
    if rate:
        subprocess.run(
            ["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, *TBF],
            check=True,
        )


def measure_source(
    launcher: Launcher, source: Source, python: str, work: Path, rounds: int
) -> dict[str, list[Run]]:
    contenders: dict[str, Callable[[Path], list[str]]] = {
        "hydrator": lambda into: hydrator_argv(python, into, source.hydrator_args),
        PLAIN[source.name]: source.plain,
        "floor (curl to /dev/null)": lambda _: curl_floor(source.floor_urls, source.env),
    }
    runs: dict[str, list[Run]] = {name: [] for name in contenders}
    for r in range(rounds):
        names = list(contenders) if r % 2 == 0 else list(reversed(contenders))
        for name in names:
            into = work / "into"
            shutil.rmtree(into, ignore_errors=True)
            if source.makes_dirs:
                into.mkdir()
            runs[name].append(launcher.run(contenders[name](into), source.env))
            shutil.rmtree(into, ignore_errors=True)
    return runs


def rate(mib_s: float) -> str:
    return f"{mib_s:.0f}" if mib_s >= 100 else f"{mib_s:.2g}"


def table(source: str, size: int, runs: dict[str, list[Run]]) -> list[str]:
    median = {name: statistics.median(r.wall for r in rs) for name, rs in runs.items()}
    plain, floor = median[PLAIN[source]], median["floor (curl to /dev/null)"]
    lines = []
    for name, rs in runs.items():
        wall, cpu, rss = (
            median[name],
            statistics.median(r.cpu for r in rs),
            max(r.rss_mib for r in rs),
        )
        every = ", ".join(f"{r.wall:.2f}" for r in rs)
        lines.append(
            f"| {source} | {name} | {wall:.2f} s | {rate(size / MIB / wall)} | {cpu:.2f} s | "
            f"{rss:.0f} MiB | {wall / plain:.2f}x | {wall / floor:.2f}x | {every} |"
        )
    return lines


def inner(args: argparse.Namespace) -> dict[str, object]:
    """Measure every case inside this process's network namespace; the figures as JSON."""
    if any(RATES[c] for c in args.cases):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    launcher = Launcher()
    m = model(args.big_files, args.big_mib, args.small_files)
    python = args.python
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join([args.hydrator_src, *(str(p) for p in SOURCE_PATHS[1:])]),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "NO_PROXY": "127.0.0.1",
    }
    results: dict[str, object] = {"size": m.size, "files": len(m.files), "cases": {}}
    load: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="eng-staging-bench-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        env["HOME"] = str(work)
        env["HF_HOME"] = str(work / "hf-home")
        makers = {
            "OCI": lambda: oci_source(m, work, env, python),
            "HuggingFace": lambda: hub_source(m, env, python),
            "S3": lambda: s3_source(m, env, python),
        }
        sources = [stack.enter_context(makers[name]()) for name in args.sources]
        for case in args.cases:
            shape(RATES[case])
            case_runs = {}
            load[case] = [os.getloadavg()[0]]
            for source in sources:
                print(f"{time.strftime('%H:%M:%S')} {case}: {source.name}", file=sys.stderr)
                runs = measure_source(launcher, source, python, work, args.rounds)
                case_runs[source.name] = [
                    (name, [r.__dict__ for r in rs]) for name, rs in runs.items()
                ]
            load[case].append(os.getloadavg()[0])
            results["cases"][case] = case_runs  # type: ignore[index]
        shape("")
    launcher.close()
    results["load"] = load
    return results


def report(args: argparse.Namespace, results: dict[str, object]) -> list[str]:
    size = int(results["size"])  # type: ignore[call-overload]
    load: dict[str, list[float]] = results["load"]  # type: ignore[assignment]
    lines = [
        f"Model: {args.big_files} files of {args.big_mib:g} MiB and {args.small_files + 1} small "
        f"ones, {size / MIB:.0f} MiB in {results['files']} files (random bytes). "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; median of {args.rounds} "
        "round(s), the contenders of a source run in turn, alternating the order.",
        "",
        "| source | contender | median wall time | MiB/s | CPU time | peak RSS | "
        "/ plain client | / floor | all runs (s) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    cases: dict[str, dict[str, list[tuple[str, list[dict[str, float]]]]]] = results["cases"]  # type: ignore[assignment]
    for case, by_source in cases.items():
        lines.append(
            f"| **{case}** (load {load[case][0]:.1f} before, {load[case][1]:.1f} after) "
            "| | | | | | | | |"
        )
        for source, runs in by_source.items():
            lines += table(source, size, {name: [Run(**r) for r in rs] for name, rs in runs})
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-files", type=int, default=3)
    parser.add_argument("--big-mib", type=float, default=1024)
    parser.add_argument("--small-files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default="unpaced,1gbit,10gbit")
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--python", default=sys.executable, help="the hydrator's interpreter")
    parser.add_argument(
        "--hydrator-src",
        default=str(SOURCE_PATHS[0]),
        help="the modelfleet_hydrator package's parent directory (to measure another version)",
    )
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    argv_given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv_given)
    args.cases = [c for c in args.cases.split(",") if c]
    args.sources = [s for s in args.sources.split(",") if s]
    for case in args.cases:
        if case not in RATES:
            parser.error(f"--cases: {case!r} is none of {', '.join(RATES)}")
    for source in args.sources:
        if source not in SOURCES:
            parser.error(f"--sources: {source!r} is none of {', '.join(SOURCES)}")
    if "S3" in args.sources and not has_boto3(args.python):
        parser.error(
            f"--sources S3 needs boto3 in --python ({args.python}); make one with the image's "
            "requirements: uv venv DIR && uv pip install --python DIR/bin/python -r "
            "packages/modelfleet-hydrator/image/requirements.txt"
        )
    if args.inner:
        print(json.dumps(inner(args)))
        return 0
    if args.write_docs:
        try:
            check_sections(BENCHMARKS_DOC, [SECTION])
        except SectionError as err:
            raise SystemExit(f"--write-docs: {err}") from err
    if any(RATES[c] for c in args.cases):
        # A private network namespace: its loopback interface is ours to pace, and it goes
        # away with the run.
        argv_inner = [sys.executable, __file__, *argv_given]
        proc = subprocess.run(  # its progress and its errors go to our stderr
            ["unshare", "-n", *argv_inner, "--inner"],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"the measuring run failed:\n{proc.stdout[-2000:]}")
        results = json.loads(proc.stdout.strip().splitlines()[-1])
    else:
        results = inner(args)
    lines = report(args, results)
    print("\n".join(lines))
    if args.write_docs:
        write_sections(BENCHMARKS_DOC, {SECTION: section(argv_given, lines)})
    return 0


def section(argv: list[str], lines: list[str]) -> str:
    """The docs section for a run with `argv` that printed `lines`."""
    shown = " ".join([script_command(__file__), *(a for a in argv if a != "--write-docs")])
    return "\n".join([f"Produced by `{shown} --write-docs`.", "", *lines])


if __name__ == "__main__":
    sys.exit(main())
