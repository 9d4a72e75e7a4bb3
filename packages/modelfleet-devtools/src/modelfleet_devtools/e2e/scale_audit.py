"""Who wrote what while a cache staged (modelfleet-scale-bench --audit): the control plane's
API server keeps an audit log of every write, and the staging's window of it is summed by
client, verb and resource, with how many of them the server refused as conflicts (409: the
writer's copy was stale). `apiserver_request_total` (scale_requests.py) counts the same
requests but cannot tell Crossplane's writes from provider-kubernetes'."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .scale_requests import resource_label

# Metadata is enough to count (who, what, the response code); reads are left out, as the
# request counters already give them and they would grow the log tenfold.
POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Metadata", "verbs": ["create", "update", "patch", "delete"]},
        {"level": "None"},
    ],
}
CONFLICT = 409
NO_ROTATION_MB = 1_000_000


@dataclass(frozen=True)
class AuditLog:
    policy: Path
    log: Path

    @classmethod
    def under(cls, folder: Path) -> AuditLog:
        """The policy written into `folder`, and where the API server is to write its log."""
        folder.mkdir(parents=True, exist_ok=True)
        policy = folder / "audit-policy.json"
        policy.write_text(json.dumps(POLICY))
        return cls(policy, folder / "audit.log")

    def apiserver_flags(self) -> list[str]:
        # The API server rotates its log at 100 MB unless told (a fleet of 1000 registering
        # writes more), and the summary reads one file: never rotate.
        return [
            "--audit-policy-file", str(self.policy), "--audit-log-path", str(self.log),
            "--audit-log-maxsize", str(NO_ROTATION_MB),
        ]  # fmt: skip


def _client(user_agent: str) -> str:
    """`provider-kubernetes/v0.0.0 (linux/amd64) kubernetes/$Format` -> `provider-kubernetes`."""
    return user_agent.split("/", 1)[0] or "?"


def writes_between(
    lines: Iterable[str], start: datetime, end: datetime
) -> tuple[Counter[tuple[str, str, str]], Counter[tuple[str, str, str]]]:
    """Writes received in [start, end) by (client, verb, resource[/subresource]), and the
    conflicts among them."""
    writes: Counter[tuple[str, str, str]] = Counter()
    conflicts: Counter[tuple[str, str, str]] = Counter()
    for line in lines:
        event = json.loads(line)
        received = datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))
        if not start <= received < end:
            continue
        ref = event.get("objectRef") or {}
        resource = resource_label(ref.get("resource", ""), ref.get("subresource", ""))
        key = (_client(event.get("userAgent", "")), event.get("verb", ""), resource)
        writes[key] += 1
        if (event.get("responseStatus") or {}).get("code") == CONFLICT:
            conflicts[key] += 1
    return writes, conflicts


def who_wrote(log: Path, start: datetime, end: datetime, per: float, top: int = 10) -> str:
    """The `top` writers of the window, each divided by `per` (cluster stagings)."""
    with log.open() as lines:
        writes, conflicts = writes_between(lines, start, end)
    parts = []
    for (client, verb, resource), count in writes.most_common(top):
        part = f"{client} {verb} {resource} {count / per:.2f}"
        if refused := conflicts[(client, verb, resource)]:
            part += f" ({refused / per:.2f} refused as conflicts)"
        parts.append(part)
    return ", ".join(parts)
