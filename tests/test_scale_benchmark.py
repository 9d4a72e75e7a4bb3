"""modelfleet-scale-bench's parts, tested on plain data: the CPU it counts, the header it
writes, the changes it probes and how it reports them, the requests it reads."""

import sys

import pytest
from modelfleet_contracts.models.inferencecluster import NodePool
from modelfleet_contracts.models.modeldeployment import ModelDeployment
from modelfleet_contracts.recheck import RECHECK_SETTLED
from modelfleet_devtools.e2e import (
    scale,
    scale_changes,
    scale_connection,
    scale_fleet,
    scale_requests,
)


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
    # The idle fleet is watched for one round of its routine work (the provider's poll and
    # settled recheck), not a part of it that may hold all of that work or none.
    assert idle_windows == [RECHECK_SETTLED.total_seconds()] * 2


@pytest.mark.parametrize(
    "given, every_cluster_checks", [([], None), (["--check-interval", "1m30s"], "1m30s")]
)
def test_the_scale_benchmark_sets_every_clusters_check_interval_only_when_asked(
    monkeypatch, given, every_cluster_checks
):
    asked = {}

    def measure(n, work, version, limit, **settings):
        asked.update(settings)
        return scale.ScaleRow(n, n, version, 10, 100, 20, 1, 5)

    monkeypatch.setattr(scale, "measure", measure)
    monkeypatch.setattr(scale, "crossplane_version", lambda: "v2.3.4")
    assert scale.main(["--clusters", "20", "--changes-at", "", *given]) == 0
    assert asked["check_interval"] == every_cluster_checks


@pytest.mark.parametrize("interval", ["20", "fast", "1m 30s", "1.5m"])
def test_a_check_interval_the_xrd_would_refuse_is_refused_before_any_fleet_starts(
    monkeypatch, capsys, interval
):
    monkeypatch.setattr(scale, "measure", lambda *a, **k: pytest.fail("a fleet was started"))
    with pytest.raises(SystemExit) as refused:
        scale.main(["--clusters", "20", "--check-interval", interval])
    assert refused.value.code == 2
    assert "is not a duration such as 20s" in capsys.readouterr().err


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
    # While a cache stages, the same counts per cluster staged.
    assert scale_requests.busiest(before, after, 20, unit=" per staging") == (
        "UPDATE objects/status 3.50 per staging, APPLY objects 1.50 per staging"
    )


def _inference_cluster(name: str, connected: str | None) -> dict:
    conditions = [] if connected is None else [{"type": "Connected", "status": connected}]
    return {"metadata": {"name": name}, "status": {"conditions": conditions}}


def test_a_lost_or_returned_connection_is_timed_from_its_own_patch_on_probed_clusters_only():
    started = {"bench-0000": 100.0, "bench-0060": 104.0}
    listed = [
        _inference_cluster("bench-0000", "False"),
        _inference_cluster("bench-0060", "True"),  # not yet lost
        _inference_cluster("bench-0120", "False"),  # not patched in this round
        _inference_cluster("bench-0180", None),
    ]
    assert scale_connection.newly_connected_as(listed, "False", started, 110.0) == {
        "bench-0000": 10.0
    }
    assert scale_connection.newly_connected_as(listed, "True", started, 110.0) == {
        "bench-0060": 6.0
    }
