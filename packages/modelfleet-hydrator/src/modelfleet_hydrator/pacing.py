"""When progress is worth a PATCH of the Job: when the figure moved, not at every poll.

Every patch changes the Job provider-kubernetes observes, and so the Object it reports, and
so wakes the ModelCache that composed it: a reconcile for a number nobody needs that fresh.
So bytes done are reported when they moved by STEP of the total since the last report (at
most 1/STEP such reports a download), or moved at all after QUIET seconds without a report
(a slow download still shows it is alive). Anything else (a new total, a revision) and the
final figure go at once. Standard library only.
"""

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from modelfleet_contracts.hydration import BYTES_DONE, BYTES_TOTAL, FILES_DONE

STEP = 0.01  # of the total: the status row shows whole percents
QUIET = 300.0  # seconds: the longest a moving download goes unreported
PROGRESS = frozenset({BYTES_DONE, FILES_DONE})  # what may wait; every other key goes at once


def _count(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


@dataclass
class Pace:
    """Decides whether figures are worth sending, given what was sent last and when."""

    step: float = STEP
    quiet: float = QUIET
    clock: Callable[[], float] = time.monotonic
    last: float = field(default=-math.inf)  # when the last patch went

    def worth(self, sent: Mapping[str, str], values: Mapping[str, str]) -> bool:
        """Whether `values` are worth a patch over `sent` (what the Job holds already)."""
        if any(sent.get(k) != v for k, v in values.items() if k not in PROGRESS):
            return True
        done, total = _count(values.get(BYTES_DONE)), _count(values.get(BYTES_TOTAL))
        before = _count(sent.get(BYTES_DONE))
        if done is None or total is None or before is None or done >= total:
            return True  # nothing to weigh it against, or the final figure
        moved = abs(done - before)
        return moved >= self.step * total or (moved > 0 and self.clock() - self.last >= self.quiet)

    def sent(self) -> None:
        """Note that a patch went now."""
        self.last = self.clock()
