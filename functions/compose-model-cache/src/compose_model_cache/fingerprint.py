"""The fingerprint of a cache's source: which weights a directory holds.

Anything that changes which files are downloaded (repo, revision, filters, S3 location, OCI
image reference and path) changes the fingerprint, so new weights land in a fresh directory
and are never mixed with old ones. Credentials and sizing do not.
"""

import hashlib
import json
from typing import Any

from modelfleet_contracts.models.modelcache import S3, HuggingFace, ModelCacheSpec, Oci, Source

DEFAULT_OCI_PATH = "/models"  # the XRD's default for spec.oci.path (KServe's modelcars)

FINGERPRINT_LEN = 12


def source_of(spec: ModelCacheSpec) -> HuggingFace | S3 | Oci:
    """The block `spec.source` selects. A spec `spec_problem` (staging.py) passed always has it;
    one that did not is refused loudly rather than fingerprinted as some other source."""
    blocks = {Source.S3: spec.s3, Source.OCI: spec.oci, Source.HuggingFace: spec.huggingFace}
    block = blocks[spec.source]
    if block is None:
        raise ValueError(f"spec.source is {spec.source} but its block is unset: not a checked spec")
    return block


def source_fingerprint(spec: ModelCacheSpec) -> str:
    """12 hex characters identifying the weights `spec` describes."""
    source = source_of(spec)
    # The identity's keys and values are those of the first release: changing any of them
    # (even an absent value's spelling, "" rather than null) would move every cache's weights.
    identity: dict[str, Any]
    if isinstance(source, S3):
        identity = {"source": "S3", "uri": source.uri, "endpoint": source.endpoint or ""}
    elif isinstance(source, Oci):
        # The reference as written: a new digest (or tag) is a new directory. A tag that moves
        # upstream does not change it: the digest it was first resolved to is pinned (revision.py).
        identity = {
            "source": "OCI",
            "image": source.image,
            "path": source.path or DEFAULT_OCI_PATH,
            "include": sorted(p.root for p in source.include or []),
            "exclude": sorted(p.root for p in source.exclude or []),
        }
    else:
        identity = {
            "source": "HuggingFace",
            "repo": source.repo,
            "revision": source.revision or "",
            "include": sorted(p.root for p in source.include or []),
            "exclude": sorted(p.root for p in source.exclude or []),
        }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:FINGERPRINT_LEN]
