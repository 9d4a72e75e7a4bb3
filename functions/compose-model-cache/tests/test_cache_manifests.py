"""ModelCache manifests: what is composed on a cluster (claim, Secret, Job) and how it looks."""

import re

import pytest
from cache_world import (
    EU,
    US,
    bound,
    desired_resources,
    job_status,
    keys,
    model_cache,
    reason,
    reconcile,
    rows,
)
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from modelfleet_devtools.world import observed_object


def test_every_composed_manifest_is_valid():
    require_shared_schemas()
    xrs = [
        model_cache(),
        model_cache(
            huggingFace={
                "repo": "meta-llama/Llama-3.1-8B-Instruct",
                "tokenSecretRef": {"name": "t"},
            }
        ),
        model_cache(
            source="S3",
            huggingFace=None,
            s3={
                "uri": "s3://models/qwen/",
                "region": "us-east-1",
                "credentialsSecretRef": {"name": "s3"},
            },
        ),
    ]
    for xr in xrs:
        xr["spec"] = {k: v for k, v in xr["spec"].items() if v is not None}
        for obj in desired_resources(reconcile(xr, [US, EU])).values():
            obj = obj | {
                "metadata": {**obj.get("metadata", {}), "name": "x", "namespace": "ml-team"}
            }
            assert_valid(obj)


def manifest_of(obj):
    return obj["spec"]["forProvider"]["manifest"]


def container_of(job):
    return manifest_of(job)["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize(
    ("storage", "claim_policies"),
    [({}, ["*"]), ({"existingClaimName": "shared-models"}, ["Observe"])],
    ids=["managed claim", "bring-your-own claim"],
)
def test_claim_and_job_are_objects_whose_readiness_is_the_remote_status(storage, claim_policies):
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(model_cache(storage=storage), [US]))
    for key, query in ((claim, "'Bound'"), (job, "'Complete'")):
        obj = composed[key]
        assert (obj["apiVersion"], obj["kind"]) == ("kubernetes.m.crossplane.io/v1alpha1", "Object")
        assert obj["spec"]["providerConfigRef"] == {
            "kind": "ClusterProviderConfig",
            "name": "gke-us",
        }
        assert obj["spec"]["readiness"]["policy"] == "DeriveFromCelQuery"
        assert query in obj["spec"]["readiness"]["celQuery"]
        assert manifest_of(obj)["metadata"]["namespace"] == "modelfleet"
    assert composed[claim]["spec"].get("managementPolicies") == claim_policies


def test_an_unbound_claim_keeps_the_cluster_pending_and_says_so():
    claim, _, job = keys("gke-us")
    composed = desired_resources(reconcile(model_cache(), [US]))
    waiting = observed_object(composed[claim], remote_status={"phase": "Pending"}, ready=False)
    rsp = reconcile(model_cache(), [US], {claim: waiting})
    row = rows(rsp)["gke-us"]
    assert row["phase"] == "Pending"
    assert "not bound (Pending)" in row["message"]
    assert reason(rsp, "ArtifactReady") == "Hydrating"
    assert job in desired_resources(rsp), "the Job waits for the claim on the cluster itself"


def test_hydration_settings_reach_the_job():
    hydration = {
        "image": "registry.example.com/hydrator:1.2.3",
        "resources": {"requests": {"memory": "4Gi"}, "limits": {"memory": "16Gi"}},
        "backoffLimit": 6,
        "activeDeadlineSeconds": 3600,
    }
    claim, _, job = keys("gke-us")
    xr = model_cache(hydration=hydration)
    composed = desired_resources(reconcile(xr, [US]))
    spec = manifest_of(composed[job])["spec"]
    assert (spec["backoffLimit"], spec["activeDeadlineSeconds"]) == (6, 3600)
    assert container_of(composed[job])["image"] == hydration["image"]
    assert container_of(composed[job])["resources"] == hydration["resources"]
    running = job_status(composed[job], active=1, failed=2)
    rsp = reconcile(xr, [US], {claim: bound(composed[claim]), job: running})
    assert "2 of 7 attempts failed so far" in rows(rsp)["gke-us"]["message"]


def test_the_default_job_runs_the_pinned_image_with_argv_only():
    xr = model_cache(
        huggingFace={
            "repo": "Qwen/Qwen3-0.6B",
            "revision": "v1.0",
            "include": ["*.safetensors", "*.json"],
            "exclude": ["original/*"],
        }
    )
    _, _, job = keys("gke-us", xr)
    composed = desired_resources(reconcile(xr, [US]))
    container = container_of(composed[job])
    fingerprint = rows(reconcile(xr, [US]))["gke-us"]["fingerprint"]
    assert container["image"] == "ghcr.io/modelfleet/model-hydrator:v0.2.0"
    assert container["command"] == [
        "python3",
        "/opt/modelfleet/hydrate.py",
        "--cache-dir=/mnt/models",
        f"--fingerprint={fingerprint}",
        f"--job={manifest_of(composed[job])['metadata']['name']}",
        "--source=HuggingFace",
        "--repo=Qwen/Qwen3-0.6B",
        "--revision=v1.0",
        "--include=*.safetensors",
        "--include=*.json",
        "--exclude=original/*",
    ]
    assert "args" not in container
    assert manifest_of(composed[job])["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert manifest_of(composed[job])["spec"]["podReplacementPolicy"] == "Failed"


def test_an_s3_source_gets_its_credentials_only_through_provider_kubernetes():
    xr = model_cache(
        source="S3",
        s3={
            "uri": "s3://models/qwen/",
            "endpoint": "https://minio.example.com",
            "region": "eu-west-1",
            "credentialsSecretRef": {"name": "s3-creds"},
        },
    )
    del xr["spec"]["huggingFace"]
    _, creds, job = keys("gke-us", xr)
    composed = desired_resources(reconcile(xr, [US]))
    secret = composed[creds]
    assert [r["patchesFrom"] for r in secret["spec"]["references"]] == [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "name": "s3-creds",
            "namespace": "ml-team",
            "fieldPath": f"data.{key}",
        }
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    ]
    assert "data" not in manifest_of(secret)
    container = container_of(composed[job])
    assert container["command"][5:] == ["--source=S3", "--uri=s3://models/qwen/"]
    env = {e["name"]: e for e in container["env"]}
    assert env["AWS_ENDPOINT_URL"]["value"] == "https://minio.example.com"
    assert env["AWS_REGION"]["value"] == "eu-west-1"
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert (
            env[key]["valueFrom"]["secretKeyRef"]["name"] == manifest_of(secret)["metadata"]["name"]
        )


DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def remote_names(xr):
    return {
        key: manifest_of(obj)["metadata"]["name"]
        for key, obj in desired_resources(reconcile(xr, [US], validate=True)).items()
    }


def test_remote_names_are_dns_labels_qualified_by_the_caches_namespace():
    token = {"repo": "Qwen/Qwen3-0.6B", "tokenSecretRef": {"name": "t"}}
    long_name = "a-really-long-model-cache-name-" + "x" * 30
    team_a = remote_names(model_cache(long_name, "team-a-" + "y" * 40, huggingFace=token))
    team_b = remote_names(model_cache(long_name, "team-b-" + "y" * 40, huggingFace=token))
    for name in [*team_a.values(), *team_b.values()]:
        assert len(name) <= 63 and DNS_1123.match(name), name
    assert set(team_a.values()).isdisjoint(team_b.values()), "two teams never collide"
    assert team_a == remote_names(model_cache(long_name, "team-a-" + "y" * 40, huggingFace=token))


def test_every_composed_object_carries_the_owner_labels():
    xr = model_cache(huggingFace={"repo": "Qwen/Qwen3-0.6B", "tokenSecretRef": {"name": "t"}})
    composed = desired_resources(reconcile(xr, [US, EU]))
    assert len(composed) == 6, "claim, Secret, Job x 2 (the Jobs run under the cluster's account)"
    for obj in composed.values():
        for labels in (obj["metadata"]["labels"], manifest_of(obj)["metadata"]["labels"]):
            assert labels["modelfleet.io/modelcache"] == "qwen"
            assert labels["modelfleet.io/namespace"] == "ml-team"


def test_reclaim_policy_decides_whether_deleting_the_cache_deletes_the_claim():
    claim, _, _ = keys("gke-us")
    policies = {
        policy: desired_resources(reconcile(model_cache(storage={"reclaimPolicy": policy}), [US]))[
            claim
        ]["spec"]["managementPolicies"]
        for policy in ("Delete", "Retain")
    }
    assert policies["Delete"] == ["*"]
    assert "Delete" not in policies["Retain"] and "Create" in policies["Retain"]


def test_a_byo_claim_is_never_sized_even_when_size_is_given():
    claim, _, _ = keys("gke-us")
    xr = model_cache(sizeGiB=500, storage={"existingClaimName": "shared-models"})
    obj = desired_resources(reconcile(xr, [US]))[claim]
    assert "spec" not in manifest_of(obj)
    assert obj["spec"]["managementPolicies"] == ["Observe"]
