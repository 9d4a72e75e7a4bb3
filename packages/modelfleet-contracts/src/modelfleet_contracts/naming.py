"""Deterministic, DNS-1123 names for objects composed on workload clusters.

Remote names are qualified by the XR's control-plane namespace so that two teams'
caches or deployments of the same name never collide on a shared cluster. They must
stay stable across releases: changing them re-creates PVCs and workloads.
"""

import hashlib
import re

_DNS_LABEL_MAX = 63
_HASH_LEN = 5
_INVALID = re.compile(r"[^a-z0-9-]+")


def _dns_label(text: str) -> str:
    return _INVALID.sub("-", text.lower()).strip("-")


def remote_name(*parts: str, max_len: int = _DNS_LABEL_MAX) -> str:
    """`parts` joined with dashes plus a 5-hex hash of them, ≤ `max_len` characters, DNS-1123.

    The hash is taken over the raw parts, so names that sanitise alike
    (`a.b` and `a-b`) still differ.
    """
    digest = hashlib.sha256("/".join(parts).encode()).hexdigest()[:_HASH_LEN]
    prefix = _dns_label("-".join(p for p in parts if p))[: max_len - _HASH_LEN - 1]
    prefix = prefix.rstrip("-")
    return f"{prefix}-{digest}" if prefix else f"mf-{digest}"


def cache_claim_name(cache_namespace: str, cache_name: str) -> str:
    """The managed PVC of a ModelCache on every cluster, e.g. `modelcache-ml-team-kimi-k2-1a2b3`."""
    return remote_name("modelcache", cache_namespace, cache_name)


# LeaderWorkerSet derives pod and Service names from its own name plus group and
# worker indices; keeping the base short leaves room for those suffixes.
WORKLOAD_NAME_MAX = 45


def workload_name(deployment_namespace: str, deployment_name: str) -> str:
    """The Deployment / LeaderWorkerSet / Service serving a ModelDeployment on a cluster."""
    return remote_name("model", deployment_namespace, deployment_name, max_len=WORKLOAD_NAME_MAX)


def composed_key(*parts: str) -> str:
    """A composition-resource-name (the key of a desired composed resource)."""
    return "-".join(_dns_label(p) for p in parts if p)
