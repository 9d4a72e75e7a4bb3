"""What the release before this one composed for a hydration Job, as test data for upgrades.

That release gave every Job access of its own: a ServiceAccount, a Role allowing `get` and
`patch` on that one Job (by name) and the RoleBinding, all named like the Job, under the
Job's key with the suffixes `-account`, `-role` and `-binding`; the Job's pod ran under that
ServiceAccount, and the Job had no TTL. Written out here as that release's manifests were,
so the upgrade tests start from what exists on clusters today.
"""

import copy
from typing import Any

from compose_model_cache.keys import access_keys

RBAC_API = "rbac.authorization.k8s.io/v1"


def _manifest(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["forProvider"]["manifest"]


def previous_job(job: dict[str, Any]) -> dict[str, Any]:
    """The Job Object as the previous release composed it: its pod under the Job's own
    ServiceAccount, no ttlSecondsAfterFinished."""
    old = copy.deepcopy(job)
    manifest = _manifest(old)
    manifest["spec"].pop("ttlSecondsAfterFinished", None)
    manifest["spec"]["template"]["spec"]["serviceAccountName"] = manifest["metadata"]["name"]
    return old


def previous_access(job_key: str, job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Key -> Object, for the ServiceAccount, Role and RoleBinding of the Job Object `job`
    (composed under `job_key`), as the previous release composed them."""
    manifest = _manifest(job)
    name, namespace = manifest["metadata"]["name"], manifest["metadata"]["namespace"]
    labels = dict(manifest["metadata"]["labels"])
    metadata = {"name": name, "namespace": namespace, "labels": labels}
    remote = {
        "account": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata},
        "role": {
            "apiVersion": RBAC_API,
            "kind": "Role",
            "metadata": metadata,
            "rules": [
                {
                    "apiGroups": ["batch"],
                    "resources": ["jobs"],
                    "resourceNames": [name],
                    "verbs": ["get", "patch"],
                }
            ],
        },
        "binding": {
            "apiVersion": RBAC_API,
            "kind": "RoleBinding",
            "metadata": metadata,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        },
    }
    return {
        key: {
            "apiVersion": job["apiVersion"],
            "kind": job["kind"],
            "metadata": {"labels": dict(job["metadata"]["labels"])},
            "spec": {
                "providerConfigRef": copy.deepcopy(job["spec"]["providerConfigRef"]),
                "forProvider": {"manifest": copy.deepcopy(remote[suffix])},
            },
        }
        for suffix, key in access_keys(job_key).items()
    }


def previous_objects(job_key: str, job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The Job's Object and its access Objects, by key, as the previous release composed
    them for the Job this release composes as `job`."""
    old = previous_job(job)
    return {job_key: old, **previous_access(job_key, old)}
