"""The benchmark scripts stay runnable: each one's request builder produces, at its smallest
size, the steady state it claims to measure (the builders stop unless the function reports
the composite Ready). Not timed: performance is measured by running the scripts. And
docs/benchmarks.md has one section for each table they write, in the shape they print it."""

import asyncio
import importlib.util
import lzma
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from unittest import mock

import pytest
from compose_model_cache import main as cache_main
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.replay import decoded, replayable
from modelfleet_devtools.bench import scenario_sections
from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    script_command,
    section_body,
    section_names,
)
from modelfleet_devtools.e2e import scale
from modelfleet_devtools.e2e.steady import calls_in_window, replays_beside_trace

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(ROOT.glob("functions/*/benchmarks/bench_*.py"))
HYDRATOR_SCRIPT = ROOT / "packages/modelfleet-hydrator/benchmarks/hydrator_speed.py"
SIMULATE_SCRIPT = ROOT / "packages/modelfleet-cli/benchmarks/bench_simulate.py"
RELEASE_SCRIPT = ROOT / "packages/modelfleet-devtools/benchmarks/bench_release.py"
UPSTREAM_SCRIPT = ROOT / "functions/compose-model-cache/benchmarks/fleet_vs_upstream.py"
STAGING_SCRIPT = ROOT / "packages/modelfleet-cli/benchmarks/bench_staging.py"
SOURCES_SCRIPT = ROOT / "packages/modelfleet-hydrator/benchmarks/staging_speed.py"


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"benchmark_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_function_has_a_benchmark():
    functions = {p.name for p in (ROOT / "functions").iterdir() if (p / "pyproject.toml").exists()}
    assert {p.parents[1].name for p in SCRIPTS} == functions


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.parents[1].name)
def test_request_builder_reaches_the_measured_state_at_size_one(path: Path):
    bench = load(path)
    req = bench.build_request(1)
    assert isinstance(req, fnv1.RunFunctionRequest)
    rsp = bench.RUNNER.run(req)
    assert rsp.desired.composite.ready == fnv1.READY_TRUE
    assert not [c for c in rsp.conditions if c.type == "FunctionError"]


CACHE_SCRIPT = ROOT / "functions/compose-model-cache/benchmarks/bench_cache.py"
CAPTURED = ROOT / "functions/compose-model-cache/tests/captured"


def test_the_shard_table_measures_a_request_of_the_size_crossplane_sends():
    """bench_cache's Ready 32-cluster shard at steady state against the one Crossplane
    v2.3.4 sent (captured/): the same Objects, and within 15% of its size, managed fields,
    server defaults and the InferenceClusters as stored included."""
    real = fnv1.RunFunctionRequest.FromString(
        lzma.decompress((CAPTURED / "shard-steady-1.pb.xz").read_bytes())
    )
    built = load(CACHE_SCRIPT).build_shard_request(32)

    def kinds(req: fnv1.RunFunctionRequest) -> Counter[str]:
        return Counter(
            r.resource["spec"]["forProvider"]["manifest"]["kind"]
            for r in req.observed.resources.values()
        )

    assert kinds(built) == kinds(real)
    assert sum(len(r.items) for r in built.required_resources.values()) == 32
    assert 0.85 <= built.ByteSize() / real.ByteSize() <= 1.15, (built.ByteSize(), real.ByteSize())


@pytest.mark.parametrize("count", [1, 33], ids=["one cluster", "more than a shard holds"])
def test_cache_tables_build_what_they_measure(count: int):
    """Every compose-model-cache table, at one cluster and at one more than a shard holds:
    the ModelCache turns Ready on its shards' word, and so does its first shard on its Jobs';
    the first shard of a gated model composes a claim, a token Secret and a Job (no access
    of its own) on each of its clusters, and no more than a shard holds."""
    bench = load(CACHE_SCRIPT)
    for build in (bench.build_request, bench.build_shard_request):
        assert bench.RUNNER.run(build(count)).desired.composite.ready == fnv1.READY_TRUE
    first = bench.RUNNER.run(bench.build_first_request(count))
    assert len(first.desired.resources) == -(-count // bench.SHARD_SIZE)
    per_cluster = bench.composed_per_cluster(
        bench.RUNNER.run(bench.build_first_shard_request(count))
    )
    with_job = ("Job", "PersistentVolumeClaim", "Secret")
    assert per_cluster == {with_job: min(count, bench.SHARD_SIZE)}


def test_the_docs_have_one_section_for_every_table_of_every_script():
    """A renamed, added or removed table cannot leave the docs stale: every section a script
    writes is there exactly once, and there is no other."""
    hydrator, simulate = load(HYDRATOR_SCRIPT), load(SIMULATE_SCRIPT)
    release, upstream = load(RELEASE_SCRIPT), load(UPSTREAM_SCRIPT)
    staging, sources = load(STAGING_SCRIPT), load(SOURCES_SCRIPT)
    sections = {
        name: (path, scenario)
        for path in SCRIPTS
        for name, scenario in scenario_sections(path, load(path).SCENARIOS).items()
    }
    written = [
        *sections,
        hydrator.SECTION,
        simulate.SECTION,
        scale.SECTION,
        release.SECTION,
        upstream.SECTION,
        staging.SECTION,
        sources.SECTION,
    ]
    text = BENCHMARKS_DOC.read_text()
    assert Counter(section_names(text)) == Counter(written)
    for name, (path, scenario) in sections.items():
        heading, measured_by, _ = section_body(text, name).split("\n\n")
        assert heading == f"### {scenario.title}", name
        assert measured_by.startswith(f"Measured by `{script_command(path)}` on "), name
    produced = f"Produced by `{script_command(HYDRATOR_SCRIPT)} --write-docs`.\n\n"
    assert section_body(text, hydrator.SECTION).startswith(produced)
    produced = f"Produced by `{script_command(SOURCES_SCRIPT)} "
    assert section_body(text, sources.SECTION).startswith(produced)
    heading, measured_by, table = section_body(text, simulate.SECTION).split("\n\n")
    assert heading == f"### {simulate.TITLE}"
    assert measured_by.startswith(f"Measured by `{script_command(SIMULATE_SCRIPT)}` on ")
    assert table.startswith(simulate.HEADER)
    assert section_body(text, scale.SECTION).startswith(
        "Produced by `uv run modelfleet-scale-bench"
    )
    heading, measured_by, table = section_body(text, staging.SECTION).split("\n\n")
    assert heading == f"### {staging.TITLE}"
    assert measured_by.startswith(f"Measured by `{script_command(STAGING_SCRIPT)}` on ")
    assert table.startswith(staging.HEADER)


def test_the_simulate_benchmark_runs_a_fleet_to_ready_and_excerpts_it(tmp_path):
    """bench_simulate.py at its smallest: 2 clusters and 1 model reach Ready, nothing lost,
    its row and the excerpt docs/cli.md shows are built from what simulate printed."""
    from modelfleet_cli.functions import running_functions

    simulate = load(SIMULATE_SCRIPT)
    with running_functions(start=simulate.FUNCTIONS) as servers:
        run = simulate.measure(2, servers, tmp_path, models=1)
    # 2 InferenceClusters, the ModelCache and its shard, the ModelDeployment and its 2
    # ModelReplicas
    assert (run.result, run.lost, run.xrs) == ("Ready", 0, 7)
    assert run.row().startswith("| 2 | 7 | ") and run.printed[-1].startswith("all 7 XRs Ready")
    shown = simulate.excerpt(run)
    assert "round 1   ModelCache ml-team/m00" in shown and run.printed[-1] in shown


def test_the_scale_benchmark_reads_a_steady_window_beside_the_functions_replay_counts(tmp_path):
    """--steady-minutes: between two "Replays" lines (each logged before its call is counted,
    and before the call's trace line is written), the traced calls are the ones counted, and
    a call whose content (key) was traced before, at any time, counts as sent before."""
    trace, log = tmp_path / "compose-model-cache.jsonl", tmp_path / "compose-model-cache.log"
    calls = [  # (at, kind, key)
        (10.5, "ModelCacheShard", "a"),  # converging
        (20.5, "ModelCacheShard", "b"),  # the summary at 20 counted the call before
        (30.5, "ModelCacheShard", "b"),
        (31.0, "ModelCache", "c"),
        (40.5, "ModelCacheShard", "b"),
    ]
    trace.write_text(
        "".join(
            f'{{"kind": "{kind}", "namespace": "n", "name": "x", "at": {at}, '
            f'"settled": true, "key": "{key}"}}\n'
            for at, kind, key in calls
        )
        + '{"kind": "ModelCache", "na'  # a line being written
    )
    log.write_text(
        '{"address": "127.0.0.1:1", "msg": "Serving", "ts": 1}\n'
        + "".join(
            f'{{"replayed": {r}, "decided": {d}, "msg": "Replays", "ts": {ts}}}\n'
            for ts, r, d in ((20, 0, 1), (40, 1, 3))
        )
    )
    window = calls_in_window(trace, 20, 40)
    assert (window.calls["ModelCacheShard"], window.repeated["ModelCacheShard"]) == (2, 1)
    assert (window.calls["ModelCache"], window.repeated["ModelCache"]) == (1, 0)
    assert len(window.keys["ModelCacheShard"]) == 1
    (said,) = replays_beside_trace(log, trace, 0, 100)
    assert said.startswith("20 s: 1 replayed, 2 decided; traced 3 calls, 1 with content sent")


def test_the_side_by_side_cycle_is_the_fleet_at_steady_state():
    """fleet_vs_upstream.py's cycle, ours, over one more cluster than a shard holds: the
    ModelCache and both of its shards, each request one that changes nothing and is Ready
    (upstream's side needs its checkout, so it runs with the script only). The server
    answers each again without deciding: its answer asks for no recheck off the clock."""
    upstream = load(UPSTREAM_SCRIPT)
    cycle = upstream.our_cycle(33)
    assert sorted(name for name, _ in cycle) == ["cache", "shard-0", "shard-1"]
    served = cache_main.served()
    for _, req in cycle:
        assert upstream.RUNNER.run(req).desired.composite.ready == fnv1.READY_TRUE
        first = decoded(asyncio.run(served.RunFunction(req)))
        assert replayable(first)
        with mock.patch.object(served, "run", side_effect=AssertionError("decided again")):
            assert decoded(asyncio.run(served.RunFunction(req))) == first


def test_the_staging_benchmark_sets_each_source_beside_its_plain_client_and_floor(capsys):
    """staging_speed.py at a tiny size, unpaced (pacing needs root and a network namespace):
    every contender of each source staged the model, and the ratios are to the plain client
    and the floor of the same source. S3 needs boto3, which the workspace does not lock."""
    bench = load(SOURCES_SCRIPT)
    tiny = ["--big-files=1", "--big-mib=1", "--small-files=3", "--rounds=1", "--cases=unpaced"]
    assert bench.main([*tiny, "--sources=OCI,HuggingFace"]) == 0
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("| OCI ", "| HuggingFace "))
    ]
    floor = "floor (curl to /dev/null)"
    assert [row[:2] for row in rows] == [
        ["OCI", "hydrator"],
        ["OCI", bench.PLAIN["OCI"]],
        ["OCI", floor],
        ["HuggingFace", "hydrator"],
        ["HuggingFace", bench.PLAIN["HuggingFace"]],
        ["HuggingFace", floor],
    ]
    for source, name, _, mib_s, _, _, to_plain, to_floor, _ in rows:
        assert float(mib_s) > 0, (source, name)
        if name == bench.PLAIN[source]:
            assert to_plain == "1.00x", source
        if name == floor:
            assert to_floor == "1.00x", source


def test_the_staging_benchmark_refuses_s3_without_boto3_saying_how_to_get_it(capsys, tmp_path):
    bench = load(SOURCES_SCRIPT)
    # The workspace's Python without its site-packages: no boto3 (the workspace has it).
    python = tmp_path / "python-without-boto3"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    with pytest.raises(SystemExit):
        bench.main(["--sources=S3", f"--python={python}", "--rounds=1"])
    assert "image/requirements.txt" in capsys.readouterr().err
