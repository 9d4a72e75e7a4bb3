"""Wrapping remote manifests in provider-kubernetes Objects, and what carrying observed ones
forward leaves out (`edge.carry`)."""

from typing import Any

from modelfleet_contracts.api import OBJECT_API_VERSION, OBJECT_KIND, PROVIDER_CONFIG_KIND

# Management policies. Without "Delete", deleting the Object leaves the remote object in
# place (the namespaced v2 Object has no deletionPolicy; this is how Retain is expressed).
MANAGE_ALL = ["*"]
OBSERVE_ONLY = ["Observe"]
RETAIN_ON_DELETE = ["Observe", "Create", "Update", "LateInitialize"]
# Watch what is there, never create or update it, delete it with the Object. Unlike OBSERVE_ONLY,
# a remote object that is gone (a finished Job its TTL removed) is no error: provider-kubernetes
# reports success and keeps the last `status.atProvider` and `Ready` it saw (crossplane-runtime
# treats "does not exist" as an error only when Observe is the one policy).
OBSERVE_AND_DELETE = ["Observe", "Delete"]

# CEL readiness queries, evaluated by provider-kubernetes on the observed remote object
# (variable `object`, standard macros only).
PVC_BOUND = "object.status.phase == 'Bound'"
JOB_COMPLETE = (
    "has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Complete' && c.status == 'True')"
)
AVAILABLE = (
    "has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"
)
NAMESPACE_ACTIVE = "object.status.phase == 'Active'"

# Composed on every Object, naming the remote object it manages. crossplane-runtime writes an
# external name of its own (the Object's name) only when none is there; provider-kubernetes
# never reads it back (its Objects find their remote object by the manifest). Composing it
# saves each new Object one of the provider's updates, and the reconciles of the Object and of
# its XR that the update would queue.
EXTERNAL_NAME_ANNOTATION = "crossplane.io/external-name"

# How often provider-kubernetes observes one Ready Object, overriding its `--poll` for that
# Object alone. Read by providers built on crossplane-runtime v2.3 or later; older ones
# (provider-kubernetes v1.2.x) ignore it and poll at `--poll`. An Object that is not Ready is
# observed at the provider's own short interval whatever this says.
POLL_INTERVAL_ANNOTATION = "crossplane.io/poll-interval"


def kubernetes_object(
    manifest: dict[str, Any],
    provider_config_name: str,
    *,
    labels: dict[str, str] | None = None,
    readiness_query: str | None = None,
    management_policies: list[str] | None = None,
    references: list[dict[str, Any]] | None = None,
    namespace: str | None = None,
    watch: bool = False,
    poll_interval: str | None = None,
) -> dict[str, Any]:
    """A `kubernetes.m.crossplane.io/v1alpha1` Object that applies `manifest` on a cluster.

    `readiness_query` switches readiness to `DeriveFromCelQuery`; without it the provider's
    default (`SuccessfulCreate`) applies. `namespace` is only needed when the composing XR is
    cluster-scoped (a namespaced XR's composed resources land in its own namespace).
    The Object's external name is the remote object's name (`EXTERNAL_NAME_ANNOTATION`).
    `watch` sets `spec.watch`: provider-kubernetes, run with `--enable-watches` (the
    configuration docs/install/provider-kubernetes.yaml installs), watches the remote object
    and observes the Object as soon as it changes, instead of at its next poll (rare: a
    change that matters, a claim binding, a Job completing, a workload turning Available, a
    Gateway turning Programmed, a route Accepted, is what is watched).
    `poll_interval` (a Go duration such as `20s`) sets `POLL_INTERVAL_ANNOTATION`.
    """
    spec: dict[str, Any] = {
        "providerConfigRef": {"kind": PROVIDER_CONFIG_KIND, "name": provider_config_name},
        "forProvider": {"manifest": manifest},
    }
    if readiness_query:
        spec["readiness"] = {"policy": "DeriveFromCelQuery", "celQuery": readiness_query}
    if management_policies:
        spec["managementPolicies"] = list(management_policies)
    if references:
        spec["references"] = references
    if watch:
        spec["watch"] = True
    metadata: dict[str, Any] = {}
    if labels:
        metadata["labels"] = dict(labels)
    annotations: dict[str, str] = {}
    remote_name = (manifest.get("metadata") or {}).get("name")
    if remote_name:
        annotations[EXTERNAL_NAME_ANNOTATION] = remote_name
    if poll_interval:
        annotations[POLL_INTERVAL_ANNOTATION] = poll_interval
    if annotations:
        metadata["annotations"] = annotations
    if namespace:
        metadata["namespace"] = namespace
    obj: dict[str, Any] = {"apiVersion": OBJECT_API_VERSION, "kind": OBJECT_KIND, "spec": spec}
    if metadata:
        obj["metadata"] = metadata
    return obj


def secret_key_patch(
    secret_name: str, secret_key: str, to_key: str, *, namespace: str | None = None
) -> dict[str, Any]:
    """A `references[]` entry that copies one key of a control-plane Secret into the remote
    Secret's `data`, on the control plane, by provider-kubernetes: the value never passes
    through a function."""
    source: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "name": secret_name,
        "fieldPath": _data_path(secret_key),
    }
    if namespace:
        source["namespace"] = namespace
    return {"patchesFrom": source, "toFieldPath": _data_path(to_key)}


def _data_path(key: str) -> str:
    """A Secret data key as a Crossplane field path: a key holding a dot (`.dockerconfigjson`)
    goes in brackets, since a dot would read as a path separator."""
    return f"data[{key}]" if "." in key else f"data.{key}"


SERVER_SET_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generateName",
)


# A Secret's values in a composed Object's manifest: Modelfleet never composes them (they are
# copied on the control plane through `patchesFrom`), so any found in an observed Object were
# written back by provider-kubernetes (its releases store the resolved references in the
# Object, provider-kubernetes#223). Carrying them forward would pass them through a function;
# left out, they are copied again by the provider.
SECRET_VALUE_FIELDS = ("data", "stringData")
