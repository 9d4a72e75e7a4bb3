"""The fingerprint of a cache's source: which weights a directory holds.

Anything that changes which files are downloaded (repo, revision, filters, S3 location)
changes the fingerprint, so new weights land in a fresh directory and are never mixed
with old ones. Credentials and sizing do not.
"""

import hashlib
import json
from typing import Any

FINGERPRINT_LEN = 12


def source_fingerprint(spec: dict[str, Any]) -> str:
    """12 hex characters identifying the weights `spec` describes."""
    kind = spec.get("source")
    if kind == "S3":
        s3 = spec.get("s3") or {}
        identity: dict[str, Any] = {
            "source": "S3",
            "uri": s3.get("uri"),
            "endpoint": s3.get("endpoint") or "",
        }
    else:
        hf = spec.get("huggingFace") or {}
        identity = {
            "source": "HuggingFace",
            "repo": hf.get("repo"),
            "revision": hf.get("revision") or "",
            "include": sorted(hf.get("include") or []),
            "exclude": sorted(hf.get("exclude") or []),
        }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:FINGERPRINT_LEN]
