"""What lets a hydration Job report on itself: a ServiceAccount for its pod, a Role allowing
`get` and `patch` on that one Job (by name, nothing else in the namespace), and the binding.

All three carry the Job's name (which carries the source fingerprint), so a new source gets
new ones, and they come and go with the Job (core.py composes them exactly while it composes
or keeps the Job).
"""

from typing import Any

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.objects import kubernetes_object

RBAC_API = "rbac.authorization.k8s.io/v1"


def _metadata(name: str, cluster: ClusterView, labels: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": cluster.workload_namespace, "labels": labels}


def access_objects(
    job_name: str, cluster: ClusterView, labels: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Suffix of the composition-resource-name -> Object, for the ServiceAccount, the Role
    and the RoleBinding of the Job `job_name` on `cluster`."""
    assert cluster.provider_config_name and cluster.workload_namespace
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _metadata(job_name, cluster, labels),
    }
    role = {
        "apiVersion": RBAC_API,
        "kind": "Role",
        "metadata": _metadata(job_name, cluster, labels),
        "rules": [
            {
                "apiGroups": ["batch"],
                "resources": ["jobs"],
                "resourceNames": [job_name],
                "verbs": ["get", "patch"],
            }
        ],
    }
    binding = {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": _metadata(job_name, cluster, labels),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": job_name},
        "subjects": [
            {"kind": "ServiceAccount", "name": job_name, "namespace": cluster.workload_namespace}
        ],
    }
    return {
        suffix: kubernetes_object(manifest, cluster.provider_config_name, labels=labels)
        for suffix, manifest in (("account", account), ("role", role), ("binding", binding))
    }
