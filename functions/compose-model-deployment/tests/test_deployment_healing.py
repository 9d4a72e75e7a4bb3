"""Placement that heals: a replica moves off a cluster that cannot serve it for longer than
spec.healing.moveAfterSeconds, make before break, and never because of a flap."""

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from deployment_world import deployment, desired_replicas, schedule
from healing_world import Fleet
from modelfleet_devtools.requests import conditions
from modelfleet_devtools.world import inference_cluster


def fleet(*names: str, **kwargs) -> Fleet:
    return Fleet(clusters={n: inference_cluster(n) for n in names}, **kwargs)


def failed_cache(f: Fleet) -> None:
    f.cache["a"] = "Failed"


def disconnected(f: Fleet) -> None:
    f.clusters["a"] = inference_cluster("a", connected=False)


def storage_gone(f: Fleet) -> None:
    f.clusters["a"] = inference_cluster("a", storage_class=None)


# (case, how the serving cluster `a` cannot serve, the words PlacementHealthy names it by)
TROUBLES = [
    ("cache failed after its retries", failed_cache, "ModelCache kimi-k2 Failed there"),
    ("cluster disconnected", disconnected, "not connected"),
    ("storage gone", storage_gone, "its shared storage is gone"),
]


@pytest.mark.parametrize(
    ("trouble", "words"), [pytest.param(*case[1:], id=case[0]) for case in TROUBLES]
)
def test_a_serving_replica_moves_once_its_cluster_cannot_serve_it_past_the_grace_period(
    trouble, words
):
    f = fleet("a", "b", cache={"a": "Ready", "b": "Ready"}, serving={"a": 1})
    f.reconcile()
    assert f.placement() == {"a": 1}
    assert f.health()[:2] == ("True", "Serving")

    trouble(f)
    f.reconcile()
    status, reason, message = f.health()
    assert (status, reason) == ("False", "ClusterUnservable")
    assert f"a ({words})" in message and "60s" in message
    assert ("Warning", f"PlacementHealthy ClusterUnservable: {message}") in f.events()
    assert f.placement() == {"a": 1}  # within the grace period: nothing moves

    f.wait(59)
    f.reconcile()
    assert f.placement() == {"a": 1}

    f.wait(2)  # past the grace period: b gets a replica, a keeps serving until it is Available
    f.reconcile()
    assert f.placement() == {"a": 1, "b": 1}
    assert f.replaces() == {"b": "a"}
    status, reason, message = f.health()
    assert (status, reason) == ("False", "Moving")
    assert "moving 1 replica(s) from a to b: a " + words in message
    assert ("Normal", f"PlacementHealthy Moving: {message}") in f.events()
    assert f.last is not None
    assert conditions(f.last)["Available"].status == fnv1.STATUS_CONDITION_TRUE  # a serves

    f.reconcile()  # b not Available yet: a stays, the move goes on
    assert f.placement() == {"a": 1, "b": 1}

    f.serving["b"] = 1
    f.reconcile()
    assert f.placement() == {"b": 1}  # a's replica is deleted
    assert f.replaces() == {"b": "a"}  # the response that deletes it says what replaced it
    status, reason, message = f.health()
    assert (status, reason) == ("True", "Moved")
    assert message.startswith("moved 1 replica(s) from a to b: a " + words)
    f.reconcile()
    assert f.replaces() == {}  # a's replica is gone: nothing left to replace
    assert f.health() == (status, reason, message)  # the move stays told


def test_a_move_whose_finishing_status_was_lost_is_still_told_as_done():
    """Crossplane deleted the old replica, but the status of that reconcile was not stored
    (a write lost to a conflict): the next call finds nothing left to move and the XR still
    saying Moving. It tells the move as done, with the same words."""
    f = fleet("a", "b", cache={"a": "Ready", "b": "Failed"}, serving={"a": 1})
    f.reconcile()
    f.cache["a"], f.cache["b"] = "Failed", "Ready"
    f.reconcile()
    f.wait(61)
    f.reconcile()
    status, reason, moving = f.health()
    assert (status, reason) == ("False", "Moving")
    stored = [dict(c) for c in f.xr["status"]["conditions"]]
    f.serving["b"] = 1
    f.reconcile()
    assert f.placement() == {"b": 1}
    f.xr["status"]["conditions"] = stored  # the status that told the move done, lost
    f.reconcile()
    status, reason, message = f.health()
    assert (status, reason) == ("True", "Moved")
    assert message == "moved " + moving.removeprefix("moving ").split("; the replicas on ")[0]
    assert message.startswith("moved 1 replica(s) from a to b: a ModelCache kimi-k2 Failed")


def test_a_recovered_cluster_does_not_pull_the_replica_back():
    f = fleet("a", "b", cache={"a": "Ready", "b": "Ready"}, serving={"a": 1})
    f.reconcile()
    f.cache["a"] = "Failed"
    f.reconcile()
    f.wait(61)
    f.reconcile()
    assert f.placement() == {"a": 1, "b": 1}
    f.cache["a"] = "Ready"  # a recovers while the move is under way
    f.reconcile()
    assert f.placement() == {"a": 1, "b": 1}
    assert "recovered since" in f.health()[2]
    f.serving["b"] = 1
    f.reconcile()
    assert f.placement() == {"b": 1}
    for _ in range(3):
        f.wait(600)
        f.reconcile()
        assert f.placement() == {"b": 1}
        assert f.health()[:2] == ("True", "Moved")  # the last move stays told


def test_a_flapping_cluster_never_causes_a_move():
    f = fleet("a", "b", cache={"a": "Ready", "b": "Ready"}, serving={"a": 1})
    f.reconcile()
    for _ in range(5):  # 50 s down, 5 s up: down 250 s out of 275, never 60 s in a row
        f.clusters["a"] = inference_cluster("a", connected=False)
        f.reconcile()
        f.wait(50)
        f.reconcile()
        assert f.placement() == {"a": 1}
        f.clusters["a"] = inference_cluster("a")
        f.reconcile()
        assert f.health()[:2] == ("True", "Serving")
        f.wait(5)
    assert f.placement() == {"a": 1}


def cluster_function_down(f: Fleet) -> None:
    """What Crossplane leaves on an InferenceCluster whose function it could not run (an
    upgrade switching function revisions): every condition the function set, Unknown."""
    for condition in f.clusters["a"]["status"]["conditions"]:
        condition |= {"status": "Unknown", "reason": "FatalError"}


def test_a_cluster_whose_own_function_could_not_run_is_no_reason_to_move():
    f = fleet("a", "b", cache={"a": "Ready", "b": "Ready"}, serving={"a": 1})
    f.reconcile()
    cluster_function_down(f)
    for _ in range(3):
        f.reconcile()
        assert f.health()[:2] == ("True", "Serving")
        f.wait(120)
    assert f.placement() == {"a": 1}
    # Unknown on a cluster last seen without its namespace Active is still not connected.
    f.clusters["a"] = inference_cluster("a", connected=False)
    cluster_function_down(f)
    f.reconcile()
    assert f.health()[:2] == ("False", "ClusterUnservable")


def test_a_replica_that_never_served_moves_at_once_when_due():
    f = fleet("a", "b", cache={"a": "Failed", "b": "Ready"})
    f.reconcile()
    assert f.placement() == {"b": 1}  # a tie goes to the cluster that can serve
    f = fleet("a", "b", cache={"a": "Ready", "b": "Ready"})
    f.reconcile()
    assert f.placement() == {"a": 1}  # a tie: by name
    f.cache["a"] = "Failed"
    f.reconcile()
    f.wait(61)
    f.reconcile()
    assert f.placement() == {"b": 1}  # nothing was serving on a: no need to wait for b
    status, reason, message = f.health()
    assert (status, reason) == ("True", "Moved")
    assert "moved 1 replica(s) from a to b" in message


def test_the_move_goes_where_the_weights_are_ready_or_can_be_staged():
    f = fleet(
        "a", "b", "c", "d",
        cache={"a": "Ready", "b": "Failed", "c": "Hydrating", "d": "Ready"},
        serving={"a": 1},
    )  # fmt: skip
    f.reconcile()
    assert f.placement() == {"a": 1}
    f.cache["a"] = "Failed"
    f.reconcile()
    f.wait(61)
    f.reconcile()
    # b's cache failed; c can be staged, but d holds the weights already: no GPU waits.
    assert f.placement() == {"a": 1, "d": 1}
    assert f.replaces() == {"d": "a"}


def test_with_nowhere_to_go_the_replica_stays_and_scheduled_says_so():
    f = fleet("a", "b", cache={"a": "Ready", "b": "Failed"}, serving={"a": 1})
    f.reconcile()
    f.cache["a"] = "Failed"
    f.reconcile()
    f.wait(61)
    f.reconcile()
    assert f.placement() == {"a": 1}
    assert f.last is not None
    scheduled = conditions(f.last)["Scheduled"]
    assert "replicas on a cannot move" in scheduled.message
    assert f.health()[:2] == ("False", "ClusterUnservable")


def test_the_default_grace_period_is_ten_minutes():
    f = fleet("a", "b", cache={"a": "Ready", "b": "Ready"}, serving={"a": 1}, move_after=None)
    f.reconcile()
    f.cache["a"] = "Failed"
    f.reconcile()
    assert "600s" in f.health()[2]
    # Stamps are whole seconds of the real clock: a margin of a few seconds either side keeps a
    # slow machine's passing second from moving the replica early.
    f.wait(595)
    f.reconcile()
    assert f.placement() == {"a": 1}
    f.wait(10)
    f.reconcile()
    assert f.placement() == {"a": 1, "b": 1}


def test_the_grace_period_is_the_schedulers_alone():
    xr = deployment(placement={"exclusiveTopology": "zone"}, healing={"moveAfterSeconds": 30})
    [replica] = desired_replicas(schedule(xr, [inference_cluster("a")])).values()
    assert replica["spec"]["placement"] == {"exclusiveTopology": "zone"}
    assert "healing" not in replica["spec"]
