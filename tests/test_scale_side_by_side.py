"""modelfleet-scale-bench --side-by-side: every size's process watches its idle fleet at once,
and the stagings, which are timed, take turns, smallest first."""

import argparse
import sys
import textwrap
from contextlib import nullcontext
from pathlib import Path

import pytest
from modelfleet_devtools.e2e import scale_side_by_side
from modelfleet_devtools.e2e.scale_rows import ScaleRow

# A size's process as the benchmark runs one, standing in for the control plane: its idle
# window lasts `idle` seconds (the larger the fleet, the longer), then it waits for its turn,
# notes when its staging starts and ends, and leaves its row.
SIZE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from modelfleet_devtools.e2e import scale_side_by_side as side
    from modelfleet_devtools.e2e.scale_rows import ScaleRow
    n, turn, notes, fail = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    side.POLL_SECONDS = 0.05
    time.sleep({idle})
    if fail == "idle":
        sys.exit("the control plane did not start")
    with notes.open("a") as f:
        f.write(f"idle {{n}}\\n")
    side.wait_for_turn(turn)
    with notes.open("a") as f:
        f.write(f"stage {{n}}\\n")
    time.sleep(0.3)
    with notes.open("a") as f:
        f.write(f"staged {{n}}\\n")
    side.keep_row(turn, ScaleRow(n, n, "v2.3.4", 1, 2 * n, 3, 4, 5))
    """
)


def sizes_as_processes(tmp_path: Path, fail: dict[int, str] | None = None):
    notes = tmp_path / "notes"

    def command(n: int, turn: Path) -> list[str]:
        idle = {20: 0.1, 300: 0.6, 1000: 1.2}[n]
        with notes.open("a") as f:
            f.write(f"start {n}\n")
        failing = (fail or {}).get(n, "")
        return [
            sys.executable,
            "-c",
            SIZE.format(idle=idle),
            str(n),
            str(turn),
            str(notes),
            failing,
        ]

    return command, notes


def test_sizes_watch_their_idle_fleets_at_once_and_stage_one_at_a_time_smallest_first(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(scale_side_by_side, "POLL_SECONDS", 0.05)
    command, notes = sizes_as_processes(tmp_path)
    rows = list(scale_side_by_side.run_side_by_side([1000, 20, 300], tmp_path / "turns", command))

    assert [(r.clusters, r.ready_s) for r in rows] == [(20, 40), (300, 600), (1000, 2000)]
    said = notes.read_text().split("\n")[:-1]
    # Every size is started at once; none stages before every idle window is over, and no
    # staging overlaps another.
    assert said == [
        "start 1000", "start 20", "start 300", "idle 20", "idle 300", "idle 1000",
        "stage 20", "staged 20", "stage 300", "staged 300", "stage 1000", "staged 1000",
    ]  # fmt: skip


def test_a_size_that_fails_before_its_turn_stops_the_run_and_says_where_its_log_is(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(scale_side_by_side, "POLL_SECONDS", 0.05)
    command, notes = sizes_as_processes(tmp_path, fail={300: "idle"})
    with pytest.raises(RuntimeError) as failed:
        list(scale_side_by_side.run_side_by_side([20, 300], tmp_path / "turns", command))
    message = str(failed.value)
    assert "N = 300 ended before its idle window was over" in message
    assert str(tmp_path / "turns" / "n300.log") in message
    assert "the control plane did not start" in message  # the tail of its log
    assert "stage" not in notes.read_text()  # nobody staged: the other size was stopped


def test_each_size_runs_alone_in_its_network_namespace_with_the_same_settings(tmp_path):
    args = argparse.Namespace(
        work=tmp_path, changes_at="300", limit_minutes=20.0, idle_minutes=60.0,
        connection_limit_seconds=300.0, steady_minutes=0.0, keep_requests=False,
        hydrator_containers=True, audit=True, check_interval="1m",
    )  # fmt: skip
    argv = scale_side_by_side.one_size(args, 300, tmp_path / "turns" / "n300")
    assert argv[:2] == ["nsenter", "--net=/run/netns/modelfleet-bench-300"]
    assert argv[2:5] == [sys.executable, "-m", "modelfleet_devtools.e2e.scale"]
    given = argv[5:]
    assert given[given.index("--clusters") + 1] == "300"
    assert given[given.index("--idle-minutes") + 1] == "60.0"
    assert given[given.index("--turn") + 1] == str(tmp_path / "turns" / "n300")
    assert "--hydrator-containers" in given and "--side-by-side" not in given
    assert "--audit" in given
    assert given[given.index("--check-interval") + 1] == "1m"
    assert "--write-docs" not in given  # the parent writes the docs, once


def test_the_module_a_size_runs_is_the_benchmark():
    from modelfleet_devtools.e2e import scale

    assert scale.__name__ == scale_side_by_side.SIZE_MODULE
    assert isinstance(scale.ScaleRow(1, 1, "v", 0, 0, 0, 0, 0), ScaleRow)


class FakeIp:
    """`ip netns` as the benchmark calls it: the namespaces there are, and what was run."""

    def __init__(self, existing: set[str]):
        self.namespaces = set(existing)
        self.ran: list[list[str]] = []

    def __call__(self, argv, **_):
        self.ran.append(argv)
        verb, name = argv[2], argv[3] if len(argv) > 3 else ""
        if verb == "add":
            self.namespaces.add(name)
        elif verb == "delete":
            self.namespaces.discard(name)
        listing = "".join(f"{n} (id: 0)\n" for n in sorted(self.namespaces))
        return argparse.Namespace(returncode=0, stdout=listing, stderr="")


@pytest.mark.parametrize("how_the_run_ends", ["every row written", "a size failed"])
def test_a_run_deletes_the_network_namespaces_it_made_and_keeps_those_it_found(
    monkeypatch, how_the_run_ends
):
    ip = FakeIp(existing={"modelfleet-bench-20", "someone-elses"})
    monkeypatch.setattr(scale_side_by_side.subprocess, "run", ip)
    wanted = ["modelfleet-bench-20", "modelfleet-bench-1000"]

    fails = how_the_run_ends == "a size failed"
    with (
        pytest.raises(RuntimeError) if fails else nullcontext(),
        scale_side_by_side.network_namespaces(wanted),
    ):
        assert set(wanted) <= ip.namespaces
        assert ["ip", "netns", "add", "modelfleet-bench-20"] not in ip.ran  # found, used
        if fails:
            raise RuntimeError("the benchmark at N = 1000 ended without its row")

    assert ip.namespaces == {"modelfleet-bench-20", "someone-elses"}
    loopbacks_up = [argv[3] for argv in ip.ran if argv[-3:] == ["set", "lo", "up"]]
    assert loopbacks_up == wanted
