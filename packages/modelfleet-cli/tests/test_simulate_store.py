"""The simulated control plane's store keeps its by-kind index in step with every write, so
that what a lookup by kind reads is what a scan of every object would find."""

import pytest
from modelfleet_cli.simulate.store import Store


def obj(kind: str, name: str) -> dict:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}}


def scan(store: Store, kind: str) -> dict:
    return {k: o for k, o in store.items() if k[1] == kind}


WRITES = [
    pytest.param(lambda s: s.__delitem__(("v1", "Job", "", "a")), id="del"),
    pytest.param(lambda s: s.pop(("v1", "Job", "", "a")), id="pop"),
    pytest.param(lambda s: s.pop(("v1", "Job", "", "gone"), None), id="pop of a missing key"),
    pytest.param(lambda s: s.update({("v1", "Job", "", "c"): obj("Job", "c")}), id="update"),
    pytest.param(lambda s: s.setdefault(("v1", "Pod", "", "p"), obj("Pod", "p")), id="setdefault"),
    pytest.param(lambda s: s.popitem(), id="popitem"),
    pytest.param(lambda s: s.clear(), id="clear"),
    pytest.param(lambda s: s.__setitem__(("v1", "Job", "", "a"), obj("Job", "a2")), id="replace"),
]


@pytest.mark.parametrize("write", WRITES)
def test_every_write_keeps_the_index(write):
    store = Store()
    for kind, name in [("Job", "a"), ("Job", "b"), ("Secret", "s")]:
        store[("v1", kind, "", name)] = obj(kind, name)
    write(store)
    for kind in ("Job", "Secret", "Pod"):
        assert dict(store.of_kind(kind)) == scan(store, kind), kind
