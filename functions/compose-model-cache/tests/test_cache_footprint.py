"""Where a ModelCache stages (spec.staging, cache/footprint.py): decisions as scenarios.

Each row: the staging spec, the fleet (matched clusters, those that can stage, where replicas
are placed, where it was staged before and each cluster's phase, release clocks), and what is
staged, which clusters are spares, which are releasing or released, and the condition said."""

from datetime import UTC, datetime, timedelta

import pytest
from compose_model_cache.cache.footprint import (
    SPARES_EXCEED_FLEET,
    WHERE_SERVED,
    releasing_since,
    staging_footprint,
)
from modelfleet_contracts.models.modelcache import Staging

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
ABCD = ["a", "b", "c", "d"]


def served(spares: int = 1, release_after: int = 3600) -> Staging:
    return Staging.model_validate(
        {"policy": "WhereServed", "warmSpares": spares, "releaseAfterSeconds": release_after}
    )


# (scenario, staging, matched, stageable, served, staged before, phases, releasing since,
#  expected: staged, spares, releasing, released, condition reason)
CASES = [
    ("no staging block: everywhere matched, as always",
     None, ABCD, ABCD, ["b"], [], {}, {},
     (set(ABCD), (), set(), (), None)),
    ("Everywhere said explicitly: every matched cluster",
     Staging.model_validate({"policy": "Everywhere"}), ABCD, ["a"], [], [], {}, {},
     (set(ABCD), (), set(), (), None)),
    ("served on b, one spare, nothing staged yet: the spare is the first by name",
     served(), ABCD, ABCD, ["b"], [], {}, {},
     ({"a", "b"}, ("a",), set(), (), WHERE_SERVED)),
    ("the spare is where the weights are Ready already (the scheduler's first pick)",
     served(), ABCD, ABCD, ["b"], ["b", "d"], {"b": "Ready", "d": "Ready"}, {},
     ({"b", "d"}, ("d",), set(), (), WHERE_SERVED)),
    ("then where they are being staged, before where nothing is",
     served(), ABCD, ABCD, ["b"], ["b", "c"], {"b": "Ready", "c": "Hydrating"}, {},
     ({"b", "c"}, ("c",), set(), (), WHERE_SERVED)),
    ("where staging failed is the last pick for a spare",
     served(), ABCD, ABCD, ["b"], ["a", "b"], {"a": "Failed", "b": "Ready"}, {},
     ({"a", "b", "c"}, ("c",), {"a"}, (), WHERE_SERVED)),
    ("a served cluster that cannot stage now is still staged on; the spare can stage",
     served(), ABCD, ["c", "d"], ["a"], [], {}, {},
     ({"a", "c"}, ("c",), set(), (), WHERE_SERVED)),
    ("a replica on a cluster the cache does not match is not served from this cache",
     served(0), ["a", "b"], ["a", "b"], ["x", "b"], [], {}, {},
     ({"b"}, (), set(), (), WHERE_SERVED)),
    ("a cluster no longer needed keeps its copy while its grace period runs",
     served(), ABCD, ABCD, ["b"], ["a", "b", "c"], {"a": "Ready", "b": "Ready", "c": "Ready"},
     {"c": NOW - HOUR + timedelta(seconds=1)},
     ({"a", "b", "c"}, ("a",), {"c"}, (), WHERE_SERVED)),
    ("...and the spare stays where it was Ready; the other clock starts now",
     served(), ABCD, ABCD, ["b"], ["b", "c", "d"], {"b": "Ready", "c": "Ready", "d": "Ready"},
     {},
     ({"b", "c", "d"}, ("c",), {"d"}, (), WHERE_SERVED)),
    ("past its grace period it is released (left out of its shard)",
     served(), ABCD, ABCD, ["b"], ["b", "c", "d"], {"b": "Ready", "c": "Ready", "d": "Ready"},
     {"d": NOW - HOUR},
     ({"b", "c"}, ("c",), set(), ("d",), WHERE_SERVED)),
    ("a release clock read from the future is not waited on longer than the grace period",
     served(0, 60), ["a", "b"], ["a", "b"], ["b"], ["a", "b"], {"a": "Ready"},
     {"a": NOW + HOUR},
     ({"a", "b"}, (), {"a"}, (), WHERE_SERVED)),
    ("no replica and no spare: staged nowhere (the copy goes after the grace period)",
     served(0), ABCD, ABCD, [], ["a"], {"a": "Ready"}, {},
     ({"a"}, (), {"a"}, (), WHERE_SERVED)),
    ("more spares than the fleet: every matched cluster, and it is said",
     served(5), ABCD, ["a", "b", "c"], ["a"], [], {}, {},
     (set(ABCD), ("b", "c", "d"), set(), (), SPARES_EXCEED_FLEET)),
    ("clusters not connected yet are no shortage of spares: picked after the others",
     served(1), ABCD, ["c"], [], [], {}, {},
     ({"c"}, ("c",), set(), (), WHERE_SERVED)),
    ("more spares than the fleet keeps every copy it has (nothing lost)",
     served(9), ABCD, ABCD, [], ABCD, dict.fromkeys(ABCD, "Ready"), {"a": NOW - 9 * HOUR},
     (set(ABCD), tuple(ABCD), set(), (), SPARES_EXCEED_FLEET)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("staging", "matched", "stageable", "on", "before", "phases", "since", "expected"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_where_the_cache_is_staged(
    staging, matched, stageable, on, before, phases, since, expected
) -> None:
    staged, spares, releasing, released, reason = expected
    footprint = staging_footprint(staging, matched, stageable, on, before, phases, since, NOW)
    assert set(footprint.staged) == staged
    assert footprint.spares == spares
    assert set(footprint.releasing) == releasing
    assert footprint.released == released
    assert (footprint.condition.reason if footprint.condition else None) == reason
    if reason == SPARES_EXCEED_FLEET:
        assert "warmSpares" in footprint.condition.message


def test_the_release_clock_is_reported_and_read_back() -> None:
    """What status.staging says is what the next reconcile measures against."""
    first = staging_footprint(
        served(0, 600), ["a", "b"], ["a", "b"], ["b"], ["a", "b"], {}, {}, NOW
    )
    status = first.status()
    assert status["releasing"] == [
        {"name": "a", "since": "2026-11-27T12:00:00Z", "releaseAfter": "2026-11-27T12:10:00Z"}
    ]
    later = NOW + timedelta(seconds=600)
    second = staging_footprint(
        served(0, 600),
        ["a", "b"],
        ["a", "b"],
        ["b"],
        ["a", "b"],
        {},
        releasing_since(status),
        later,
    )
    assert second.released == ("a",) and set(second.staged) == {"b"}


@pytest.mark.parametrize(
    "garbage",
    [{}, {"releasing": "a"}, {"releasing": [{"name": "a", "since": "yesterday"}]},
     {"releasing": [{"name": "a", "since": "2026-11-27T11:00:00"}]}, {"releasing": [7]}],
)  # fmt: skip
def test_a_release_clock_that_cannot_be_read_starts_again(garbage) -> None:
    assert releasing_since(garbage) == {}


@pytest.mark.parametrize(
    ("free", "spare"),
    [
        pytest.param(None, ("a",), id="capacity not known: the scheduler's order alone"),
        pytest.param({"a": 0, "c": 2, "d": 1}, ("c",), id="a full cluster is no spare"),
        pytest.param({"a": 0, "c": 0, "d": 0}, ("a",), id="every one full: the order alone"),
    ],
)
def test_a_spare_is_where_the_next_replica_can_go(free, spare) -> None:
    """a was Ready before: the first pick, unless it has no node left for another replica."""
    footprint = staging_footprint(
        served(1), ABCD, ABCD, ["b"], ["a", "b"], {"a": "Ready", "b": "Ready"}, {}, NOW, free
    )
    assert footprint.spares == spare
