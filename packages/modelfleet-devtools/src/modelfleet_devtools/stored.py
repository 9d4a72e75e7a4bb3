"""Objects as a real API server returns them, and Crossplane sends them to a function: the
server's metadata (managed fields as it records them), the defaults it fills in, what
Crossplane and provider-kubernetes write on an XR and an Object. Benchmarks build their
requests from these so that they are the size of the ones a real fleet sends
(tests/test_benchmarks.py holds a shard's to a captured one)."""

import json
import uuid
from collections.abc import Callable
from typing import Any

from modelfleet_contracts.objects import EXTERNAL_NAME_ANNOTATION

from modelfleet_devtools.world import observed_object

OBJECT_API = "kubernetes.m.crossplane.io/v1alpha1"
# The field manager Crossplane applies composed resources as (and the composition's digest).
COMPOSED_MANAGER = "apiextensions.crossplane.io/composed/" + "0" * 64


def fields_v1(tree: Any, *, keyed_lists: bool = False) -> dict[str, Any]:
    """The field set a managedFields entry records for `tree`: every field of a map by name,
    its own fields below it. Lists are recorded as a whole, as a schema without list types
    (an Object's preserved manifest) has them; `keyed_lists`: as Kubernetes' own types
    have them, the items of a list of maps by their key (`name` or `type`)."""
    if isinstance(tree, list) and keyed_lists:
        items = {}
        for index, item in enumerate(tree):
            if not isinstance(item, dict):
                return {}
            key = next((k for k in ("name", "type") if k in item), None)
            label = json.dumps({key: item[key]}) if key else json.dumps(index)
            items[f"k:{label}" if key else f"i:{label}"] = fields_v1(item, keyed_lists=True)
        return items
    if not isinstance(tree, dict):
        return {}
    fields = {f"f:{k}": fields_v1(v, keyed_lists=keyed_lists) for k, v in tree.items()}
    return {".": {}, **fields}


def _owned(obj: dict[str, Any], *fields: str) -> dict[str, Any]:
    return {f: obj[f] for f in fields if f in obj}


def _server_metadata(
    obj: dict[str, Any], applier: str, status_manager: str, *, keyed_lists: bool = False
) -> None:
    """What an API server adds to an object it stores: uid, versions, and managed fields as
    a real one records them, the applier owning the metadata it set and the spec, the
    status writer the status (their size follows the object's, as on a real server)."""
    metadata = obj.setdefault("metadata", {})
    metadata.setdefault("uid", str(uuid.uuid4()))
    metadata.setdefault("resourceVersion", "18446744")
    metadata.setdefault("generation", 1)
    metadata.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
    if "managedFields" in metadata:
        return
    applied = {
        "metadata": _owned(metadata, "labels", "annotations", "generateName", "ownerReferences")
    } | _owned(obj, "spec", "data", "type")
    entries = [_entry(applier, "Apply", applied, keyed_lists=keyed_lists)]
    if obj.get("status"):
        status = {"status": obj["status"]}
        entries.append(_entry(status_manager, "Update", status, "status", keyed_lists=keyed_lists))
    metadata["managedFields"] = entries


def _entry(
    manager: str,
    operation: str,
    owned: dict[str, Any],
    subresource: str | None = None,
    *,
    keyed_lists: bool = False,
) -> dict[str, Any]:
    entry = {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "manager": manager,
        "operation": operation,
        "time": "2026-01-01T00:00:00Z",
        "fieldsV1": {
            k: v for k, v in fields_v1(owned, keyed_lists=keyed_lists).items() if k != "."
        },
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


STAMP = "2026-01-01T00:00:00Z"


def as_stored(obj: dict[str, Any], applier: str = "kubectl") -> dict[str, Any]:
    """`obj`, an XR, as Crossplane sends it as a required resource: what Crossplane adds to
    its spec (composition and five composed resources' refs, as an InferenceCluster has) and
    its status (Synced, Ready, Responsive), and the API server's metadata."""
    name = obj.get("metadata", {}).get("name", "")
    refs = [
        {"apiVersion": OBJECT_API, "kind": "Object", "name": f"{name}-{i:012x}"} for i in range(5)
    ]
    obj.setdefault("spec", {})["crossplane"] = {
        "compositionRef": {"name": "inferenceclusters"},
        "compositionRevisionRef": {"name": "inferenceclusters-0a1b2c3"},
        "compositionUpdatePolicy": "Automatic",
        "resourceRefs": refs,
    }
    status = obj.setdefault("status", {})
    status["conditions"] = [
        *(status.get("conditions") or []),
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
        {"type": "Ready", "status": "True", "reason": "Available"},
        {"type": "Responsive", "status": "True", "reason": "WatchCircuitClosed"},
    ]
    for condition in status["conditions"]:
        condition.setdefault("lastTransitionTime", STAMP)
        condition.setdefault("observedGeneration", 3)
    _server_metadata(obj, applier, "apiextensions.crossplane.io/composite", keyed_lists=True)
    crossplane = {"spec": {"crossplane": obj["spec"]["crossplane"]}}
    obj["metadata"]["managedFields"].append(
        _entry("apiextensions.crossplane.io/composite", "Apply", crossplane)
    )
    return obj


# What a real API server fills in on the remote objects the benchmarks echo (read off a
# request Crossplane sent, functions/compose-model-cache/tests/captured/).
_CONTAINER_DEFAULTS = {
    "imagePullPolicy": "IfNotPresent",
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}
_POD_DEFAULTS = {
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
}
_JOB_DEFAULTS = {
    "completionMode": "NonIndexed",
    "completions": 1,
    "parallelism": 1,
    "manualSelector": False,
    "suspend": False,
}


def _remote_defaults(manifest: dict[str, Any]) -> None:
    uid = str(uuid.uuid4())
    if manifest.get("kind") == "Job":
        spec = manifest.setdefault("spec", {})
        for key, value in _JOB_DEFAULTS.items():
            spec.setdefault(key, value)
        job = manifest.get("metadata", {}).get("name", "")
        owned = {"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid}
        owned |= {"batch.kubernetes.io/job-name": job, "job-name": job}
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        template = spec.setdefault("template", {})
        template.setdefault("metadata", {}).setdefault("labels", {}).update(owned)
        pod = template.setdefault("spec", {})
        for key, value in _POD_DEFAULTS.items():
            pod.setdefault(key, value)
        if "serviceAccountName" in pod:
            pod.setdefault("serviceAccount", pod["serviceAccountName"])
        for container in pod.get("containers", []):
            for key, value in _CONTAINER_DEFAULTS.items():
                container.setdefault(key, value)
    elif manifest.get("kind") == "PersistentVolumeClaim":
        spec = manifest.setdefault("spec", {})
        spec.setdefault("volumeMode", "Filesystem")
        spec.setdefault("volumeName", f"pvc-{uid}")
        metadata = manifest.setdefault("metadata", {})
        metadata.setdefault("finalizers", ["kubernetes.io/pvc-protection"])
        metadata.setdefault("annotations", {}).update(
            {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
            }
        )
    for condition in (manifest.get("status") or {}).get("conditions") or []:
        condition.setdefault("lastProbeTime", STAMP)
        condition.setdefault("lastTransitionTime", STAMP)


def observed_as_stored(
    desired: dict[str, Any], *, remote_status: dict[str, Any] | None, ready: bool | None
) -> dict[str, Any]:
    """A composed Object as Crossplane sends it back once provider-kubernetes observed it:
    the Object and its echoed remote manifest both carry the server-set metadata a real API
    server adds, managed fields included, so request sizes are those of a real fleet rather
    than a minimal fixture."""
    obj = observed_object(desired, remote_status=remote_status, ready=ready)
    manifest = obj["status"]["atProvider"]["manifest"]
    if manifest:
        _remote_defaults(manifest)
        _server_metadata(
            manifest, "provider-kubernetes", "kube-controller-manager", keyed_lists=True
        )
    metadata = obj.setdefault("metadata", {})
    # What the provider's managed reconciler writes on the Object itself.
    written: dict[str, str] = {
        EXTERNAL_NAME_ANNOTATION: metadata.get("name", ""),
        "crossplane.io/external-create-pending": STAMP,
        "crossplane.io/external-create-succeeded": STAMP,
    }
    reconciler = {"annotations": written, "finalizers": ["finalizer.managedresource.crossplane.io"]}
    for condition in obj["status"]["conditions"]:
        condition.setdefault("lastTransitionTime", STAMP)
        condition.setdefault("observedGeneration", 1)
    _server_metadata(obj, COMPOSED_MANAGER, "provider-kubernetes")
    # The reconciler's external name is written only where none was composed.
    annotations = metadata.setdefault("annotations", {})
    annotations.update({**written, **annotations})
    metadata.setdefault("finalizers", reconciler["finalizers"])
    metadata["managedFields"].insert(
        1, _entry("provider-kubernetes", "Update", {"metadata": reconciler})
    )
    return obj


def observed_ready(
    desired: dict[str, dict[str, Any]],
    remote_status: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda manifest: None,
) -> dict[str, dict[str, Any]]:
    """Every desired composed resource as observed Ready. provider-kubernetes Objects echo
    their manifest with `remote_status(manifest)`; other kinds (provider configs, Helm
    releases, XRs) carry the server metadata and Ready/Synced conditions."""
    observed: dict[str, dict[str, Any]] = {}
    for name, obj in desired.items():
        manifest = obj.get("spec", {}).get("forProvider", {}).get("manifest")
        if obj.get("kind") == "Object" and isinstance(manifest, dict):
            observed[name] = observed_as_stored(
                obj, remote_status=remote_status(manifest), ready=True
            )
        else:
            seen = observed_object(obj, ready=True)
            del seen["status"]["atProvider"]
            _server_metadata(seen, COMPOSED_MANAGER, "provider-kubernetes")
            observed[name] = seen
    return observed
