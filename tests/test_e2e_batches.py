"""Which example fleets the end-to-end suite may apply together: only fleets that cannot see
each other (modelfleet_devtools.e2e.batches)."""

from typing import Any

import pytest
from modelfleet_devtools.e2e.batches import batches, interfere

Json = dict[str, Any]


def cluster(name: str, provider_config: str | None = None, **labels: str) -> Json:
    return {
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"connection": {"providerConfigName": provider_config or name}},
    }


def cache(name: str, selector: Json | None = None, namespace: str = "ml-team") -> Json:
    spec = {"clusterSelector": selector} if selector is not None else {}
    return {"kind": "ModelCache", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


US = {"matchLabels": {"region": "us"}}
EU = {"matchLabels": {"region": "eu"}}


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(
            [cluster("gke-us", region="us"), cache("a", US)],
            [cluster("gke-eu", region="eu"), cache("b", EU)],
            False,
            id="disjoint-regions-do-not-see-each-other",
        ),
        pytest.param(
            [cluster("gke-us", region="us"), cache("a", US)],
            [cluster("eks-us", region="us"), cache("b", EU)],
            True,
            id="a-selector-matches-the-other-fleets-cluster",
        ),
        pytest.param(
            [cluster("gke-us", region="us"), cache("a", {})],
            [cluster("gke-eu", region="eu")],
            True,
            id="no-selector-matches-every-cluster",
        ),
        pytest.param(
            [cluster("gke-us", region="us"), cache("qwen", US)],
            [cluster("gke-eu", region="eu"), cache("qwen", EU)],
            True,
            id="same-cache-name-in-the-same-namespace",
        ),
        pytest.param(
            [cluster("gke-us", region="us"), cache("qwen", US)],
            [cluster("gke-eu", region="eu"), cache("qwen", EU, namespace="other-team")],
            False,
            id="same-cache-name-in-another-namespace",
        ),
        pytest.param(
            [cluster("gke-us", "shared-pc", region="us")],
            [cluster("gke-eu", "shared-pc", region="eu")],
            True,
            id="one-provider-config-for-both",
        ),
    ],
)
def test_fleets_interfere_when_one_can_see_the_other(a, b, expected):
    assert interfere(a, b) is expected
    assert interfere(b, a) is expected


def test_batches_group_what_does_not_interfere_and_keep_the_solo_alone():
    fleets = {
        "us": [cluster("gke-us", region="us"), cache("a", US)],
        "eu": [cluster("gke-eu", region="eu"), cache("b", EU)],
        "us-too": [cluster("eks-us", region="us"), cache("c", US)],
        "quickstart": [cluster("gke-dev", region="dev")],
    }
    assert batches(fleets, alone=["quickstart"]) == [["us", "eu"], ["us-too"], ["quickstart"]]
