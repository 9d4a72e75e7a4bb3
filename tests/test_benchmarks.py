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
from modelfleet_contracts.models.inferencecluster import NodePool
from modelfleet_contracts.models.modeldeployment import ModelDeployment
from modelfleet_contracts.recheck import RECHECK_SETTLED
from modelfleet_devtools.bench import scenario_sections
from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    script_command,
    section_body,
    section_names,
)
from modelfleet_devtools.e2e import scale, scale_changes, scale_fleet, scale_requests
from modelfleet_devtools.e2e.steady import calls_in_window, replays_beside_trace

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(ROOT.glob("functions/*/benchmarks/bench_*.py"))
HYDRATOR_SCRIPT = ROOT / "packages/modelfleet-hydrator/benchmarks/hydrator_speed.py"
SIMULATE_SCRIPT = ROOT / "packages/modelfleet-cli/benchmarks/bench_simulate.py"
RELEASE_SCRIPT = ROOT / "packages/modelfleet-devtools/benchmarks/bench_release.py"
UPSTREAM_SCRIPT = ROOT / "functions/compose-model-cache/benchmarks/fleet_vs_upstream.py"
STAGING_SCRIPT = ROOT / "packages/modelfleet-cli/benchmarks/bench_staging.py"


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
    staging = load(STAGING_SCRIPT)
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
    ]
    text = BENCHMARKS_DOC.read_text()
    assert Counter(section_names(text)) == Counter(written)
    for name, (path, scenario) in sections.items():
        heading, measured_by, _ = section_body(text, name).split("\n\n")
        assert heading == f"### {scenario.title}", name
        assert measured_by.startswith(f"Measured by `{script_command(path)}` on "), name
    produced = f"Produced by `{script_command(HYDRATOR_SCRIPT)} --write-docs`.\n\n"
    assert section_body(text, hydrator.SECTION).startswith(produced)
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


def test_the_scale_benchmark_counts_the_cpu_of_the_processes_it_names(tmp_path):
    """modelfleet-scale-bench's CPU figure: the named processes and their children (a
    busy child of a named process counts, an unnamed process does not)."""
    from modelfleet_devtools.e2e.processes import Processes

    processes = Processes(tmp_path)
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n"
    spawner = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {busy!r}])"
    named = processes.start(
        "named", [sys.executable, "-c", spawner + "; import time; time.sleep(30)"]
    )
    other = processes.start("other", [sys.executable, "-c", busy + "import time; time.sleep(30)"])
    try:
        import time

        time.sleep(2.5)
        assert 0.4 <= scale.cpu_seconds(processes, ("named",)) < 2.0
        assert scale.cpu_seconds(processes, ()) == 0
    finally:
        for process in (named, other):
            process.stop(grace=2)


def test_the_scale_benchmark_tells_what_staging_added_to_the_idle_fleet():
    """A row's 'per staging above idle' takes off what the registered fleet cost anyway over
    the same time (its routine polling), and never goes below zero."""
    row = scale.ScaleRow(
        clusters=100, stagings=100, crossplane="v2.3.4", clusters_ready_s=120,
        ready_s=200, control_plane_cpu_s=300, functions_cpu_s=5, deleted_s=12,
        idle_cpu_per_s=0.5, load=1.0,
    )  # fmt: skip
    assert row.per_staging_s == 3.0
    assert row.per_staging_above_idle_s == 2.0  # (300 - 0.5 * 200) / 100
    cells = [c.strip() for c in row.markdown().strip("|").split("|")]
    assert len(cells) == scale.ScaleRow.HEADER.splitlines()[0].count("|") - 1
    assert cells[4] == "0.50 s/s" and cells[7:9] == ["3.00 s", "2.00 s"]
    quiet = scale.ScaleRow(10, 10, "v2.3.4", 10, 100, 20, 1, None, idle_cpu_per_s=1.0)
    assert quiet.per_staging_above_idle_s == 0.0


def test_the_scale_benchmark_tells_where_the_idle_fleets_cpu_went():
    """The idle minute's CPU per control-plane process, and the functions together, per
    second; the row's idle fleet CPU is the control plane's (functions not counted)."""
    before = {name: 10.0 for name in (*scale.CONTROL_PLANE, *scale.FUNCTIONS)}
    after = {
        **before,
        "control-plane-kube-apiserver": 16.0,
        "provider-kubernetes": 13.0,
        "compose-inference-cluster": 11.2,
        "compose-model-cache": 10.6,
    }
    each = scale.idle_cpu_by_process(before, after, 60)
    assert each == pytest.approx(
        {"kube-apiserver": 0.1, "etcd": 0.0, "crossplane": 0.0,
         "provider-kubernetes": 0.05, "functions": 0.03}
    )  # fmt: skip
    row = scale.ScaleRow(300, 300, "v2.3.4", 10, 100, 20, 1, 5, 0.15, each)
    cells = [c.strip() for c in row.idle_by_process_markdown().strip("|").split("|")]
    assert len(cells) == scale.ScaleRow.IDLE_BY_PROCESS_HEADER.splitlines()[0].count("|") - 1
    assert cells == ["300", "0.150 s/s", "0.100", "0.000", "0.000", "0.050", "0.030"]


def test_the_scale_benchmarks_probe_deployment_places_one_replica_on_each_probed_cluster():
    """What the serving probe applies is a valid ModelDeployment whose one-GPU replicas fit
    the node pool each probed InferenceCluster is given, one per cluster."""
    md = ModelDeployment.model_validate(scale_changes.probe_deployment("bench", 5))
    pool = NodePool.model_validate(scale_changes.PROBE_POOL)
    assert md.spec.replicas == 5
    assert md.spec.clusterSelector.matchLabels == scale_changes.PROBE_LABEL
    assert md.spec.modelCacheRef.name == scale_changes.PROBE_CACHE
    per_group = md.spec.resources.gpusPerNode * pool.gpu.memoryGiB
    assert md.spec.resources.vramGiB <= per_group and pool.nodeCount == 1


@pytest.mark.parametrize(
    "given, says",
    [
        (["--clusters", "20,100"], "`uv run modelfleet-scale-bench --clusters 20,100`"),
        (
            ["--clusters", "20", "--write-docs"],
            "`uv run modelfleet-scale-bench --clusters 20 --write-docs`",
        ),
    ],
)
def test_the_scale_benchmark_header_is_the_command_that_ran(given, says):
    line = scale.header(given, "v2.3.4")
    assert says in line
    assert ("--write-docs" in line) == ("--write-docs" in given)
    assert "--enable-watches" in line  # the provider's configuration, as installed


@pytest.mark.parametrize(
    "containers, says",
    [(False, "hydration Jobs simulated"), (True, "each hydration Job a hydrator container")],
)
def test_the_scale_benchmark_header_says_how_hydration_jobs_ran(containers, says):
    assert says in scale.header(["--clusters", "20"], "v2.3.4", hydrator_containers=containers)


def test_the_scale_benchmark_reports_how_soon_a_completed_job_is_seen():
    """Median and worst of each cluster's Job completion to its row seen Ready."""
    row = scale.ScaleRow(
        20, 20, "v2.3.4", 10, 100, 20, 1, 5, job_to_row_s=[1.0, 2.0, 3.0, 10.0, 4.0]
    )
    cells = [c.strip() for c in row.markdown().strip("|").split("|")]
    assert cells[10] == "3 s / 10 s (5 Jobs)"
    assert scale.ScaleRow(20, 20, "v2.3.4", 10, 100, 20, 1, 5).job_to_row == "not measured"


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


LIMIT = scale_changes.LIMIT_SECONDS


@pytest.mark.parametrize(
    "seconds, median, worst",
    [
        ([4.0, 9.0, 6.0], "6 s", "9 s"),
        ([4.0, 9.0, None], "9 s", f"over {LIMIT} s"),
        (
            [None, None, 3.0],
            f"over {scale_changes.LIMIT_SECONDS} s",
            f"over {scale_changes.LIMIT_SECONDS} s",
        ),
    ],
)
def test_a_change_not_seen_counts_as_later_than_the_limit(seconds, median, worst):
    row = scale_changes.ChangeSeen(300, "connection lost", seconds)
    cells = [c.strip() for c in row.markdown().strip("|").split("|")]
    assert len(cells) == scale_changes.ChangeSeen.HEADER.splitlines()[0].count("|") - 1
    assert cells[2:] == [str(len(seconds)), median, worst]


def test_changes_are_probed_on_clusters_spread_over_the_fleet():
    assert scale_changes.probed_clusters(300) == [
        "bench-0000", "bench-0060", "bench-0120", "bench-0180", "bench-0240"
    ]  # fmt: skip
    assert scale_changes.probed_clusters(3) == ["bench-0000", "bench-0001", "bench-0002"]


def test_the_scale_benchmark_prints_a_row_per_size_and_the_changes_where_measured(
    monkeypatch, capsys
):
    idle_windows = []

    def measure(n, work, version, limit, *, changes=None, connection_limit=0, **given):
        idle_windows.append(given["idle_seconds"])
        row = scale.ScaleRow(n, n, version, 10, 100, 20, 1, 5)
        if changes is not None:
            changes(row)  # the row is out before the changes are measured
            row.changes = [scale_changes.ChangeSeen(n, "connection lost", [5.0])]
        return row

    monkeypatch.setattr(scale, "measure", measure)
    monkeypatch.setattr(scale, "crossplane_version", lambda: "v2.3.4")
    assert scale.main(["--clusters", "20,300", "--changes-at", "300"]) == 0
    out = capsys.readouterr().out
    assert "`uv run modelfleet-scale-bench --clusters 20,300 --changes-at 300`" in out
    final = out[out.rindex(scale.ScaleRow.HEADER) :]
    assert [line.split("|")[1].strip() for line in final.splitlines()[2:4]] == ["20", "300"]
    assert "| 300 | connection lost | 1 | 5 s | 5 s |" in final
    idle = final[final.rindex(scale.ScaleRow.IDLE_BY_PROCESS_HEADER) :].splitlines()[2:]
    assert [line.split("|")[1].strip() for line in idle] == ["20", "300"]
    # The idle fleet is watched for one round of its routine work (the 10-minute poll and
    # settled recheck), not a part of it that may hold all of that work or none.
    assert idle_windows == [RECHECK_SETTLED.total_seconds()] * 2


def test_the_scale_benchmark_connects_probed_clusters_alone_and_the_rest_through_few_configs():
    names = [f"bench-{i:04d}" for i in range(300)]
    probed = set(scale_changes.probed_clusters(300))
    connects = [scale_fleet.provider_config_of(i, n, probed) for i, n in enumerate(names)]
    assert all(connects[names.index(p)] == p for p in probed)  # broken one at a time
    shared = set(connects) - probed
    assert len(shared) == scale_fleet.PROVIDER_CONFIG_GROUPS


def test_a_change_waited_for_a_shorter_limit_says_that_limit():
    row = scale_changes.ChangeSeen(300, "connection lost", [None], limit=120)
    assert row.markdown().endswith("| 1 | over 120 s | over 120 s |")


def test_the_scale_benchmark_says_which_requests_the_idle_fleet_made():
    """The API server's request counters, summed over the labels that are not verb and
    resource (codes, scopes), as requests per second between two readings, busiest first."""
    before = scale_requests.request_counts(
        "# HELP apiserver_request_total ...\n"
        'apiserver_request_total{code="200",resource="objects",subresource="status",'
        'verb="UPDATE"} 10\n'
        'apiserver_request_total{code="200",resource="objects",subresource="",verb="APPLY"} 4\n'
    )
    after = scale_requests.request_counts(
        'apiserver_request_total{code="200",resource="objects",subresource="status",'
        'verb="UPDATE"} 70\n'
        'apiserver_request_total{code="409",resource="objects",subresource="status",'
        'verb="UPDATE"} 10\n'
        'apiserver_request_total{code="200",resource="objects",subresource="",verb="APPLY"} 34\n'
        'apiserver_request_total_other{verb="GET"} 99\n'
    )
    assert after[("UPDATE", "objects/status")] == 80
    assert scale_requests.busiest(before, after, 10) == (
        "UPDATE objects/status 7.00/s, APPLY objects 3.00/s"
    )
