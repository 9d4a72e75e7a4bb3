"""ModelReplica phases: the phase and conditions said from the observed workload, and a
running workload kept through any uncertainty."""

from typing import Any

import pytest
from compose_model_replica.core import SERVICE, WORKLOAD
from compose_model_replica.fn import CACHE, CLUSTER
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_devtools.requests import (
    condition_status,
    conditions_as_status,
    desired_resources,
    desired_status,
    events,
    run_function_request,
)
from modelfleet_devtools.world import inference_cluster, observed_object
from replica_world import (
    GKE,
    RUNNER,
    model_cache,
    replica,
    run,
    running,
    with_workload_status,
)


@pytest.mark.parametrize(
    ("name", "cluster", "cache", "phase"),
    [
        ("cache flaps back to Hydrating", (GKE,), model_cache("Hydrating"), "Ready"),
        ("cache deleted", (GKE,), None, "Ready"),
        (
            "cluster disconnected",
            (inference_cluster("gke-us", connected=False),),
            model_cache("Ready"),
            "Ready",
        ),
        ("cluster deleted", (), model_cache("Ready"), "Ready"),
    ],
)
def test_a_running_workload_survives_uncertainty(name, cluster, cache, phase):
    xr = replica(nodes=2)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    observed = running(xr)
    required: dict[str, Any] = {CLUSTER: list(cluster), CACHE: [cache] if cache else []}
    rsp = RUNNER.run(run_function_request(xr, observed=observed, required=required))
    assert set(desired_resources(rsp)) == {WORKLOAD, SERVICE}, name
    assert desired_resources(rsp)[WORKLOAD]["spec"] == composed[WORKLOAD]["spec"]
    assert desired_status(rsp)["phase"] == phase
    assert "keeping the running workload" in desired_status(rsp)["message"]


UNRESOLVED = [
    # (case, requirements resolved, WorkloadReady before, WorkloadReady now, what is awaited)
    (
        "nothing resolved, serving",
        {},
        "True",
        "True",
        "InferenceCluster gke-us and ModelCache kimi-k2",
    ),
    ("cluster unresolved, serving", {CACHE}, "True", "True", "InferenceCluster gke-us;"),
    ("cache unresolved, serving", {CLUSTER}, "True", "True", "ModelCache kimi-k2;"),
    ("cache unresolved, waiting for it", {CLUSTER}, "False", "False", "ModelCache kimi-k2;"),
    ("no WorkloadReady reported yet", {}, None, "False", "InferenceCluster gke-us and"),
]


@pytest.mark.parametrize(
    ("answered", "before", "now", "awaited"),
    [pytest.param(*case[1:], id=case[0]) for case in UNRESOLVED],
)
def test_unresolved_requirements_keep_everything_and_say_what_is_awaited(
    answered, before, now, awaited
):
    xr = replica(nodes=1)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    status = {"phase": "Ready", "message": "", "replicas": 1, "readyReplicas": 1}
    if before is not None:
        condition = {"type": "WorkloadReady", "status": before, "reason": "Ready"}
        xr["status"] = status | {"conditions": [condition]}
    resolved = {CLUSTER: [GKE], CACHE: [model_cache("Ready")]}
    required = {k: v for k, v in resolved.items() if k in answered}
    rsp = RUNNER.run(run_function_request(xr, observed=composed, required=required))
    assert desired_resources(rsp) == composed  # workload and Service, unchanged
    assert desired_status(rsp) == (status if before is not None else {})
    assert rsp.desired.composite.ready == fnv1.READY_FALSE
    [c] = rsp.conditions
    assert (c.type, condition_status(c), c.reason) == ("WorkloadReady", now, "Resolving")
    assert c.message.startswith(f"waiting for Crossplane to resolve {awaited}"), c.message
    assert events(rsp) == [("Normal", f"WorkloadReady Resolving: {c.message}")]


@pytest.mark.parametrize(
    ("status", "phase"),
    [
        (None, "Progressing"),
        ({"readyReplicas": 0, "updatedReplicas": 2, "replicas": 2}, "Progressing"),
        (
            {
                "readyReplicas": 1,
                "updatedReplicas": 2,
                "replicas": 2,
                "conditions": [{"type": "Available", "status": "False"}],
            },
            "Degraded",
        ),
        (
            {
                "readyReplicas": 2,
                "updatedReplicas": 1,
                "replicas": 2,
                "conditions": [
                    {"type": "Available", "status": "True"},
                    {"type": "UpdateInProgress", "status": "True"},
                ],
            },
            "Progressing",
        ),
        (
            {
                "readyReplicas": 2,
                "updatedReplicas": 2,
                "conditions": [{"type": "Available", "status": "True"}],
            },
            "Ready",
        ),
        (
            {
                "conditions": [
                    {
                        "type": "Progressing",
                        "status": "False",
                        "reason": "ProgressDeadlineExceeded",
                        "message": "image pull back-off",
                    }
                ]
            },
            "Failed",
        ),
    ],
    ids=[
        "not observed",
        "pods starting",
        "one of two down",
        "rolling update",
        "all available",
        "stuck",
    ],
)
def test_phase_from_the_observed_workload(status, phase):
    xr = replica(nodes=1, replicas=2)
    rsp = with_workload_status(xr, status)
    assert desired_status(rsp)["phase"] == phase


def test_waiting_for_cluster_when_it_is_not_connected_and_nothing_runs_yet():
    rsp = run(
        replica(),
        cluster=(inference_cluster("gke-us", connected=False),),
        cache=model_cache("Ready"),
    )
    assert desired_resources(rsp) == {}  # no workload
    assert desired_status(rsp)["phase"] == "WaitingForCluster"


GANG_STATUSES = [
    ("gang not observed yet", None, "Progressing"),
    (
        "one of two gangs up",
        {
            "replicas": 2,
            "readyReplicas": 1,
            "updatedReplicas": 2,
            "conditions": [{"type": "Available", "status": "True"}],
        },
        "Degraded",
    ),
    (
        "gangs rolling to a new version",
        {
            "replicas": 2,
            "readyReplicas": 2,
            "updatedReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "UpdateInProgress", "status": "True"},
            ],
        },
        "Progressing",
    ),
    (
        "every gang available",
        {
            "replicas": 2,
            "readyReplicas": 2,
            "updatedReplicas": 2,
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "False"},
            ],
        },
        "Ready",
    ),
]


@pytest.mark.parametrize(
    ("status", "phase"), [c[1:] for c in GANG_STATUSES], ids=[c[0] for c in GANG_STATUSES]
)
def test_gang_phase_from_the_observed_leader_worker_set(status, phase):
    xr = replica(nodes=2, replicas=2)
    rsp = with_workload_status(xr, status)
    assert desired_status(rsp)["phase"] == phase
    assert desired_status(rsp)["replicas"] == 2
    assert desired_status(rsp)["readyReplicas"] == (status or {}).get("readyReplicas", 0)
    assert (rsp.desired.composite.ready == fnv1.READY_TRUE) == (phase == "Ready")


def test_a_deployment_that_cannot_create_pods_is_failed_with_the_reason():
    xr = replica(nodes=1)
    composed = desired_resources(run(xr, cache=model_cache("Ready")))
    status = {
        "replicas": 0,
        "conditions": [
            {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": "exceeded quota: gpu, requested: nvidia.com/gpu=8",
            }
        ],
    }
    observed = {WORKLOAD: observed_object(composed[WORKLOAD], remote_status=status)}
    rsp = run(xr, cache=model_cache("Ready"), observed=observed)
    assert desired_status(rsp)["phase"] == "Failed"
    assert "exceeded quota" in desired_status(rsp)["message"]
    assert events(rsp) and events(rsp)[0][0] == "Warning"


def test_events_are_emitted_on_transitions_only():
    xr = replica(nodes=2)
    first = run(xr, cache=model_cache("Hydrating"))
    assert [sev for sev, _ in events(first)] == ["Normal"]
    xr["status"] = {"conditions": conditions_as_status(first)}
    again = run(xr, cache=model_cache("Hydrating", "still downloading"))
    assert events(again) == []
    composed = run(xr, cache=model_cache("Ready"))
    assert [sev for sev, _ in events(composed)] == ["Normal"]
