"""Objects on the simulated control plane: their keys, the XRs among them, Secrets as stored."""

import base64
import copy
from typing import Any

from modelfleet_contracts.api import (
    API_VERSION,
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_CACHE_SHARD,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
    MODEL_SERVICE,
)
from modelfleet_contracts.fields import mapping_at, mapping_path

from modelfleet_cli.simulate.fleet import XR_ORDER

Key = tuple[str, str, str, str]  # apiVersion, kind, namespace, name


def key_of(obj: dict[str, Any]) -> Key:
    metadata = mapping_at(obj, "metadata")
    return (
        str(obj.get("apiVersion")),
        str(obj.get("kind")),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


def is_xr(obj: dict[str, Any]) -> bool:
    return obj.get("apiVersion") == API_VERSION and obj.get("kind") in XR_ORDER


# Within a round, what others read is reconciled first, and a composed XR (a ModelReplica)
# before the XR that composes it and reports its status (a ModelDeployment); a ModelService,
# which reads what the deployments report, last.
RECONCILE_ORDER = (
    INFERENCE_CLUSTER,
    MODEL_CACHE_SHARD,
    MODEL_CACHE,
    MODEL_REPLICA,
    MODEL_DEPLOYMENT,
    MODEL_SERVICE,
)


def in_reconcile_order(key: Key) -> tuple[int, str, str]:
    return RECONCILE_ORDER.index(key[1]), key[2], key[3]


def in_listing_order(key: Key) -> tuple[int, str, str]:
    return XR_ORDER.index(key[1]), key[2], key[3]


def stored_secret(secret: dict[str, Any]) -> dict[str, Any]:
    """A Secret as the API server stores it: `stringData` merged into base64 `data`."""
    stored = copy.deepcopy(secret)
    plain = stored.pop("stringData", None)
    if isinstance(plain, dict):
        data = stored.setdefault("data", {})
        for k, v in plain.items():
            data[k] = base64.b64encode(str(v).encode()).decode()
    return stored


def is_namespace_object(obj: dict[str, Any]) -> bool:
    """Whether a managed resource is a provider-kubernetes Object for a Namespace."""
    return mapping_path(obj, "spec", "forProvider", "manifest").get("kind") == "Namespace"
