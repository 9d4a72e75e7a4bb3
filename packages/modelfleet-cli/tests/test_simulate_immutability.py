"""The simulated API server refuses what a real one refuses to change on an existing object
(a Job's pod template, a RoleBinding's roleRef, a claim's class or a smaller size), with the
message a real one gives, and the simulated provider-kubernetes reports that as it does:
Synced=False, while the remote object keeps being echoed and readiness follows it."""

import copy
from typing import Any

import pytest
from modelfleet_cli.simulate.provider import Providers
from modelfleet_cli.simulate.workload import ApplyError, Pool, WorkloadCluster
from modelfleet_contracts.objects import JOB_COMPLETE, kubernetes_object

NS = "modelfleet"


def cluster() -> WorkloadCluster:
    c = WorkloadCluster("gke-us", [Pool("h100", 1, 8)], {"rwx", "nfs"}, hydration_rounds=1)
    c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    return c


def claim(storage_class: str = "rwx", size: str = "10Gi") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "weights", "namespace": NS},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
        },
    }


def job(image: str = "hydrator:0.1.0", backoff: int = 3, **metadata: Any) -> dict[str, Any]:
    container = {"name": "hydrate", "image": image, "command": ["python3", "hydrate.py"]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hydrate-abc", "namespace": NS, **metadata},
        "spec": {
            "backoffLimit": backoff,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container],
                    "volumes": [{"name": "m", "persistentVolumeClaim": {"claimName": "weights"}}],
                }
            },
        },
    }


def binding(role: str = "hydrate-abc", kind: str = "Role") -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "hydrate-abc", "namespace": NS},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": "hydrate-abc", "namespace": NS}],
    }


def with_completions(manifest: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    out["spec"]["completions"] = 2
    return out


@pytest.mark.parametrize(
    ("first", "then", "refused"),
    [
        pytest.param(
            job(),
            job(image="hydrator:0.2.0"),
            'Job.batch "hydrate-abc" is invalid: spec.template: Invalid value: {...}: '
            "field is immutable",
            id="Job: another pod template",
        ),
        pytest.param(
            job(),
            with_completions(job(image="hydrator:0.2.0")),
            'Job.batch "hydrate-abc" is invalid: [spec.template: Invalid value: {...}: field is '
            "immutable, spec.completions: Invalid value: {...}: field is immutable]",
            id="Job: two fixed fields, both listed",
        ),
        pytest.param(
            job(),
            job(backoff=5, annotations={"hydration.modelfleet.io/pinned-revision": "c" * 40}),
            None,
            id="Job: its metadata and backoffLimit change",
        ),
        pytest.param(
            binding(),
            binding(kind="ClusterRole"),
            'RoleBinding.rbac.authorization.k8s.io "hydrate-abc" is invalid: roleRef: '
            "Invalid value: {...}: cannot change roleRef",
            id="RoleBinding: another roleRef",
        ),
        pytest.param(
            claim(),
            claim(storage_class="nfs"),
            'PersistentVolumeClaim "weights" is invalid: spec: Forbidden: spec is immutable '
            "after creation except resources.requests and volumeAttributesClassName for "
            "bound claims",
            id="claim: another class",
        ),
        pytest.param(
            claim(),
            claim(size="5Gi"),
            'PersistentVolumeClaim "weights" is invalid: spec.resources.requests.storage: '
            "Forbidden: field can not be less than previous value",
            id="claim: smaller",
        ),
        pytest.param(claim(), claim(size="20Gi"), None, id="claim: larger"),
        pytest.param(
            claim(),
            claim(size="10G"),
            'PersistentVolumeClaim "weights" is invalid: spec.resources.requests.storage: '
            "Forbidden: field can not be less than previous value",
            id="claim: smaller in decimal units (10G < 10Gi)",
        ),
        pytest.param(
            claim(size="1Ti"),
            claim(size="1000Gi"),
            'PersistentVolumeClaim "weights" is invalid: spec.resources.requests.storage: '
            "Forbidden: field can not be less than previous value",
            id="claim: smaller in another binary unit",
        ),
        pytest.param(claim(size="1T"), claim(size="1000Gi"), None, id="claim: 1000Gi > 1T"),
        pytest.param(claim(), claim(size="10737418240"), None, id="claim: the same, in bytes"),
    ],
)
def test_an_update_of_a_field_fixed_at_creation_is_refused(first, then, refused):
    c = cluster()
    c.apply(first)
    c.tick()
    before = c.get(first)
    if refused is None:
        c.apply(then)
        assert c.get(then)["metadata"]["uid"] == before["metadata"]["uid"]
        return
    with pytest.raises(ApplyError) as caught:
        c.apply(then)
    assert str(caught.value) == refused
    assert c.get(first) == before, "nothing of a refused update is applied"


def test_a_job_of_the_same_name_created_again_takes_any_template():
    c = cluster()
    c.apply(job())
    c.delete(job())
    c.apply(job(image="hydrator:0.2.0"))
    assert c.get(job())["spec"]["template"]["spec"]["containers"][0]["image"] == "hydrator:0.2.0"


def test_provider_kubernetes_reports_a_refused_update_and_keeps_echoing_the_job():
    c = cluster()
    c.apply(claim())
    providers = Providers({c.name: c}, lambda pc: c.name, lambda ns, n: None)
    obj = kubernetes_object(job(), "gke-us", readiness_query=JOB_COMPLETE)
    providers.sync(obj)
    obj["spec"]["forProvider"]["manifest"] = job(image="hydrator:0.2.0")
    c.tick()  # the claim binds and the Job runs its single round: Complete
    providers.sync(obj)

    synced, ready = obj["status"]["conditions"]
    assert (synced["type"], synced["status"]) == ("Synced", "False")
    assert "spec.template: Invalid value: {...}: field is immutable" in synced["message"]
    echoed = obj["status"]["atProvider"]["manifest"]
    assert echoed["spec"]["template"]["spec"]["containers"][0]["image"] == "hydrator:0.1.0"
    assert (ready["type"], ready["status"]) == ("Ready", "True"), "readiness follows the Job"
