"""The e2e canary's check of routes polled while a ModelService changes what it routes
(modelfleet_devtools.e2e.routed.RoutePoll): a backend routed before and after stays routed at
every poll, at one of its two weights; a route sends to nothing routed in neither."""

from typing import Any

import pytest
from modelfleet_devtools.e2e.routed import RoutePoll, backends_of, meaning

Json = dict[str, Any]
ADDRESS = "http://10.0.0.1/models/qwen3-0.6b/v1"


def status(**backends: tuple[int, str]) -> Json:
    """A ModelService's status on one cluster, gke-eu: backend -> (weight, reason)."""
    rows = [
        {"modelDeployment": name, "weight": weight, "reason": reason, "message": "words"}
        for name, (weight, reason) in backends.items()
    ]
    return {
        "weights": "as asked",
        "summary": {"routed": "1/1"},
        "conditions": [{"type": "Routed", "status": "True", "reason": "Routed"}],
        "clusters": [
            {"name": "gke-eu", "routed": True, "reason": "Accepted", "address": ADDRESS,
             "message": "words", "backends": rows}
        ],
    }  # fmt: skip


AT_90_10 = meaning(status(stable=(90, "Routed"), canary=(10, "Routed")))
AT_50_50 = meaning(status(stable=(50, "Routed"), canary=(50, "Routed")))
AT_0_100 = meaning(status(stable=(0, "WeightZero"), canary=(100, "Routed")))
STABLE_ONLY = meaning(status(stable=(50, "Routed")))


def test_meaning_keeps_what_is_routed_and_why_not_the_words() -> None:
    reworded = status(stable=(90, "Routed"), canary=(10, "Routed"))
    reworded["clusters"][0]["message"] = "other words"
    assert meaning(reworded) == AT_90_10
    assert backends_of(AT_0_100, "gke-eu") == {"canary": 100}
    assert backends_of(AT_0_100, "gke-us") == {}


@pytest.mark.parametrize(
    ("before", "after", "polled", "violation"),
    [
        # a weight change: each backend at its old or new weight at every poll
        (AT_90_10, AT_50_50, {"stable": 90, "canary": 10}, None),
        (AT_90_10, AT_50_50, {"stable": 50, "canary": 10}, None),
        (AT_90_10, AT_50_50, {"stable": 50, "canary": 50}, None),
        (AT_90_10, AT_50_50, {"stable": 50}, "dropped canary"),
        (AT_90_10, AT_50_50, None, "has no route"),
        (AT_90_10, AT_50_50, {"stable": 70, "canary": 30}, "stable at 70"),
        # to weight 0: the held-out backend may leave, the other may not
        (AT_50_50, AT_0_100, {"canary": 100}, None),
        (AT_50_50, AT_0_100, {"stable": 50}, "dropped canary"),
        # a deployment deleted: it may stay until the route is updated, the other stays
        (AT_50_50, STABLE_ONLY, {"stable": 50, "canary": 50}, None),
        (AT_50_50, STABLE_ONLY, {"stable": 50}, None),
        (AT_50_50, STABLE_ONLY, {"canary": 50}, "dropped stable"),
        (AT_50_50, STABLE_ONLY, {"stable": 50, "other": 50}, "other at 50"),
    ],
)
def test_a_poll_finds_a_healthy_backend_dropped_or_a_weight_never_asked(
    before: Json, after: Json, polled: dict[str, int] | None, violation: str | None
) -> None:
    poll = RoutePoll(before=before, after=after)
    poll.check({"gke-eu": polled})
    assert poll.polls == 1
    if violation is None:
        assert poll.violations == []
    else:
        assert any(violation in v for v in poll.violations), poll.violations
