"""What the control plane's API server was asked while the fleet sat idle and while a cache
staged (modelfleet-scale-bench): its `apiserver_request_total` counters, read before and after,
by verb and resource, so the control plane's CPU can be told apart by who writes what."""

from __future__ import annotations

import re
from collections import Counter

from .kube import KubeClient

# One sample line of the counter: its labels, then its value.
_SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def resource_label(resource: str, subresource: str) -> str:
    """`objects`, or `objects/status` for a subresource: how requests are named here."""
    return f"{resource}/{subresource}" if subresource else resource


def request_counts(metrics_text: str) -> Counter[tuple[str, str]]:
    """Requests so far by (verb, resource[/subresource]), from the API server's /metrics text."""
    counts: Counter[tuple[str, str]] = Counter()
    for line in metrics_text.splitlines():
        sample = _SAMPLE.match(line)
        if sample is None:
            continue
        labels = dict(_LABEL.findall(sample["labels"]))
        resource = resource_label(labels.get("resource", ""), labels.get("subresource", ""))
        counts[(labels.get("verb", ""), resource)] += int(float(sample["value"]))
    return counts


def read_request_counts(client: KubeClient) -> Counter[tuple[str, str]]:
    return request_counts(client.kubectl("get", "--raw", "/metrics", timeout=60))


def busiest(
    before: Counter[tuple[str, str]],
    after: Counter[tuple[str, str]],
    per: float,
    top: int = 8,
    unit: str = "/s",
) -> str:
    """The `top` (verb, resource) pairs by requests between two readings, divided by `per`
    (seconds, or cluster stagings with another `unit`)."""
    rates = Counter({key: (after[key] - before[key]) / per for key in after})
    return ", ".join(
        f"{verb} {resource} {rate:.2f}{unit}"
        for (verb, resource), rate in rates.most_common(top)
        if rate > 0
    )
