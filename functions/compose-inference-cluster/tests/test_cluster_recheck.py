"""How soon an InferenceCluster asks to be run again: rarely once it is Ready and waits on
nothing, since a change it acts on re-runs it at once, but only while Crossplane delivers
those changes (its watch circuit breaker closed)."""

from datetime import UTC, datetime, timedelta

import pytest
from compose_inference_cluster.core import NAMESPACE, STORAGE
from compose_inference_cluster.hydrator_access import HYDRATOR_ACCESS
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import desired_resources
from modelfleet_devtools.world import observed_object
from test_cluster_scenarios import cluster, run

CIRCUIT_OPEN = {
    "type": "Responsive",
    "status": "False",
    "reason": "WatchCircuitOpen",
    "message": "Too many watch events from Object/gke-a-1 (crossplane-system).",
}
CIRCUIT_CLOSED = {"type": "Responsive", "status": "True", "reason": "WatchCircuitClosed"}


def responsive_condition(responsive: dict[str, str] | timedelta) -> dict[str, str]:
    """A condition as given, or the breaker opened that long before the test runs (stamped
    here, not when pytest collects the table)."""
    if isinstance(responsive, dict):
        return responsive
    when = datetime.now(UTC) - responsive
    return {**CIRCUIT_OPEN, "lastTransitionTime": when.strftime("%Y-%m-%dT%H:%M:%SZ")}


@pytest.mark.parametrize(
    "not_ready, responsive, ttl",
    [
        # Ready and waiting on nothing: Crossplane runs it again when a composed Object
        # changes, so it asks to be polled only rarely.
        (None, None, timedelta(minutes=60)),
        (None, CIRCUIT_CLOSED, timedelta(minutes=60)),
        # Crossplane's circuit breaker for it is open: the events that would run it again (a
        # spec edit, its Namespace Object failing) are dropped, so it looks once per
        # connection.checkInterval (20 s): a lost cluster shows within the same bound.
        (None, CIRCUIT_OPEN, timedelta(seconds=20)),
        (None, timedelta(minutes=2), timedelta(seconds=20)),
        # Opened at its birth, over 5 minutes ago: Crossplane lets the next event through and
        # closes the breaker, but leaves Responsive False until an event runs it, which at
        # rest may never come; polling it every minute meanwhile would cost a fleet at rest.
        (None, timedelta(minutes=6), timedelta(minutes=60)),
        # Still coming up: the default TTL.
        (NAMESPACE, None, timedelta(minutes=1)),
        (sorted(HYDRATOR_ACCESS)[0], None, timedelta(minutes=1)),
    ],
)
def test_a_settled_cluster_asks_to_be_run_again_only_rarely(not_ready, responsive, ttl):
    xr = cluster({"storageClassName": "filestore-rwx"})
    if responsive:
        xr["status"] = {"conditions": [responsive_condition(responsive)]}
    composed = desired_resources(run(xr))
    observed = {}
    for key, obj in composed.items():
        seen = observed_object(obj, ready=key != not_ready)
        if key == STORAGE:
            seen["status"]["atProvider"]["manifest"]["provisioner"] = "filestore.csi.example"
        observed[key] = seen
    # The second call composes what the first could not before its provider config existed.
    composed = desired_resources(run(xr, observed))
    for key, obj in composed.items():
        observed.setdefault(key, observed_object(obj, ready=key != not_ready))
    rsp = run(xr, observed)
    assert (rsp.desired.composite.ready == fnv1.READY_TRUE) == (not_ready is None)
    assert rsp.meta.ttl.ToTimedelta() == ttl
