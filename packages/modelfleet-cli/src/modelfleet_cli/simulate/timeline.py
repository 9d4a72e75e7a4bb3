"""What the user sees: each XR's phase and summary when it changes, conditions' reasons when
they change, and a progress line while the simulation runs."""

import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from modelfleet_contracts.api import (
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_CACHE_SHARD,
    MODEL_DEPLOYMENT,
    MODEL_SERVICE,
)
from modelfleet_contracts.conditions import condition_true, listed
from modelfleet_contracts.fields import int_at, list_at, mapping_at

from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.simulate.waits import SYSTEM, asks_soon, holding, wait_line, waited_for

# A line names at most this many clusters of an XR; past it, it counts them by phase and
# names clusters that are not settled (Unused: a deployment's cluster it did not need).
NAMED = 3
SETTLED = ("Ready", "Unused")


def _conditions(xr: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        str(c.get("type")): c
        for c in list_at(mapping_at(xr, "status"), "conditions")
        if isinstance(c, dict)
    }


def _ready_text(status: dict[str, Any]) -> str:
    ready = mapping_at(status, "summary").get("ready")
    return f"  {ready} ready" if ready else ""


def _progress_text(row: dict[str, Any]) -> str:
    """A ModelCache cluster's download figures while it hydrates (` 37.2/120.0 GiB`)."""
    progress = row.get("progress")
    return f" {progress}" if isinstance(progress, str) and row.get("phase") == "Hydrating" else ""


def _row_text(row: dict[str, Any]) -> str:
    return f"{row.get('name')} {row.get('phase', '?')}{_progress_text(row)}"


def _clusters_text(rows: list[dict[str, Any]]) -> str:
    """Every cluster's phase (`gke-dev Hydrating 1.2/2.5 GiB`) on a small fleet; past NAMED
    clusters, the count per phase and the clusters that are not Ready first, NAMED of them
    named (`300 clusters: 288 Ready, 12 Hydrating; not Ready: c004 Hydrating 1.2/2.5 GiB,
    c017 Hydrating, c120 Hydrating and 9 more`), so that a line stays a line."""
    if len(rows) <= NAMED:
        return ", ".join(_row_text(r) for r in rows) or "no clusters"
    phases = Counter(str(r.get("phase", "?")) for r in rows)
    counts = ", ".join(f"{n} {phase}" for phase, n in sorted(phases.items(), key=_most_first))
    waiting = [_row_text(r) for r in rows if r.get("phase") not in SETTLED]
    named = f"; not Ready: {listed(waiting, NAMED)}" if waiting else ""
    return f"{len(rows)} clusters: {counts}{named}"


def _most_first(phase_count: tuple[str, int]) -> tuple[int, str]:
    return -phase_count[1], phase_count[0]


def shown(details: list[str]) -> list[str]:
    """The per-cluster messages printed: NAMED of them, then how many more there are (every
    one is in the XR's status.clusters)."""
    if len(details) <= NAMED:
        return details
    return [*details[:NAMED], f"and {len(details) - NAMED} more clusters' messages"]


def _holding(conditions: dict[str, dict[str, Any]]) -> str:
    """`Type Reason` of what keeps an InferenceCluster from Ready (`waits.holding`), else
    Ready's own."""
    blocking = holding(conditions) or conditions.get("Ready", {})
    return f"{blocking.get('type', 'Ready')} {blocking.get('reason', 'Pending')}"


def summarize(xr: dict[str, Any]) -> tuple[str, list[str]]:
    """One line of phase/summary for an XR, plus per-cluster messages worth reading, the
    model name a deployment serves and where a replica answers."""
    status = mapping_at(xr, "status")
    conditions = _conditions(xr)
    kind = xr.get("kind")
    details: list[str] = []
    if kind in (MODEL_CACHE, MODEL_CACHE_SHARD, MODEL_DEPLOYMENT):
        rows = [r for r in list_at(status, "clusters") if isinstance(r, dict)]
        details = [
            f"{r.get('name')}: {r['message']}"
            for r in rows
            if r.get("message") and r.get("phase") != "Ready"
        ]
        line = _clusters_text(rows) + _ready_text(status)
        if kind == MODEL_DEPLOYMENT and status.get("servedModelName"):
            details.insert(0, f"model name clients send: {status['servedModelName']}")
        if kind == MODEL_CACHE and mapping_at(status, "staging"):
            details.insert(0, staging_text(mapping_at(status, "staging")))
    elif kind == MODEL_SERVICE:
        return _service_summary(status)
    elif kind == INFERENCE_CLUSTER:
        line = "Ready" if condition_true(status, "Ready") else f"not ready: {_holding(conditions)}"
    else:
        phase = status.get("phase") or "Pending"
        ready, total = int_at(status, "readyReplicas"), int_at(status, "replicas")
        line = f"{phase}  {ready}/{total} ready"
        if status.get("message"):
            details = [str(status["message"])]
        if status.get("address"):
            details.append(f"serving at {status['address']}")
        if status.get("gatewayAddress"):
            details.append(f"through the Gateway at {status['gatewayAddress']}")
    return line, details


def _routed_text(row: dict[str, Any]) -> str:
    """`gke-us: qwen-v1 90, qwen-v2 10 at http://10.0.0.1/models/qwen/v1; held out: ...`: what
    a ModelService's route on one cluster sends where, and what it holds out."""
    backends = [b for b in list_at(row, "backends") if isinstance(b, dict)]
    routed = [
        f"{b.get('modelDeployment')} {_whole(b.get('weight'))}" for b in backends if b.get("weight")
    ]
    held = [
        f"{b.get('modelDeployment')} ({b.get('reason')})" for b in backends if not b.get("weight")
    ]
    if not row.get("routed"):
        text = f"{row.get('name')}: not routed ({row.get('reason')})"
    else:
        text = f"{row.get('name')}: {', '.join(routed)}"
        if row.get("address"):
            text += f" at {row['address']}"
    return text + (f"; held out: {', '.join(held)}" if held else "")


def _whole(value: Any) -> Any:
    """A number as its status holds it (protobuf carries every number as a float)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _service_summary(status: dict[str, Any]) -> tuple[str, list[str]]:
    """A ModelService: `2/2 clusters routed  weights qwen-v1=90 qwen-v2=10`, then each
    cluster's routed weights and address."""
    routed = mapping_at(status, "summary").get("routed") or "0/0"
    line = f"{routed} clusters routed  weights {status.get('weights') or '?'}"
    rows = [r for r in list_at(status, "clusters") if isinstance(r, dict)]
    return line, shown([_routed_text(r) for r in rows])


def staging_text(staging: dict[str, Any]) -> str:
    """A ModelCache's staging decision (WhereServed) in a line: where it is served, its
    spares, and the clusters releasing their copies, with when."""
    served = [str(c) for c in list_at(staging, "servedOn")]
    spares = [str(c) for c in list_at(staging, "spares")]
    releasing = [
        f"{r.get('name')} at {r.get('releaseAfter', '?')}"
        for r in list_at(staging, "releasing")
        if isinstance(r, dict)
    ]
    text = (
        f"staging {staging.get('policy', '')}: served on {listed(served, NAMED) or 'none'}; "
        f"spares {listed(spares, NAMED) or 'none'}"
    )
    return text + (f"; releasing {listed(releasing, NAMED)}" if releasing else "")


def condition_changes(before: dict[str, Any] | None, after: dict[str, Any]) -> list[str]:
    """`Type=Status Reason: message` for every condition whose status or reason changed."""
    old = _conditions(before) if before else {}
    lines = []
    for typ, c in _conditions(after).items():
        prev = old.get(typ, {})
        if (prev.get("status"), prev.get("reason")) == (c.get("status"), c.get("reason")):
            continue
        if typ in ("Synced", "Responsive") and c.get("status") == "True":
            continue  # the normal case; only a failing reconcile or a flood is worth a line
        text = f"{typ}={c.get('status')} {c.get('reason')}"
        if c.get("message") and typ not in SYSTEM:
            text += f": {c['message']}"
        lines.append(text)
    return lines


@dataclass
class Timeline:
    """Remembers what each XR showed, prints what changed, keeps the history for JSON."""

    out: TextIO | None = None  # None: record only (JSON output)
    seen: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    last: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    messages: list[tuple[int, str, str]] = field(default_factory=list)  # round, xr, text
    width: int = 0
    soon: dict[str, bool] = field(default_factory=dict)  # XR -> it asked for a short TTL

    def record(
        self,
        round_no: int,
        xrs: list[dict[str, Any]],
        recheck_after: Mapping[str, int | None] | None = None,
    ) -> None:
        """`recheck_after`: XR -> the TTL in seconds its last response asked for."""
        recheck_after = recheck_after or {}
        present = set()
        self.width = width = max([self.width, *(len(xr_id(x)) for x in xrs)])
        for xr in xrs:
            ident = xr_id(xr)
            present.add(ident)
            line, details = summarize(xr)
            told: list[str] = []
            if self.seen.get(ident) != (line, details):
                self.history.setdefault(ident, []).append({"round": round_no, "summary": line})
                before = set(self.seen.get(ident, ("", []))[1])
                told += [d for d in details if d not in before]
            changes = condition_changes(self.last.get(ident), xr)
            told += changes
            seconds = recheck_after.get(ident)
            wait = wait_line(self.soon.get(ident), seconds, waited_for(_conditions(xr)))
            soon = asks_soon(seconds)
            if soon is not None:  # a failed pipeline leaves what it asked before as it was
                self.soon[ident] = soon
            if told or wait or self.seen.get(ident) != (line, details):
                # Every line sits under its XR's header, even when only a condition changed.
                self._print(f"round {round_no:<3} {ident:<{width}}  {line}")
            # Printed: a few clusters' messages; recorded (what the statuses told): all.
            for text in shown(told[: len(told) - len(changes)]) + changes:
                self._print(f"{'':10}{text}")
            if wait:  # not a message: Crossplane's schedule, not what a status says
                self._print(f"{'':10}{wait}")
            self.messages += [(round_no, ident, text) for text in told]
            self.seen[ident] = (line, details)
            self.last[ident] = xr
        for ident in [i for i in self.seen if i not in present]:
            self._print(f"round {round_no:<3} {ident:<{width}}  deleted")
            self.history.setdefault(ident, []).append({"round": round_no, "summary": "deleted"})
            self.messages.append((round_no, ident, "deleted"))
            del self.seen[ident]
            self.last.pop(ident, None)
            self.soon.pop(ident, None)

    def note(self, round_no: int, text: str) -> None:
        """Something that happened to the fleet (a fault, a remote deletion)."""
        self._print(f"round {round_no:<3} ! {text}")

    def tell(self, round_no: int, ident: str, text: str) -> None:
        """Something the user is told directly, outside any status (a refused deletion is
        the answer to their `kubectl delete`)."""
        self._print(f"round {round_no:<3} ! {ident}: {text}")
        self.messages.append((round_no, ident, text))

    def _print(self, text: str) -> None:
        if self.out is not None:
            Progress.clear()
            print(text, file=self.out, flush=True)


class Progress:
    """Progress on stderr: on a terminal, one line updated as each XR is reconciled; otherwise a
    line per round, and while a round takes long a line every LINE_EVERY seconds saying what it
    is doing (`reconciling ModelCache ml-team/m05 (312/3020)`)."""

    _shown = False
    TTY_EVERY = 0.1  # seconds between updates of a terminal's line
    LINE_EVERY = 10.0  # seconds between lines within a round, when stderr is not a terminal

    def __init__(
        self,
        stream: TextIO | None = None,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.clock = clock
        self._last = clock()
        self.round, self.limit = 1, 0

    def step(self, what: str, done: int, total: int) -> None:
        """Within round `self.round`: `what` is under way, `done` of `total` steps begun."""
        if not self.enabled:
            return
        now = self.clock()
        if now - self._last < (self.TTY_EVERY if self.tty else self.LINE_EVERY):
            return
        self._write(f"simulate: round {self.round}/{self.limit}, {what} ({done}/{total})")
        self._last = now

    def update(self, round_no: int, limit: int, ready: int, total: int) -> None:
        """Round `round_no` is over; the next one is under way from now on."""
        self.round, self.limit = round_no + 1, limit
        if not self.enabled:
            return
        self._write(f"simulate: round {round_no}/{limit}, {ready}/{total} XRs ready")
        self._last = self.clock()

    def _write(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + text)
            Progress._shown = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    @classmethod
    def clear(cls) -> None:
        if cls._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            cls._shown = False

    def done(self) -> None:
        Progress.clear()
