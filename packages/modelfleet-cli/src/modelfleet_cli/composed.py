"""The metadata Crossplane gives a composed resource: its name, namespace, labels, the
composition-resource-name annotation and a controller reference to the XR."""

import copy
from collections.abc import Mapping
from typing import Any

from modelfleet_contracts.fields import mapping_at

ANNOTATION_RESOURCE_NAME = "crossplane.io/composition-resource-name"
LABEL_COMPOSITE = "crossplane.io/composite"
LABEL_CLAIM_NAME = "crossplane.io/claim-name"
LABEL_CLAIM_NAMESPACE = "crossplane.io/claim-namespace"


def composed_metadata(
    desired: Mapping[str, Any],
    xr: Mapping[str, Any],
    name: str,
    observed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`desired` with the metadata Crossplane gives a composed resource: the observed
    resource's name (or a generateName from the root composite), the XR's namespace for a
    namespaced XR, the composition-resource-name annotation, the `crossplane.io/composite`
    label (and claim labels) and a controller owner reference to the XR."""
    out = copy.deepcopy(dict(desired))
    metadata = out.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        metadata = out["metadata"] = {}
    xr_meta = mapping_at(xr, "metadata")
    xr_labels = mapping_at(xr_meta, "labels")
    if observed is not None:
        obs_meta = mapping_at(observed, "metadata")
        for key in ("namespace", "name", "generateName"):
            if obs_meta.get(key):
                metadata[key] = obs_meta[key]
            else:
                metadata.pop(key, None)
    prefix = xr_labels.get(LABEL_COMPOSITE) or xr_meta.get("name", "")
    if not metadata.get("name") and not metadata.get("generateName"):
        metadata["generateName"] = f"{prefix}-"
    if xr_meta.get("namespace"):
        metadata["namespace"] = xr_meta["namespace"]
    metadata.setdefault("annotations", {})[ANNOTATION_RESOURCE_NAME] = name
    labels = metadata.setdefault("labels", {})
    labels[LABEL_COMPOSITE] = prefix
    if xr_labels.get(LABEL_CLAIM_NAME) and xr_labels.get(LABEL_CLAIM_NAMESPACE):
        labels[LABEL_CLAIM_NAME] = xr_labels[LABEL_CLAIM_NAME]
        labels[LABEL_CLAIM_NAMESPACE] = xr_labels[LABEL_CLAIM_NAMESPACE]
    owner = {
        "apiVersion": xr.get("apiVersion", ""),
        "kind": xr.get("kind", ""),
        "name": xr_meta.get("name", ""),
        "uid": xr_meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    references = [
        r
        for r in metadata.get("ownerReferences") or []
        if isinstance(r, Mapping) and not r.get("controller")
    ]
    metadata["ownerReferences"] = [*references, owner]
    return out
