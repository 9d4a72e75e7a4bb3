"""What every hydration Job on a cluster runs under: the hydrator's ServiceAccount in the
workload namespace, a Role allowing `get` and `patch` on that namespace's Jobs (a Job
reports its progress on its own annotations) and the RoleBinding between them.

Composed once per cluster, for every cache that stages there: a Job creates and deletes no
access objects of its own. The Role names no Job: Jobs come and go with
sources, the namespace is Modelfleet's own, and what a token of this account can do there
is read Jobs and write their metadata (a patch of a Job's spec is refused for its pod
template and touches nothing of a claim or a workload).
"""

from typing import Any

from modelfleet_contracts.api import CONTROL_PLANE_NAMESPACE, INFERENCE_CLUSTER
from modelfleet_contracts.hydration import (
    HYDRATOR_ROLE,
    HYDRATOR_ROLE_BINDING,
    HYDRATOR_SERVICE_ACCOUNT,
)
from modelfleet_contracts.labels import owner_labels
from modelfleet_contracts.objects import kubernetes_object

RBAC_API = "rbac.authorization.k8s.io/v1"
# Composition-resource names of the three Objects.
SERVICE_ACCOUNT = "hydrator-service-account"
ROLE = "hydrator-role"
ROLE_BINDING = "hydrator-role-binding"
HYDRATOR_ACCESS = (SERVICE_ACCOUNT, ROLE, ROLE_BINDING)


def hydrator_access_objects(
    cluster: str, provider_config_name: str, namespace: str
) -> dict[str, dict[str, Any]]:
    """Composition-resource name -> Object, for the hydrator's ServiceAccount, Role and
    RoleBinding in `namespace` on `cluster`."""
    labels = owner_labels(INFERENCE_CLUSTER, cluster)

    def metadata(name: str) -> dict[str, Any]:
        return {"name": name, "namespace": namespace, "labels": labels}

    manifests: dict[str, dict[str, Any]] = {
        SERVICE_ACCOUNT: {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": metadata(HYDRATOR_SERVICE_ACCOUNT),
        },
        ROLE: {
            "apiVersion": RBAC_API,
            "kind": "Role",
            "metadata": metadata(HYDRATOR_ROLE),
            "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "patch"]}],
        },
        ROLE_BINDING: {
            "apiVersion": RBAC_API,
            "kind": "RoleBinding",
            "metadata": metadata(HYDRATOR_ROLE_BINDING),
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": HYDRATOR_ROLE,
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": HYDRATOR_SERVICE_ACCOUNT, "namespace": namespace}
            ],
        },
    }
    return {
        key: kubernetes_object(
            manifest, provider_config_name, labels=labels, namespace=CONTROL_PLANE_NAMESPACE
        )
        for key, manifest in manifests.items()
    }
