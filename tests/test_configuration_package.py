"""The Configuration package (apis/crossplane.yaml) installs Modelfleet on its own: it depends
on every function its Compositions call, under a name Crossplane will give the Function it
installs, and declares the Crossplane release its XRDs need."""

import yaml
from modelfleet_devtools.paths import APIS_DIR, REPO_ROOT

CONFIGURATION = yaml.safe_load((APIS_DIR / "crossplane.yaml").read_text())
SCALE_SUBRESOURCE_FLOOR = (2, 3, 0)  # Crossplane accepts XRD subresources from v2.3.0


def version_floor(constraint: str) -> tuple[int, ...]:
    assert constraint.startswith(">=v"), constraint
    return tuple(int(p) for p in constraint.removeprefix(">=v").split("."))


def dependency_name(package: str) -> str:
    """The name Crossplane's package manager gives a dependency: its repository path, as a
    DNS label (the registry host left out)."""
    return package.split("/", 1)[1].replace("/", "-")


def test_every_function_a_composition_calls_is_a_dependency_under_its_own_name() -> None:
    called = set()
    for composition in APIS_DIR.glob("*/composition.yaml"):
        for step in yaml.safe_load(composition.read_text())["spec"]["pipeline"]:
            called.add(step["functionRef"]["name"])
    installed = {
        dependency_name(d["package"]) for d in CONFIGURATION["spec"]["dependsOn"]
        if d["kind"] == "Function"
    }  # fmt: skip
    assert called == installed


def test_it_needs_provider_kubernetes() -> None:
    packages = {d["package"] for d in CONFIGURATION["spec"]["dependsOn"]}
    assert "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes" in packages


def test_the_crossplane_floor_admits_what_the_xrds_declare() -> None:
    subresources = any(
        version.get("subresources")
        for xrd in APIS_DIR.glob("*/definition.yaml")
        for version in yaml.safe_load(xrd.read_text())["spec"]["versions"]
    )
    assert subresources, "no XRD declares subresources any more: the floor may come down"
    for meta in (
        CONFIGURATION,
        yaml.safe_load((REPO_ROOT / "crossplane-project.yaml").read_text()),
    ):
        floor = version_floor(meta["spec"]["crossplane"]["version"])
        assert floor >= SCALE_SUBRESOURCE_FLOOR, meta["metadata"]["name"]
