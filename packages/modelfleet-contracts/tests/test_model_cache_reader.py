"""A referenced ModelCache reads as the same `StagedCache` straight from protobuf as from plain
data (what compose-model-deployment and compose-model-replica read before), whatever shape
its status has, for the scheduler (every row) and for a replica (its own row)."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelfleet_contracts.edge.observed import read_model_cache
from modelfleet_contracts.fields import list_at, mapping_at
from modelfleet_contracts.observed import CacheRow, StagedCache
from modelfleet_devtools.fuzz import read_both_ways, struct_of
from modelfleet_devtools.world import ready_model_cache

# One strategy each (`a | b` draws each branch of a flattened union equally often): a value
# of another type than the schema's, and the names and words a status holds.
odd = st.sampled_from([None, True, False, 0, 3, -1.5, float("nan"), [], [None], {}, {"k": 1}])
# Few names, so that rows share one (a replica reads the first, the scheduler the last).
names = st.sampled_from(["gpu-a", "gpu-b", "", "None"])
text = st.sampled_from(["", "Ready", "Hydrating", "pvc-1", "/5e6f", "a/../b"])


def mostly(usual: st.SearchStrategy[Any], other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`usual` three times in four, else `other`: the derandomized `ci` profile's 150 cases
    then still reach the rows (shapes without them are rows of the table below)."""
    return st.integers(0, 3).flatmap(lambda k: other if k == 0 else usual)


fields = {
    "phase": text | odd,
    "message": text | odd,
    "claimName": text | odd,
    "path": text | odd,
    "fingerprint": text,
}
row = mostly(
    st.fixed_dictionaries({"name": mostly(names, odd)}, optional=fields),
    st.fixed_dictionaries({}, optional=fields) | odd,
)
status = st.fixed_dictionaries(
    {"clusters": mostly(st.lists(row, max_size=6), odd)},
    optional={"summary": st.fixed_dictionaries({"ready": st.just("1/2")})},
)
cache = st.fixed_dictionaries(
    {"status": mostly(status, odd)}, optional={"metadata": st.fixed_dictionaries({"name": names})}
)
# None: the scheduler reads every row; a name: a replica on that cluster reads its own.
asked = st.none() | names


def _text(value: Any) -> str:
    return str(value or "")


def staged_cache(obj: dict[str, Any], cluster: str | None) -> StagedCache:
    """The oracle: the plain-data reading the scheduler and the replica did before, with a
    row's name read as the string it must be (any other value: no cluster's, "")."""
    phases: dict[str, str] = {}
    for raw in list_at(mapping_at(obj, "status"), "clusters"):
        if not isinstance(raw, dict):
            continue
        name = raw.get("name") if isinstance(raw.get("name"), str) else ""
        if cluster is None:
            phases[name] = _text(raw.get("phase"))
        elif name == cluster:
            here = CacheRow(
                phase=_text(raw.get("phase")),
                message=_text(raw.get("message")),
                claim_name=_text(raw.get("claimName")),
                path=_text(raw.get("path")),
            )
            return StagedCache(phases={name: here.phase}, row=here)
    return StagedCache(phases=phases)


@given(cache, asked)
def test_protobuf_and_plain_readers_agree_on_any_shape(data, cluster):
    fast, oracle = read_both_ways(
        lambda s: read_model_cache(s, cluster=cluster), lambda d: staged_cache(d, cluster), data
    )
    assert fast == oracle


HYDRATING = {"name": "gpu-b", "phase": "Hydrating", "message": "37.2/120.0 GiB"}


@pytest.mark.parametrize(
    ("status", "cluster", "phases", "row"),
    [
        pytest.param(
            ready_model_cache(["gpu-a"])["status"],
            None,
            {"gpu-a": "Ready"},
            None,
            id="the scheduler reads every cluster's phase",
        ),
        pytest.param(
            ready_model_cache(["gpu-a", "gpu-b"])["status"],
            "gpu-b",
            {"gpu-b": "Ready"},
            CacheRow("Ready", "", "modelcache-ml-team-kimi-k2-1a2b3", "5e6f7a8b9c0d"),
            id="a replica reads its own row whole: where to mount the weights",
        ),
        pytest.param(
            {"clusters": [HYDRATING]},
            "gpu-b",
            {"gpu-b": "Hydrating"},
            CacheRow("Hydrating", "37.2/120.0 GiB"),
            id="a row not Ready yet says why",
        ),
        pytest.param(
            {"clusters": [HYDRATING]}, "gpu-a", {}, None, id="a cluster not listed has no row"
        ),
        pytest.param(
            {"clusters": [{"phase": "Ready"}, {"name": 7, "phase": "Ready"}, "junk"]},
            None,
            {"": "Ready"},
            None,
            id="rows without a string name count as reported, under no cluster's name",
        ),
        pytest.param(
            {"clusters": [{"name": "gpu-a", "phase": 3, "message": True, "path": ["x"]}]},
            "gpu-a",
            {"gpu-a": "3.0"},
            CacheRow("3.0", "True", "", "['x']"),
            id="a value of another type reads as its text, as the plain readers gave it",
        ),
        pytest.param(
            {"clusters": [{"name": "gpu-a"}]},
            None,
            {"gpu-a": ""},
            None,
            id="a row without a phase reads as unreported",
        ),
        pytest.param({}, None, {}, None, id="nothing reported yet"),
        pytest.param(None, "gpu-a", {}, None, id="no status at all"),
        pytest.param("broken", "gpu-a", {}, None, id="a status of another shape reads as empty"),
    ],
)
def test_what_the_scheduler_and_a_replica_read_of_a_cache(status, cluster, phases, row):
    cache = {"metadata": {"name": "kimi-k2"}} | ({"status": status} if status is not None else {})
    assert read_model_cache(struct_of(cache), cluster=cluster) == StagedCache(phases, row)
