"""`modelfleet simulate` shows how soon a real Crossplane would run each XR again: the TTL its
functions' last response asked for (`recheckAfterSeconds` in the JSON), and in the timeline
when an XR starts and stops asking for less than the default minute because it waits on
something Crossplane does not watch (a required resource: its ModelCache, its clusters) or may
not hear of in time (a cache's downloads: rows.staging_under_way; a deployment's rollout)."""

import shutil
from datetime import timedelta
from pathlib import Path

from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_cli.functions import FunctionServers
from modelfleet_cli.simulate.clock import on_machine_clock, whole_seconds
from modelfleet_cli.simulate.control_plane import START
from modelfleet_cli.simulate.waits import NO_LONGER, WAITS, wait_line
from modelfleet_contracts.recheck import RECHECK_SETTLED, recheck_after
from simulate_runs import blocks, simulate_with_timeline

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
QUICKSTART = EXAMPLES / "quickstart"
DEPLOYMENT = "ModelDeployment ml-team/qwen3-0-6b"
WAITS_LINES = (WAITS, NO_LONGER)
CACHE = "ModelCache ml-team/qwen3-0-6b"
REPLICA_PREFIX = "ModelReplica ml-team/qwen3-0-6b-gke-dev-"


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
    said = {(xr, line.split(":")[0]) for _, xr, lines in blocks(text) for line in lines}
    # The deployment said it waited, then that it no longer does; the cluster never waited
    # (its provider config and namespace are composed, hence watched).
    assert {(DEPLOYMENT, WAITS), (DEPLOYMENT, NO_LONGER)} <= said
    assert not {w for xr, w in said if xr.startswith("InferenceCluster") and "wait" in w}


def test_the_timeline_says_when_a_wait_starts_with_its_first_value_and_when_it_ends(
    servers: FunctionServers,
) -> None:
    """Round 1: the deployment waits on a cluster that is not connected yet and asks 5 s (a
    young wait); it says so once, not every round (through the cache's staging and its
    replicas' rollout), and says when it no longer waits: when every replica serves."""
    text, _ = simulate_with_timeline(servers, QUICKSTART)
    mine = [(n, lines) for n, xr, lines in blocks(text) if xr == DEPLOYMENT]
    waits = [(n, line) for n, lines in mine for line in lines if line.startswith(WAITS_LINES)]
    first_round, first = waits[0]
    assert first_round == 1 and first == f"{WAITS}: looked at again in 5 s"
    assert [line.split(":")[0] for _, line in waits] == [WAITS, NO_LONGER]
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


def test_the_function_measures_the_wait_on_simulates_clock() -> None:
    """The XR's stamps are moved, for the call only, by the machine's clock minus
    simulate's: the machine's clock then reads the age simulate means."""
    xr = {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "m"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "False", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                {
                    "type": "Scheduled",
                    "status": "False",
                    "lastTransitionTime": "2025-01-01T00:01:00Z",
                },
            ]
        },
    }
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(xr)
    before = fnv1.RunFunctionRequest()
    before.CopyFrom(req)
    machine_now = START.replace(year=2031) + timedelta(seconds=7)
    with on_machine_clock(req, START + timedelta(minutes=4), machine_now):
        seen = resource.struct_to_dict(req.observed.composite.resource)
        ttl = recheck_after(seen["status"]["conditions"], machine_now)
    assert ttl == timedelta(seconds=18)  # the newest transition, 3 minutes old
    assert req == before, "the request is as it was once the call is over"


def test_a_ttl_is_reported_in_whole_seconds_the_functions_own_time_dropped() -> None:
    assert whole_seconds(timedelta(seconds=18, milliseconds=140)) == 18
    assert whole_seconds(timedelta(minutes=1)) == 60


def test_a_wait_line_is_printed_when_the_wait_starts_and_ends_only() -> None:
    assert wait_line(None, 5) == f"{WAITS}: looked at again in 5 s"
    assert wait_line(True, 12) is None  # still waiting: the value grows, unsaid
    assert wait_line(True, 60) == f"{NO_LONGER}: looked at again in 60 s (the default)"
    assert wait_line(None, 60) is None  # never waited: nothing to say
    assert wait_line(True, None) is None  # a failed pipeline: Crossplane's own backoff
