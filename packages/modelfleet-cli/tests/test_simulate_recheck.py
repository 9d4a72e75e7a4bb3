"""`modelfleet simulate` shows how soon a real Crossplane would run each XR again: the TTL its
functions' last response asked for (`recheckAfterSeconds` in the JSON), and in the timeline
when an XR starts asking for less than the default minute because it waits on something
Crossplane does not watch (a required resource: its ModelCache, its clusters) or may not hear
of in time (a cache's downloads: rows.staging_under_way; a deployment's rollout), naming the
condition it waits for, and when it is back to the default."""

import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from modelfleet_cli.functions import FunctionServers
from modelfleet_cli.simulate.clock import whole_seconds
from modelfleet_cli.simulate.waits import BACK_TO_DEFAULT, NEXT_CHECK, wait_line, waited_for
from modelfleet_contracts.recheck import RECHECK_SETTLED
from simulate_runs import blocks, simulate_with_timeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
QUICKSTART = EXAMPLES / "quickstart"
DEPLOYMENT = "ModelDeployment ml-team/qwen3-0-6b"
CACHE = "ModelCache ml-team/qwen3-0-6b"
REPLICA_PREFIX = "ModelReplica ml-team/qwen3-0-6b-gke-dev-"


def _said(line: str) -> str | None:
    """`soon` for a line saying an XR is checked sooner than the default, `default` for one
    saying it is back to the default, None for any other line."""
    if line.startswith(BACK_TO_DEFAULT):
        return "default"
    return "soon" if line.startswith(NEXT_CHECK) else None


def _rechecks(result: dict) -> dict[str, int | None]:
    return {ident: xr["recheckAfterSeconds"] for ident, xr in result["xrs"].items()}


def test_while_the_cache_hydrates_what_waits_on_it_asks_to_be_run_again_soon(
    servers: FunctionServers,
) -> None:
    """Round 3 of the quickstart: the cache hydrates (its Job is composed, so Crossplane
    watches it, but drops its events when a shard's many Objects change at once: it asks for
    less than a minute too), while the deployment and its replica wait on the cache, which
    they only read: they ask for less than a minute."""
    _, result = simulate_with_timeline(servers, QUICKSTART, rounds=3)
    rechecks = _rechecks(result)
    assert result["xrs"][CACHE]["status"]["clusters"][0]["phase"] == "Hydrating"
    [replica] = [i for i in rechecks if i.startswith(REPLICA_PREFIX)]
    for waiting in (CACHE, DEPLOYMENT, replica):
        assert rechecks[waiting] is not None and 5 <= rechecks[waiting] < 60, waiting


def test_once_settled_every_xr_is_back_to_the_default_minute(servers: FunctionServers) -> None:
    """...and a Ready InferenceCluster, which waits on nothing, asks for the fleet's round,
    RECHECK_SETTLED (it is run again at once when an Object it composes changes)."""
    text, result = simulate_with_timeline(servers, QUICKSTART)
    assert result["result"] == "Ready"
    rechecks = _rechecks(result)
    assert {ttl for xr, ttl in rechecks.items() if not xr.startswith("InferenceCluster")} == {60}
    settled = RECHECK_SETTLED.total_seconds()
    assert {ttl for xr, ttl in rechecks.items() if xr.startswith("InferenceCluster")} == {settled}
    said = {(xr, _said(line)) for _, xr, lines in blocks(text) for line in lines}
    # The deployment said it waited, then that it no longer does; the cluster never waited
    # (its provider config and namespace are composed, hence watched).
    assert {(DEPLOYMENT, "soon"), (DEPLOYMENT, "default")} <= said
    assert not {w for xr, w in said if xr.startswith("InferenceCluster") and w}


def test_the_timeline_says_when_a_wait_starts_with_its_first_value_and_when_it_ends(
    servers: FunctionServers,
) -> None:
    """Round 1: the deployment waits on a cluster that is not connected yet and asks 5 s (a
    young wait); it says so once, not every round (through the cache's staging and its
    replicas' rollout), and says when it no longer waits: when every replica serves."""
    text, _ = simulate_with_timeline(servers, QUICKSTART)
    mine = [(n, lines) for n, xr, lines in blocks(text) if xr == DEPLOYMENT]
    waits = [(n, line) for n, lines in mine for line in lines if _said(line)]
    first_round, first = waits[0]
    # It waits for its replicas to be placed: the cluster is not connected yet.
    assert first_round == 1 and first == "next check in 5 s: waiting for Scheduled (NoClusters)"
    assert [_said(line) for _, line in waits] == ["soon", "default"]
    assert waits[1][1] == "next check in 60 s (the default): nothing left to wait for"
    cache_ready = next(n for n, lines in mine if any("ModelCacheReady=True" in x for x in lines))
    available = next(n for n, lines in mine if any("Available=True" in x for x in lines))
    assert cache_ready < available == waits[1][0]


def test_a_wait_that_lasts_asks_for_more_as_it_ages_up_to_the_default(
    servers: FunctionServers, tmp_path: Path
) -> None:
    """A deployment whose ModelCache does not exist: its conditions stay as they are from
    round 1, so in round N the wait is N-1 of simulate's minutes old and the function asks
    for a tenth of that (at least 5 s), never more than the default minute."""
    fleet = tmp_path / "no-cache"
    shutil.copytree(QUICKSTART, fleet)
    (fleet / "modelcache.yaml").unlink()
    seen = {}
    for rounds in (2, 4, 12):
        _, result = simulate_with_timeline(servers, fleet, rounds=rounds)
        conditions = {c["type"]: c for c in result["xrs"][DEPLOYMENT]["status"]["conditions"]}
        assert conditions["ModelCacheReady"]["reason"] == "ModelCacheNotFound"
        seen[rounds] = result["xrs"][DEPLOYMENT]["recheckAfterSeconds"]
    assert seen == {2: 6, 4: 18, 12: 60}


def test_a_ttl_is_reported_in_whole_seconds() -> None:
    assert whole_seconds(timedelta(seconds=18, milliseconds=140)) == 18
    assert whole_seconds(timedelta(minutes=1)) == 60


HYDRATING = "ArtifactReady (Hydrating)"
WAIT_LINES = [
    # (what it asked before, the TTL it asks now, what it waits for), the line printed
    pytest.param((None, 5, HYDRATING), "next check in 5 s: waiting for ArtifactReady (Hydrating)",
                 id="a wait starts: how soon, and for what"),
    pytest.param((True, 12, HYDRATING), None, id="still waiting: the value grows, unsaid"),
    pytest.param((True, 60, None), "next check in 60 s (the default): nothing left to wait for",
                 id="the wait is over"),
    pytest.param((True, 60, "WorkloadReady (Progressing)"),
                 "next check in 60 s (the default), or as soon as what it composed changes: "
                 "waiting for WorkloadReady (Progressing)",
                 id="back to the default while what it composed rolls out"),
    pytest.param((None, 60, None), None, id="never waited: nothing to say"),
    pytest.param((True, None, HYDRATING), None,
                 id="a failed pipeline: Crossplane's own backoff"),
]  # fmt: skip


@pytest.mark.parametrize(("asked", "line"), WAIT_LINES)
def test_a_wait_line_is_printed_when_the_wait_starts_and_ends_only(asked, line) -> None:
    assert wait_line(*asked) == line


CONDITIONS = [
    pytest.param([("Ready", "False", "Creating"), ("ClustersMatched", "True", "Matched"),
                  ("ArtifactReady", "False", "Hydrating")], "ArtifactReady (Hydrating)",
                 id="the first own condition that is False"),
    pytest.param([("Ready", "False", "Creating"), ("Connected", "True", "Resolving"),
                  ("StorageReady", "False", "Creating")], "Connected (Resolving)",
                 id="a condition held while Crossplane resolves what the function reads"),
    pytest.param([("Ready", "True", "Available"), ("Synced", "True", "ReconcileSuccess")], None,
                 id="Ready, and Crossplane's own conditions: nothing"),
]  # fmt: skip


@pytest.mark.parametrize(("conditions", "waiting"), CONDITIONS)
def test_the_line_names_the_condition_the_xr_waits_for(conditions, waiting) -> None:
    by_type = {t: {"type": t, "status": s, "reason": r} for t, s, r in conditions}
    assert waited_for(by_type) == waiting
