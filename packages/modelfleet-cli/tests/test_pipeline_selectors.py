"""Which objects a function's requirement selects, case by case, as Crossplane resolves them."""

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_cli.selectors import resolve, select
from modelfleet_cli.simulate.objects import key_of
from modelfleet_cli.simulate.store import Store

IC = ("modelfleet.io/v1alpha1", "InferenceCluster")
MC = ("modelfleet.io/v1alpha1", "ModelCache")


def obj(kind: tuple[str, str], name: str, namespace: str = "", **labels: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": kind[0], "kind": kind[1], "metadata": metadata}


POOL = [
    obj(IC, "gke-us", region="us", tier="gold"),
    obj(IC, "aks-eu", region="eu"),
    obj(IC, "eks-us", region="us"),
    obj(MC, "qwen", "ml-team", team="ml"),
    obj(MC, "qwen", "research", team="ml"),
    obj(("modelfleet.io/v1beta1", "InferenceCluster"), "future", region="us"),
]


def by_name(
    kind: tuple[str, str], name: str, namespace: str | None = None
) -> fnv1.ResourceSelector:
    sel = fnv1.ResourceSelector(api_version=kind[0], kind=kind[1], match_name=name)
    if namespace is not None:
        sel.namespace = namespace
    return sel


def by_labels(
    kind: tuple[str, str], namespace: str | None = None, **labels: str
) -> fnv1.ResourceSelector:
    sel = fnv1.ResourceSelector(api_version=kind[0], kind=kind[1])
    sel.match_labels.SetInParent()
    sel.match_labels.labels.update(labels)
    if namespace is not None:
        sel.namespace = namespace
    return sel


def names(found: list[dict[str, Any]]) -> list[str]:
    return [f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in found]


@pytest.mark.parametrize(
    ("case", "selector", "expected"),
    [
        ("a cluster by name", by_name(IC, "gke-us"), ["/gke-us"]),
        ("a name that does not exist", by_name(IC, "gke-asia"), []),
        ("a cache by name in its namespace", by_name(MC, "qwen", "research"), ["research/qwen"]),
        ("a cache by name in another namespace", by_name(MC, "qwen", "sales"), []),
        ("a namespaced cache by name without a namespace", by_name(MC, "qwen"), []),
        ("clusters by a label, by name", by_labels(IC, region="us"), ["/eks-us", "/gke-us"]),
        ("clusters by every label", by_labels(IC, region="us", tier="gold"), ["/gke-us"]),
        ("a label value that differs", by_labels(IC, region="asia"), []),
        ("no labels selects every cluster", by_labels(IC), ["/aks-eu", "/eks-us", "/gke-us"]),
        ("labels within a namespace", by_labels(MC, "ml-team", team="ml"), ["ml-team/qwen"]),
        (
            "labels across namespaces",
            by_labels(MC, team="ml"),
            ["ml-team/qwen", "research/qwen"],
        ),
        ("another apiVersion of the kind", by_name(IC, "future"), []),
        (
            "no match at all lists the kind",
            fnv1.ResourceSelector(api_version=IC[0], kind=IC[1]),
            ["/aks-eu", "/eks-us", "/gke-us"],
        ),
    ],
)
def test_selector(case: str, selector: fnv1.ResourceSelector, expected: list[str]) -> None:
    assert names(select(selector, POOL)) == expected, case
    # The simulated control plane's store, read by kind and by key, selects the same.
    assert names(select(selector, as_store(POOL))) == expected, f"{case} (store)"


def as_store(pool: list[dict[str, Any]]) -> Store:
    store = Store()
    for item in pool:
        store[key_of(item)] = item
    return store


def test_the_store_never_hands_a_secret_to_a_function() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hf", "namespace": "a"}}
    store = as_store([secret])
    assert select(by_name(("v1", "Secret"), "hf", "a"), store) == []
    assert select(by_labels(("v1", "Secret")), store) == []


def test_resolve_keeps_every_requirement_even_when_nothing_matched() -> None:
    resolved = resolve({"hit": by_name(IC, "gke-us"), "miss": by_name(IC, "nope")}, POOL)
    assert len(resolved["hit"].items) == 1
    assert "miss" in resolved and len(resolved["miss"].items) == 0


def test_malformed_objects_in_the_pool_are_skipped_not_fatal() -> None:
    pool: list[dict[str, Any]] = [
        {"apiVersion": IC[0], "kind": IC[1], "metadata": None},
        {"apiVersion": IC[0], "kind": IC[1], "metadata": {"name": "ok", "labels": "oops"}},
    ]
    assert names(select(by_labels(IC, region="us"), pool)) == []
    assert names(select(by_name(IC, "ok"), pool)) == ["/ok"]
