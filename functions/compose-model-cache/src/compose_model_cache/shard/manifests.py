"""What a ModelCache composes on one cluster: the claim, the token Secret, the hydration Job
(once finished, an Object that only watches it: `finished_job_object`)."""

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from modelfleet_contracts.api import MODEL_CACHE
from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.hydration import (
    DEFAULT_IMAGE,
    DOCKER_CONFIG_ENV,
    HF_TOKEN_ENV,
    PINNED_REVISION,
)
from modelfleet_contracts.labels import CLUSTER_LABEL, owner_labels
from modelfleet_contracts.models.modelcache import (
    S3,
    CredentialsSecretRef,
    Hydration,
    ModelCacheSpec,
    Oci,
    PullSecretRef,
    ReclaimPolicy,
    Storage,
    TokenSecretRef,
)
from modelfleet_contracts.mounts import CACHE_VOLUME_NAME, MODEL_MOUNT_PATH
from modelfleet_contracts.naming import cache_claim_name, remote_name
from modelfleet_contracts.objects import (
    JOB_COMPLETE,
    MANAGE_ALL,
    OBSERVE_AND_DELETE,
    OBSERVE_ONLY,
    PVC_BOUND,
    RETAIN_ON_DELETE,
    kubernetes_object,
    secret_key_patch,
)
from modelfleet_contracts.spec import filled
from modelfleet_contracts.stamps import Shape, marker

from compose_model_cache.fingerprint import source_of
from compose_model_cache.shard.hydration_command import hydration_argv

# How long a finished hydration Job stays on its cluster before Kubernetes' TTL controller
# deletes it (and its pods): an hour to read its logs. Its Object outlives it (Observe and
# Delete: `finished_job_object`), so nothing on the control plane is deleted for it.
JOB_TTL_SECONDS = 3600
DEFAULT_RESOURCES = {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "8Gi"}}
S3_CREDENTIAL_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
# A kubernetes.io/dockerconfigjson Secret's key; it is copied to the remote Secret's key (and
# the env var the hydrator reads) DOCKER_CONFIG_ENV.
DOCKER_CONFIG_KEY = ".dockerconfigjson"


@dataclass(frozen=True)
class CacheRef:
    """The ModelCache being composed, as the names and paths every cluster shares (derived
    names are computed once per reconcile, not once per cluster: they hash)."""

    name: str
    namespace: str
    spec: ModelCacheSpec
    fingerprint: str
    # The commit every cluster is to serve (status.pinnedRevision), once one cluster resolved
    # the source's branch; passed to the Jobs as an annotation (a Job's pod template is fixed
    # once created, its annotations are not).
    pinned_revision: str = ""

    # The optional blocks with the XRD's defaults applied when the user left them out.
    @cached_property
    def storage(self) -> Storage:
        return self.spec.storage or Storage()

    @cached_property
    def hydration(self) -> Hydration:
        return self.spec.hydration or Hydration()

    @cached_property
    def existing_claim(self) -> str | None:
        return self.storage.existingClaimName or None

    @cached_property
    def claim_name(self) -> str:
        return self.existing_claim or cache_claim_name(self.namespace, self.name)

    @cached_property
    def claim_request(self) -> str:
        """The storage a claim we manage requests (set then: staging.spec_problem)."""
        return f"{self.spec.sizeGiB}Gi"

    @cached_property
    def cache_subdir(self) -> str:
        """Where this cache's copies live inside the claim: a claim we manage is the
        cache's own; a shared, user-provided claim gets one directory per cache."""
        return cache_claim_name(self.namespace, self.name) if self.existing_claim else ""

    @cached_property
    def path(self) -> str:
        """The weights' sub-path inside the claim (what consumers mount)."""
        return "/".join(p for p in (self.cache_subdir, self.fingerprint) if p)

    @cached_property
    def secret_ref(self) -> TokenSecretRef | CredentialsSecretRef | PullSecretRef | None:
        """The user's Secret the source is read with (a token, S3 credentials or registry
        credentials), if any."""
        source = source_of(self.spec)
        if isinstance(source, S3):
            return source.credentialsSecretRef
        if isinstance(source, Oci):
            return source.pullSecretRef
        return source.tokenSecretRef

    @cached_property
    def backoff_limit(self) -> int:
        return filled(self.hydration.backoffLimit)

    @cached_property
    def secret_name(self) -> str:
        return remote_name("modelcache-creds", self.namespace, self.name)

    @cached_property
    def job_name(self) -> str:
        return remote_name("hydrate", self.namespace, self.name, self.fingerprint)

    def labels(self, cluster: str) -> dict[str, str]:
        return {**owner_labels(MODEL_CACHE, self.name, self.namespace), CLUSTER_LABEL: cluster}

    # What is composed on every cluster, built once per reconcile with markers where a
    # cluster's own values go (see `stamps`): 1000 clusters are 1000 copies, not 1000 builds.
    @cached_property
    def claim_shape(self) -> Shape:
        return Shape(claim_object(self, ANY_CLUSTER))

    @cached_property
    def secret_shape(self) -> Shape | None:
        secret = secret_object(self, ANY_CLUSTER)
        return Shape(secret) if secret else None

    @cached_property
    def job_shape(self) -> Shape:
        return Shape(job_object(self, ANY_CLUSTER))

    @cached_property
    def finished_job_shape(self) -> Shape:
        return Shape(finished_job_object(self, ANY_CLUSTER))


# A cluster whose every value the manifests use is a marker (stamps.py).
ANY_CLUSTER = ClusterView(
    name=marker("cluster"),
    labels={},
    provider_config_name=marker("providerConfig"),
    workload_namespace=marker("namespace"),
    connected=True,
    storage_class_name=marker("storageClass"),
    shared_storage_ready=True,
    hydrator_service_account=marker("hydratorServiceAccount"),
)


def cluster_values(cluster: ClusterView) -> dict[str, Any]:
    """The values of `cluster` for the markers of ANY_CLUSTER."""
    return {
        "cluster": cluster.name,
        "providerConfig": cluster.provider_config_name,
        "namespace": cluster.workload_namespace,
        "storageClass": cluster.storage_class_name,
        "hydratorServiceAccount": cluster.hydrator_service_account,
    }


def claim_object(cache: CacheRef, cluster: ClusterView) -> dict[str, Any]:
    """The ReadWriteMany PVC, or an Observe-only view of the user's existing claim."""
    assert cluster.provider_config_name and cluster.workload_namespace
    labels = cache.labels(cluster.name)
    metadata = {"name": cache.claim_name, "namespace": cluster.workload_namespace}
    if cache.existing_claim:
        manifest = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata}
        return kubernetes_object(
            manifest,
            cluster.provider_config_name,
            labels=labels,
            readiness_query=PVC_BOUND,
            management_policies=OBSERVE_ONLY,
            watch=True,
        )
    retain = cache.storage.reclaimPolicy == ReclaimPolicy.Retain
    manifest = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {**metadata, "labels": labels},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": cache.storage.storageClassName or cluster.storage_class_name,
            # Never lowered on a claim that exists (claim_size.py).
            "resources": {"requests": {"storage": cache.claim_request}},
        },
    }
    return kubernetes_object(
        manifest,
        cluster.provider_config_name,
        labels=labels,
        readiness_query=PVC_BOUND,
        management_policies=RETAIN_ON_DELETE if retain else MANAGE_ALL,
        watch=True,
    )


def secret_object(cache: CacheRef, cluster: ClusterView) -> dict[str, Any] | None:
    """The remote Secret holding the token, S3 or registry credentials. Its data is copied from the
    user's Secret by provider-kubernetes on the control plane; this function never sees it."""
    ref = cache.secret_ref
    if not ref:
        return None
    assert cluster.provider_config_name and cluster.workload_namespace
    if isinstance(ref, TokenSecretRef):
        patches = [
            secret_key_patch(ref.name, filled(ref.key), HF_TOKEN_ENV, namespace=cache.namespace)
        ]
    elif isinstance(ref, PullSecretRef):
        patches = [
            secret_key_patch(
                ref.name, DOCKER_CONFIG_KEY, DOCKER_CONFIG_ENV, namespace=cache.namespace
            )
        ]
    else:
        patches = [
            secret_key_patch(ref.name, key, key, namespace=cache.namespace)
            for key in S3_CREDENTIAL_KEYS
        ]
    manifest = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": cache.secret_name,
            "namespace": cluster.workload_namespace,
            "labels": cache.labels(cluster.name),
        },
        "type": "Opaque",
    }
    return kubernetes_object(
        manifest,
        cluster.provider_config_name,
        labels=cache.labels(cluster.name),
        references=patches,
    )


def _env(cache: CacheRef) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [{"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"}]
    source = source_of(cache.spec)
    if isinstance(source, S3):
        if source.endpoint:
            env.append({"name": "AWS_ENDPOINT_URL", "value": source.endpoint})
        if source.region:
            env.append({"name": "AWS_REGION", "value": source.region})
        keys: tuple[str, ...] = S3_CREDENTIAL_KEYS if cache.secret_ref else ()
    elif isinstance(source, Oci):
        keys = (DOCKER_CONFIG_ENV,) if cache.secret_ref else ()
    else:
        keys = (HF_TOKEN_ENV,) if cache.secret_ref else ()
    env += [
        {"name": k, "valueFrom": {"secretKeyRef": {"name": cache.secret_name, "key": k}}}
        for k in keys
    ]
    return env


def _resources(hydration: Hydration) -> dict[str, Any]:
    """The downloader's resources as the user wrote them; empty when not given."""
    if not hydration.resources:
        return {}
    return hydration.resources.model_dump(mode="json", exclude_none=True, warnings=False)


def job_object(cache: CacheRef, cluster: ClusterView) -> dict[str, Any]:
    """The hydration Job: a fixed script in a pinned image, user values as argv."""
    assert cluster.provider_config_name and cluster.workload_namespace
    assert cluster.hydrator_service_account
    hydration = cache.hydration
    cache_dir = "/".join(p for p in (MODEL_MOUNT_PATH, cache.cache_subdir) if p)
    labels = cache.labels(cluster.name)
    container = {
        "name": "hydrate",
        "image": hydration.image or DEFAULT_IMAGE,
        "command": hydration_argv(
            source_of(cache.spec),
            cache_dir=cache_dir,
            fingerprint=cache.fingerprint,
            job=cache.job_name,
        ),
        "env": _env(cache),
        "resources": _resources(hydration) or DEFAULT_RESOURCES,
        "volumeMounts": [{"name": CACHE_VOLUME_NAME, "mountPath": MODEL_MOUNT_PATH}],
    }
    metadata: dict[str, Any] = {
        "name": cache.job_name,
        "namespace": cluster.workload_namespace,
        "labels": labels,
    }
    if cache.pinned_revision:
        metadata["annotations"] = {PINNED_REVISION: cache.pinned_revision}
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": cache.backoff_limit,
            "activeDeadlineSeconds": filled(hydration.activeDeadlineSeconds),
            # A replacement pod starts only once the previous one has fully failed, so a
            # single pod ever writes the staging directory (the script relies on that to
            # discard a killed attempt's partial files).
            "podReplacementPolicy": "Failed",
            # Kubernetes deletes the Job this long after it finished. Before then the
            # function has seen it finish and turned its Object into one that only watches
            # it (`finished_job_object`): a fully managed Object would re-create a Job its TTL
            # deleted. Not fixed at creation: a Job an earlier release created gets it too.
            "ttlSecondsAfterFinished": JOB_TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    # The cluster's hydrator account (compose-inference-cluster composes it
                    # once per workload namespace): its token lets the hydrator patch its
                    # progress onto its Job.
                    "serviceAccountName": cluster.hydrator_service_account,
                    "automountServiceAccountToken": True,
                    "containers": [container],
                    "volumes": [
                        {
                            "name": CACHE_VOLUME_NAME,
                            "persistentVolumeClaim": {"claimName": cache.claim_name},
                        }
                    ],
                },
            },
        },
    }
    return kubernetes_object(
        manifest,
        cluster.provider_config_name,
        labels=labels,
        readiness_query=JOB_COMPLETE,
        watch=True,
    )


# What the API server lets change on a Job, and so what an Object that never updates the Job
# may leave out of its manifest (finished_job_object).
JOB_MUTABLE_SPEC = ("backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished")


def finished_job_object(cache: CacheRef, cluster: ClusterView) -> dict[str, Any]:
    """The Object of a hydration Job seen finished (Complete or Failed): managementPolicies
    Observe and Delete. provider-kubernetes neither updates nor re-creates the Job; it keeps
    echoing it (its status, its figures) and its readiness while it exists, and once the
    Job's TTL removed it, reports success and keeps what it last saw, so the Object stays
    quiet. Deleting the Object (the cache, its source or the cluster gone; a failed Job
    retried) deletes the Job if it is still there.

    Its manifest keeps every field the API server fixes at creation (the pod template): with
    server-side apply (`--enable-server-side-apply`, as the install docs run it),
    provider-kubernetes' Observe dry-runs an apply of the manifest even when it may not
    update, and fields it applied before and the manifest lacks would be removed: a Job
    without its template is refused (`cannot dry run SSA: Job.batch ... is invalid`, seen on
    the real control plane), leaving the Object Synced=False on every poll and impossible to
    delete (Delete comes after a successful Observe). What may change (labels, annotations,
    JOB_MUTABLE_SPEC) is left out: only ever dry-run, it would change nothing, and each of
    1000 clusters' Objects is smaller for it."""
    obj = job_object(cache, cluster)
    manifest = obj["spec"]["forProvider"]["manifest"]
    manifest["metadata"] = {
        k: v for k, v in manifest["metadata"].items() if k in ("name", "namespace")
    }
    for field in JOB_MUTABLE_SPEC:
        manifest["spec"].pop(field, None)
    obj["spec"]["managementPolicies"] = list(OBSERVE_AND_DELETE)
    return obj
