"""A fleet at steady state is answered without deciding again, on requests Crossplane really sent.

The pairs in `captured/` are what Crossplane v2.3.4 sent compose-model-cache one poll apart
once a 64-cluster ModelCache was Ready (`modelfleet-scale-bench --clusters 64
--steady-minutes 6 --keep-requests`, WORK/n64/calls/requests/, xz-compressed): a Ready
ModelCacheShard of 32 clusters and the ModelCache, each with the InferenceClusters it
required. Nothing changed between the two polls of a pair, but their wire bytes differ (Go
writes map entries in any order); their content, and so their deterministic encoding, is the
same, which is what the replay keys on (modelfleet_contracts.edge.replay).
"""

import asyncio
import lzma
from pathlib import Path

import pytest
from compose_model_cache.main import served
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.replay import decoded, replayable, request_key
from modelfleet_devtools.requests import desired_resources, desired_status

CAPTURED = Path(__file__).parent / "captured"


def captured(name: str) -> tuple[bytes, fnv1.RunFunctionRequest]:
    wire = lzma.decompress((CAPTURED / name).read_bytes())
    req = fnv1.RunFunctionRequest()
    req.ParseFromString(wire)
    return wire, req


@pytest.mark.parametrize(
    ("first", "second", "kind", "clusters", "composed"),
    [
        # A shard's 32 clusters: a claim and a finished Job's Object on each.
        ("shard-steady-1.pb.xz", "shard-steady-2.pb.xz", "ModelCacheShard", 32, 64),
        # The cache: its two shards.
        ("cache-steady-1.pb.xz", "cache-steady-2.pb.xz", "ModelCache", 64, 2),
    ],
    ids=["shard", "cache"],
)
def test_a_ready_xr_polled_again_is_answered_from_the_response_kept(
    first, second, kind, clusters, composed
):
    (wire_1, poll_1), (wire_2, poll_2) = captured(first), captured(second)
    assert poll_1.observed.composite.resource["kind"] == kind
    assert wire_1 != wire_2  # as sent
    assert request_key(poll_1) == request_key(poll_2)  # the same content
    # The settled call of a reconcile: the InferenceClusters required are given.
    assert sum(len(r.items) for r in poll_1.required_resources.values()) == clusters

    runner = served()  # what the console script serves
    replays = runner._replays
    assert replays is not None
    decided = decoded(asyncio.run(runner.RunFunction(poll_1)))
    answered = decoded(asyncio.run(runner.RunFunction(poll_2)))
    assert (replays.misses, replays.hits) == (1, 1)

    # The answer reads no clock and asks for no recheck: a Ready XR waits on nothing.
    assert replayable(decided)
    # What was kept is what deciding the second poll anew gives: nothing of the first
    # request's own bytes leaks into the second's answer.
    assert answered == runner.run(poll_2)
    assert answered == decided
    # And it is the steady state's answer: Ready, every cluster Ready, nothing dropped.
    assert answered.desired.composite.ready == fnv1.READY_TRUE
    rows = desired_status(answered)["clusters"]
    assert len(rows) == clusters and {r["phase"] for r in rows} == {"Ready"}
    assert len(desired_resources(answered)) == composed == len(poll_1.observed.resources)
