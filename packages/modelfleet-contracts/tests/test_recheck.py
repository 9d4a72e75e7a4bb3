"""How soon an XR waiting on something Crossplane does not watch asks to be run again: within
seconds while the wait is young, never slower than the SDK's default minute."""

from datetime import UTC, datetime, timedelta

import pytest
from modelfleet_contracts.recheck import RECHECK_FIRST, RECHECK_LAST, recheck_after

NOW = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)


def changed(ago: timedelta) -> dict[str, str]:
    return {"type": "Scheduled", "lastTransitionTime": (NOW - ago).strftime("%Y-%m-%dT%H:%M:%SZ")}


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([], RECHECK_FIRST, id="a-new-xr-with-no-conditions-yet"),
        pytest.param([changed(timedelta(seconds=10))], RECHECK_FIRST, id="wait-began-10s-ago"),
        pytest.param([changed(timedelta(minutes=3))], timedelta(seconds=18), id="3-minutes-in"),
        pytest.param([changed(timedelta(hours=5))], RECHECK_LAST, id="hours-in-back-to-a-minute"),
        pytest.param(
            [changed(timedelta(hours=5)), changed(timedelta(seconds=20))],
            RECHECK_FIRST,
            id="any-recent-transition-restarts-the-quick-checks",
        ),
        pytest.param(
            [{"type": "Ready", "lastTransitionTime": "not a time"}],
            RECHECK_FIRST,
            id="an-unreadable-time-counts-as-none",
        ),
        pytest.param([changed(-timedelta(minutes=5))], RECHECK_FIRST, id="a-clock-ahead-of-ours"),
    ],
)
def test_recheck_grows_with_the_age_of_the_wait(conditions, expected):
    assert recheck_after(conditions, NOW) == expected
