"""The simulated workload cluster and provider-kubernetes, scenario by scenario.

They stand in for real clusters in `modelfleet simulate`, so they must behave like
Kubernetes and provider-kubernetes where the functions depend on it: claims bind only when
their class exists, Jobs complete, gangs need the LWS CRD and room for every pod, references
to missing Secrets and Observe-only objects that do not exist are reported on Synced, and
readiness comes from the Object's CEL query.
"""

from typing import Any

import pytest
from modelfleet_cli.simulate.provider import Providers
from modelfleet_cli.simulate.readiness import ReadinessError, evaluate
from modelfleet_cli.simulate.workload import ApplyError, HydrationFault, Pool, WorkloadCluster
from modelfleet_contracts.objects import (
    AVAILABLE,
    JOB_COMPLETE,
    OBSERVE_ONLY,
    PVC_BOUND,
    RETAIN_ON_DELETE,
    kubernetes_object,
    secret_key_patch,
)
from modelfleet_contracts.observed import secret_fields_with_values

NS = "modelfleet"
H100 = Pool("h100", node_count=2, gpus_per_node=8, node_selector={"pool": "h100"})


def cluster(classes: tuple[str, ...] = ("filestore-rwx",), crd: bool = False) -> WorkloadCluster:
    c = WorkloadCluster("gke-us", [H100], set(classes), hydration_rounds=2)
    c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    if crd:
        c.install_crd("leaderworkerset.x-k8s.io")
    return c


def pvc(name: str = "weights", storage_class: str = "filestore-rwx") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "5Gi"}},
        },
    }


def pod(gpus: int, claim: str = "weights") -> dict[str, Any]:
    return {
        "spec": {
            "nodeSelector": {"pool": "h100"},
            "containers": [
                {"name": "engine", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
            ],
            "volumes": [{"name": "models", "persistentVolumeClaim": {"claimName": claim}}],
        }
    }


def job(name: str = "hydrate", backoff: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"backoffLimit": backoff, "template": pod(0)},
    }


def deployment(replicas: int, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "serve", "namespace": NS},
        "spec": {"replicas": replicas, "template": pod(gpus)},
    }


def gang(groups: int, size: int, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "gang", "namespace": NS},
        "spec": {
            "replicas": groups,
            "leaderWorkerTemplate": {
                "size": size,
                "leaderTemplate": pod(gpus),
                "workerTemplate": pod(gpus),
            },
        },
    }


def available(c: WorkloadCluster, manifest: dict[str, Any]) -> bool:
    obj = c.get(manifest)
    assert obj is not None
    return evaluate(AVAILABLE, obj)


# --- claims ---------------------------------------------------------------------------------

CLAIMS = [
    pytest.param(("filestore-rwx",), "filestore-rwx", "Bound", id="class exists: binds"),
    pytest.param((), "filestore-rwx", "Pending", id="class missing: stays Pending"),
    pytest.param(("nfs-rwx",), "filestore-rwx", "Pending", id="another class only: Pending"),
]


@pytest.mark.parametrize(("classes", "wanted", "phase"), CLAIMS)
def test_claim_binds_only_when_its_storage_class_exists(classes, wanted, phase):
    c = cluster(classes)
    c.apply(pvc(storage_class=wanted))
    c.tick()
    assert c.get(pvc())["status"]["phase"] == phase


# --- hydration Jobs -------------------------------------------------------------------------

JOBS = [
    pytest.param(None, 3, ["Pending", "Running", "Complete"], id="no fault: completes"),
    pytest.param(
        1,
        3,
        ["Pending", "Running", "Running", "Running", "Complete"],
        id="one attempt fails, then completes",
    ),
    pytest.param(
        None,
        1,
        ["Pending", "Running", "Running", "Running", "Failed"],
        id="every attempt fails: Failed",
    ),
]


def _job_state(c: WorkloadCluster) -> str:
    status = c.get(job())["status"]
    kinds = {x["type"] for x in status.get("conditions", []) if x["status"] == "True"}
    if "Complete" in kinds:
        return "Complete"
    if "Failed" in kinds:
        return "Failed"
    return "Running" if status.get("active") else "Pending"


@pytest.mark.parametrize(("failures", "backoff", "states"), JOBS)
def test_hydration_job_runs_for_a_few_rounds_then_completes_or_fails(failures, backoff, states):
    c = cluster(classes=())  # the claim cannot bind yet: the Job's pod waits
    if failures is not None or backoff == 1:
        c.hydration_faults.append(HydrationFault(failures))
    c.apply(pvc())
    c.apply(job(backoff=backoff))
    seen = []
    for i, _ in enumerate(states):
        if i == 1:  # the class appears: the claim binds, the Job's pod starts
            c.add_existing(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": {"name": "filestore-rwx"},
                }
            )
        c.tick()
        seen.append(_job_state(c))
    assert seen[-1] == states[-1]
    assert seen[0] == "Pending"
    assert evaluate(JOB_COMPLETE, c.get(job())) is (states[-1] == "Complete")


# --- workloads ------------------------------------------------------------------------------

WORKLOADS = [
    pytest.param(
        deployment(2, 8), True, True, id="Deployment, 2 pods x 8 GPUs on 2 nodes: Available"
    ),
    pytest.param(
        deployment(3, 8), True, False, id="Deployment, 3 pods x 8 GPUs on 2 nodes: Progressing"
    ),
    pytest.param(gang(1, 2, 8), True, True, id="gang of 2 x 8 GPUs with the CRD: Available"),
    pytest.param(gang(2, 2, 8), True, False, id="two gangs of 2 on 2 nodes: not all fit"),
    pytest.param(gang(1, 3, 8), True, False, id="gang of 3 on a 2-node pool: never fits"),
]


@pytest.mark.parametrize(("manifest", "crd", "ready"), WORKLOADS)
def test_workload_becomes_available_only_with_room_for_every_pod(manifest, crd, ready):
    c = cluster(crd=crd)
    c.apply(pvc())
    c.apply(manifest)
    c.tick()
    c.tick()
    assert available(c, manifest) is ready
    if not ready:
        conditions = {x["type"]: x for x in c.get(manifest)["status"]["conditions"]}
        assert "Insufficient nvidia.com/gpu" in conditions["Progressing"]["message"]


def test_leaderworkerset_needs_its_crd():
    c = cluster(crd=False)
    with pytest.raises(ApplyError, match="no matches for kind"):
        c.apply(gang(1, 2, 8))


def test_workload_pods_wait_for_their_claim():
    c = cluster(classes=())
    c.apply(pvc())
    c.apply(deployment(1, 8))
    c.tick()
    assert not available(c, deployment(1, 8))


def test_claim_mounted_by_running_pods_stays_terminating_when_deleted():
    c = cluster()
    c.apply(pvc())
    c.apply(deployment(1, 8))
    c.tick()
    c.delete(pvc())
    assert c.get(pvc())["metadata"].get("deletionTimestamp")
    c.delete(deployment(1, 8))
    c.tick()
    assert c.get(pvc()) is None


# --- provider-kubernetes --------------------------------------------------------------------


def providers(
    c: WorkloadCluster, secrets: dict[tuple[str, str], dict[str, Any]] | None = None
) -> Providers:
    return Providers(
        {c.name: c},
        lambda pc: c.name if pc == "gke-us" else None,
        lambda ns, n: (secrets or {}).get((ns, n)),
    )


def conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {x["type"]: x for x in obj["status"]["conditions"]}


SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "hf-token", "namespace": "ml-team"},
    "data": {"HF_TOKEN": "aGZfdGVzdA=="},
}
REMOTE_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "creds", "namespace": NS},
}
PATCH = [secret_key_patch("hf-token", "HF_TOKEN", "HF_TOKEN", namespace="ml-team")]

OBJECTS = [
    pytest.param(
        kubernetes_object(REMOTE_SECRET, "gke-us", references=PATCH),
        {("ml-team", "hf-token"): SECRET},
        (True, "", True),
        id="patchesFrom an existing Secret: applied",
    ),
    pytest.param(
        kubernetes_object(REMOTE_SECRET, "gke-us", references=PATCH),
        {},
        (False, "not found", False),
        id="patchesFrom a missing Secret: Synced=False, not found",
    ),
    pytest.param(
        kubernetes_object(
            pvc("byo"), "gke-us", management_policies=OBSERVE_ONLY, readiness_query=PVC_BOUND
        ),
        {},
        (False, "not found", False),
        id="Observe-only object that does not exist: not found",
    ),
    pytest.param(
        kubernetes_object(
            pvc(), "gke-us", readiness_query=PVC_BOUND, management_policies=RETAIN_ON_DELETE
        ),
        {},
        (True, "", True),
        id="claim with a PVC_BOUND query: Ready once bound",
    ),
    pytest.param(
        kubernetes_object(pvc(storage_class="missing"), "gke-us", readiness_query=PVC_BOUND),
        {},
        (True, "", False),
        id="claim of a missing class: Synced but not Ready",
    ),
    pytest.param(
        kubernetes_object(pvc(), "elsewhere"),
        {},
        (False, "not found", False),
        id="unknown provider config: Synced=False",
    ),
]


@pytest.mark.parametrize(("obj", "secrets", "expected"), OBJECTS)
def test_provider_kubernetes_reports_synced_and_ready(obj, secrets, expected):
    c = cluster()
    p = providers(c, secrets)
    p.sync(obj)
    c.tick()
    p.observe(obj)
    synced, message, ready = expected
    got = conditions(obj)
    assert (got["Synced"]["status"] == "True") is synced
    assert message in got["Synced"].get("message", "")
    assert (got["Ready"]["status"] == "True") is ready


@pytest.mark.parametrize(
    ("sanitize", "echoed_data", "exposed"),
    [
        (True, {"redacted": None}, ()),  # --sanitize-secrets: the whole field, one marker
        (False, {"HF_TOKEN": "aGZfdGVzdA=="}, ("data",)),  # the provider's default
    ],
    ids=["--sanitize-secrets", "without the flag"],
)
def test_provider_copies_secret_values_and_echoes_them_as_the_flag_says(
    sanitize, echoed_data, exposed
):
    c = cluster()
    obj = kubernetes_object(REMOTE_SECRET, "gke-us", references=PATCH)
    p = providers(c, {("ml-team", "hf-token"): SECRET})
    p.sanitize_secrets = sanitize
    for _ in range(2):  # created, then observed again
        p.sync(obj)
        p.observe(obj)
        assert c.get(REMOTE_SECRET)["data"]["HF_TOKEN"] == "aGZfdGVzdA=="
        echoed = obj["status"]["atProvider"]["manifest"]
        assert echoed["data"] == echoed_data
        assert secret_fields_with_values(echoed) == exposed
        assert ("aGZfdGVzdA==" in str(obj["status"])) is (not sanitize)


def test_no_delete_policy_leaves_the_remote_object():
    c = cluster()
    obj = kubernetes_object(pvc(), "gke-us", management_policies=RETAIN_ON_DELETE)
    p = providers(c)
    p.sync(obj)
    p.delete(obj, "test")
    assert c.get(pvc()) is not None


READINESS = [
    pytest.param(PVC_BOUND, {"status": {"phase": "Bound"}}, True, id="PVC Bound"),
    pytest.param(PVC_BOUND, {"status": {"phase": "Pending"}}, False, id="PVC Pending"),
    pytest.param(PVC_BOUND, {}, False, id="PVC without status"),
    pytest.param(
        JOB_COMPLETE,
        {"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        True,
        id="Job Complete",
    ),
    pytest.param(
        JOB_COMPLETE,
        {"status": {"conditions": [{"type": "Failed", "status": "True"}]}},
        False,
        id="Job Failed",
    ),
    pytest.param(AVAILABLE, {"status": {}}, False, id="Deployment without conditions"),
]


@pytest.mark.parametrize(("query", "remote", "ready"), READINESS)
def test_cel_readiness_like_the_provider(query, remote, ready):
    assert evaluate(query, remote) is ready


def test_cel_query_that_is_not_a_bool_is_an_error():
    with pytest.raises(ReadinessError):
        evaluate("1 + 1", {})


def test_a_cluster_can_already_hold_a_crd_group_without_a_helm_install():
    """simulation.yaml's `clusters.<name>.crds`: a LeaderWorkerSet the platform team installed
    itself (the end-to-end harness's clusters all have it), so no InferenceCluster installs it."""
    from modelfleet_cli.simulate.clusters import workload_clusters
    from modelfleet_cli.simulate.fleet import Fleet
    from modelfleet_cli.simulate.workload import LWS_GROUP

    ic = {"kind": "InferenceCluster", "metadata": {"name": "gke-us"}, "spec": {}}
    told = workload_clusters(Fleet(xrs=[ic]), {"clusters": {"gke-us": {"crds": [LWS_GROUP]}}})
    untold = workload_clusters(Fleet(xrs=[ic]), {})
    assert LWS_GROUP in told["gke-us"].crds
    assert LWS_GROUP not in untold["gke-us"].crds
