"""What staging a cache needs, which the ModelCache and its shards decide alike: a spec the
function can act on, and a cluster that can take the cache."""

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.models.modelcache import ModelCacheSpec


def spec_problem(spec: ModelCacheSpec) -> str | None:
    """What the schema alone does not catch (its CEL rules), in words; None when valid."""
    if spec.source == "HuggingFace" and not spec.huggingFace:
        return "spec.huggingFace is required when source is HuggingFace"
    if spec.source == "S3" and not spec.s3:
        return "spec.s3 is required when source is S3"
    if spec.source == "OCI" and not spec.oci:
        return "spec.oci is required when source is OCI"
    if not spec.sizeGiB and not (spec.storage and spec.storage.existingClaimName):
        return "spec.sizeGiB is required unless storage.existingClaimName is set"
    return None


def why_cannot_stage(view: ClusterView, byo_claim: bool) -> str | None:
    """Why the cache cannot be staged on `view` now, in words; None when it can (a claim the
    user brings needs no storage class of the cluster)."""
    if not view.connected:
        return f"cluster {view.name} is not connected"
    if not view.reachable:
        return f"cluster {view.name} has no provider config or workload namespace yet"
    if not byo_claim and not view.has_shared_storage:
        return f"cluster {view.name} reports no ready ReadWriteMany storage"
    return None
