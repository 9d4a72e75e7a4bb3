"""Progress goes to the Job when it moved, not at every poll: a long download costs a bounded
number of patches, a slow one still shows it moves, and the last figure always arrives."""

import itertools
import random
import threading

from modelfleet_contracts.hydration import BYTES_DONE, BYTES_TOTAL, FILES_DONE, REVISION
from modelfleet_hydrator import job_report
from modelfleet_hydrator.pacing import QUIET, STEP, Pace

GIB = 1024**3
POLL = 10.0  # seconds: hydrate.py's --report-every default


class Recorder:
    """Stands in for the JobClient: every patch it would send, in order."""

    def __init__(self) -> None:
        self.patches: list[dict[str, str]] = []
        self.annotations: dict[str, str] = {}

    def annotate(self, values: dict[str, str]) -> None:
        self.patches.append(dict(values))
        self.annotations.update(values)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def reporter(clock: Clock | None = None) -> tuple[job_report.Reporter, Recorder]:
    client = Recorder()
    pace = Pace(clock=clock) if clock else Pace()
    return job_report.Reporter(client, lambda _: None, pace), client  # type: ignore[arg-type]


def figures(done: int, total: int, files_done: int = 0, files: int = 30) -> dict[str, str]:
    return job_report.figures(done, total, files_done, files)


def test_a_long_download_is_reported_in_a_bounded_number_of_patches():
    """140 GiB over two hours at an uneven rate, polled every 10 s: 720 polls, each with
    a new figure. At most the first report, one per STEP of the total, one per QUIET
    seconds and the last go out."""
    clock, rng = Clock(), random.Random(20)
    send, client = reporter(clock)
    total, done, polls = 140 * GIB, 0, 0
    send.send({**figures(0, total), REVISION: "a" * 40})
    while done < total:
        clock.now += POLL
        done = min(total, done + int(total / 720 * rng.uniform(0.2, 1.8)))
        send.send(figures(done, total, files_done=30 * done // total))
        polls += 1
    assert polls >= 700, "every poll had a new figure to offer"
    bound = 1 + round(1 / STEP) + int(clock.now / QUIET) + 1
    assert len(client.patches) <= bound, (len(client.patches), bound)
    sent = [int(p[BYTES_DONE]) for p in client.patches if BYTES_DONE in p]
    assert sent == sorted(sent) and sent[-1] == total, "the final figure is reported"
    assert client.annotations[FILES_DONE] == "30"


def test_a_slow_download_is_still_seen_moving_every_quiet_interval():
    clock = Clock()
    send, client = reporter(clock)
    total = 100 * GIB
    send.send(figures(0, total))
    done = 0
    while clock.now < 4 * QUIET:  # a hundredth of a percent a poll: no STEP in sight
        clock.now += POLL
        done += total // 10_000
        send.send(figures(done, total))
    sent = [int(p[BYTES_DONE]) for p in client.patches]
    assert len(sent) == 1 + 4, sent
    moves = [after - before for before, after in itertools.pairwise(sent)]
    assert all(0 < move < STEP * total for move in moves), "sent for the time, not the step"


def test_a_small_move_waits_but_the_final_figure_always_goes():
    clock = Clock()
    send, client = reporter(clock)
    total = 10 * GIB
    send.send(figures(0, total))
    clock.now += POLL
    send.send(figures(total // 1000, total))
    assert len(client.patches) == 1, "a tenth of a percent waits"
    send.send(figures(total // 1000 + 1, total), final=True)
    assert client.annotations[BYTES_DONE] == str(total // 1000 + 1)
    clock.now += POLL
    send.send(figures(total, total, 30))
    assert client.annotations[BYTES_DONE] == str(total), "completion goes unasked"


def test_a_revision_or_a_new_total_goes_at_once():
    clock = Clock()
    send, client = reporter(clock)
    send.send(figures(0, GIB))
    send.send({**figures(1, GIB), REVISION: "b" * 40})
    assert client.patches[-1] == {BYTES_DONE: "1", REVISION: "b" * 40}
    send.send(figures(2, 2 * GIB))
    assert client.patches[-1] == {BYTES_DONE: "2", BYTES_TOTAL: str(2 * GIB)}


def test_the_watcher_polling_fast_patches_per_step_and_ends_on_the_last_measure():
    """The real Watcher thread, polling every millisecond a figure that grows by about a
    fiftieth of a percent per measure to a fifth of the model (a thousand polls), then by a
    byte per measure: a patch per percent, not per poll, and the figure measured last (by
    a byte, never worth a patch on its own) reported when it stops."""
    send, client = reporter()
    total, measured, crawled = 1_000_000, [0], [0]
    enough = threading.Event()

    def measure() -> dict[str, str]:
        if measured[0] < total // 5:
            measured[0] += total // 5000 + 7
        else:
            measured[0] += 1
            crawled[0] += 1
            if crawled[0] >= 5:
                enough.set()
        return figures(measured[0], total)

    send.send(figures(0, total))
    watcher = job_report.Watcher(send, measure, every=0.001)
    watcher.start()
    assert enough.wait(timeout=60)
    watcher.stop()
    assert 10 <= len(client.patches) <= 1 + round(measured[0] / total / STEP) + 1
    assert client.annotations[BYTES_DONE] == str(measured[0])
