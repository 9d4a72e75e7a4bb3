"""A ModelCacheShard reports its clusters exactly as a ModelCache lists them: the ModelCache
copies its shards' rows, pin and conditions into its own status (cache/fleet.py), and the
API server prunes or refuses what a schema does not allow. So the two XRDs' status schemas
are one schema, written twice (an XRD cannot refer to another), and held equal here; but for
what only the ModelCache decides and reports (CACHE_ONLY: where it is staged, footprint.py)."""

from pathlib import Path
from typing import Any

import yaml

APIS = Path(__file__).resolve().parents[3] / "apis"
CACHE_ONLY = frozenset({"staging"})


def status_schema(plural: str) -> dict[str, Any]:
    xrd = yaml.safe_load((APIS / plural / "definition.yaml").read_text())
    (version,) = xrd["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]["properties"]["status"]


def test_a_shards_status_schema_is_the_caches():
    cache, shard = status_schema("modelcaches"), status_schema("modelcacheshards")
    assert cache["properties"].keys() >= CACHE_ONLY
    assert not CACHE_ONLY & shard["properties"].keys()
    cache = {**cache, "properties": {
        k: v for k, v in cache["properties"].items() if k not in CACHE_ONLY
    }}  # fmt: skip
    differing = sorted(
        key
        for key in cache["properties"].keys() | shard["properties"].keys()
        if cache["properties"].get(key) != shard["properties"].get(key)
    )
    assert not differing, f"status fields that differ between the two XRDs: {differing}"
    assert cache == shard


def test_every_row_field_the_shard_reports_is_one_the_cache_lists():
    """The row fields a shard writes (core.py) all have a place in both schemas."""
    row = status_schema("modelcacheshards")["properties"]["clusters"]["items"]["properties"]
    written = {
        "name", "phase", "reason", "message", "claimName", "path", "fingerprint",
        "progress", "bytesDone", "bytesTotal", "resolvedRevision",
    }  # fmt: skip
    assert written <= row.keys()
