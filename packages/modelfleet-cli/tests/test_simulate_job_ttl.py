"""Simulate's workload clusters and provider-kubernetes treat a finished hydration Job as the
real ones do: Kubernetes' TTL controller deletes it `ttlSecondsAfterFinished` after it
finished; an Object that may create (fully managed) creates it again, an Observe-and-Delete
one reports success and keeps its last echo and Ready (crossplane-runtime's managed
reconciler: "does not exist" is an error only when Observe is the one policy); a Job whose
ServiceAccount does not exist runs no pod. And the quickstart fleet, run long past its Jobs'
TTL, stays Ready and creates no Job again."""

import copy
from pathlib import Path

import pytest
from modelfleet_cli.discovery import repository_compositions
from modelfleet_cli.functions import running_functions
from modelfleet_cli.simulate.clusters import workload_clusters
from modelfleet_cli.simulate.command import FUNCTIONS
from modelfleet_cli.simulate.control_plane import ControlPlane
from modelfleet_cli.simulate.fleet import load_fleet, load_settings
from modelfleet_cli.simulate.provider import Providers
from modelfleet_cli.simulate.workload import Pool, WorkloadCluster
from modelfleet_contracts.api import OBJECT_API_VERSION, OBJECT_KIND

NS = "modelfleet"
QUICKSTART = Path(__file__).resolve().parents[3] / "examples" / "quickstart"


def cluster() -> WorkloadCluster:
    c = WorkloadCluster("gke-us", [Pool("h100", 1, 8)], {"rwx"}, hydration_rounds=1)
    c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    c.apply(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": NS}}
    )
    return c


def job(ttl: int | None = 120, account: str = "sa") -> dict:
    spec: dict = {
        "backoffLimit": 0,
        "template": {"spec": {"serviceAccountName": account, "containers": [{"name": "h"}]}},
    }
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hydrate", "namespace": NS},
        "spec": spec,
    }


def job_object(policies: list[str] | None) -> dict:
    spec: dict = {
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "gke-us"},
        "forProvider": {"manifest": job()},
    }
    if policies:
        spec["managementPolicies"] = policies
    return {"apiVersion": OBJECT_API_VERSION, "kind": OBJECT_KIND, "spec": spec}


def conditions(obj: dict) -> dict[str, str]:
    return {c["type"]: c["status"] for c in obj["status"]["conditions"]}


@pytest.mark.parametrize(
    ("ttl", "ticks_after", "there"),
    [
        pytest.param(120, 1, True, id="a minute after it finished: there"),
        pytest.param(120, 2, False, id="two minutes after: deleted"),
        pytest.param(None, 10, True, id="no TTL: stays"),
    ],
)
def test_a_finished_job_is_deleted_after_its_ttl(ttl, ticks_after, there):
    c = cluster()
    c.apply(job(ttl))
    c.tick()  # runs its one round and completes
    assert "Complete" in {x["type"] for x in c.get(job())["status"]["conditions"]}
    for _ in range(ticks_after):
        c.tick()
    assert (c.get(job()) is not None) is there


def test_a_job_whose_service_account_does_not_exist_runs_no_pod():
    c = cluster()
    c.apply(job(account="missing"))
    c.tick()
    assert c.get(job())["status"]["active"] == 0
    assert 'serviceaccount "missing" not found' in c.events[-1]


@pytest.mark.parametrize(
    ("policies", "recreated", "synced"),
    [
        pytest.param(None, True, "True", id="fully managed: creates the Job again"),
        pytest.param(["Observe", "Delete"], False, "True", id="Observe and Delete: quiet"),
        pytest.param(["Observe"], False, "False", id="Observe only: external resource missing"),
    ],
)
def test_an_object_whose_job_its_ttl_removed(policies, recreated, synced):
    c = cluster()
    providers = Providers({"gke-us": c}, lambda pc: "gke-us", lambda ns, n: None)
    managed = job_object(None)
    providers.sync(managed)
    c.tick()
    providers.observe(managed)
    echo = copy.deepcopy(managed["status"]["atProvider"])
    assert conditions(managed) == {"Synced": "True", "Ready": "True"}  # SuccessfulCreate
    c.delete(job(), reason="ttlSecondsAfterFinished passed")
    obj = copy.deepcopy(managed)
    if policies:
        obj["spec"]["managementPolicies"] = policies
    providers.observe(obj)
    providers.sync(obj)
    assert (c.get(job()) is not None) is recreated
    assert conditions(obj)["Synced"] == synced
    if not recreated:
        assert conditions(obj)["Ready"] == "True", "Ready as last seen"
        assert obj["status"]["atProvider"] == echo, "the last echo stays"


@pytest.fixture(scope="module")
def functions():
    with running_functions(start=FUNCTIONS) as servers:
        yield servers


def test_the_quickstart_long_after_its_job_finished_stays_ready_and_creates_no_job(functions):
    fleet = load_fleet(QUICKSTART)
    plane = ControlPlane(
        fleet,
        repository_compositions(),
        functions,
        workload_clusters(fleet, load_settings(QUICKSTART)),
        [],
    )
    while not plane.all_ready() and plane.round < 30:
        plane.run_round()
    assert plane.all_ready()
    [workload] = plane.clusters.values()
    jobs = [k for k in workload.objects if k[0] == "Job"]
    assert len(jobs) == 1
    for _ in range(62):  # an hour and two minutes: past the Job's TTL
        plane.run_round()
    assert plane.all_ready() and plane.losses == []
    assert not [k for k in workload.objects if k[0] == "Job"], "deleted by its TTL"
    deleted_jobs = [k for k, _ in workload.deleted if k[0] == "Job"]
    assert deleted_jobs == jobs, "once, by its TTL; never created again"
    job_objects = [
        o
        for o in plane.store.values()
        if o.get("kind") == OBJECT_KIND
        and o["spec"]["forProvider"]["manifest"].get("kind") == "Job"
    ]
    assert [o["spec"].get("managementPolicies") for o in job_objects] == [["Observe", "Delete"]]
    assert conditions(job_objects[0]) == {"Synced": "True", "Ready": "True"}
