"""One release, described the same everywhere.

The Configuration (apis/crossplane.yaml) and the Crossplane CLI's Project (crossplane-project.yaml)
declare the same Crossplane floor, Provider dependencies and Functions. The versions the docs
install, the README's table of upstream CRDs and the end-to-end harness name are one set: the
one getting-started.md's table says the release is tested with, and the packages' floors admit.
"""

import re
from typing import Any

import pytest
import yaml
from modelfleet_devtools.e2e.packages import PROVIDER_KUBERNETES_VERSION
from modelfleet_devtools.paths import APIS_DIR, EXAMPLES_DIR, REPO_ROOT
from test_configuration_package import dependency_name, version_floor
from test_docs import DOCS, manifests

CONFIGURATION = yaml.safe_load((APIS_DIR / "crossplane.yaml").read_text())
PROJECT = yaml.safe_load((REPO_ROOT / "crossplane-project.yaml").read_text())
FUNCTIONS = sorted(p.parent.name for p in REPO_ROOT.glob("functions/*/package"))
GETTING_STARTED = DOCS / "getting-started.md"
INSTALL = DOCS / "install"
PROVIDER_KUBERNETES = "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"
PROVIDER_HELM = "xpkg.crossplane.io/crossplane-contrib/provider-helm"


def _configuration_dependencies(kind: str) -> dict[str, str]:
    return {
        d["package"]: d["version"] for d in CONFIGURATION["spec"]["dependsOn"] if d["kind"] == kind
    }


def test_the_project_declares_the_configurations_crossplane_floor_and_providers() -> None:
    spec = PROJECT["spec"]
    assert spec["crossplane"] == CONFIGURATION["spec"]["crossplane"]
    # The CLI v2.5 reads `dependencies` (type xpkg); an older `dependsOn` would be ignored.
    assert "dependsOn" not in spec
    declared = {}
    for dependency in spec["dependencies"]:
        assert dependency["type"] == "xpkg", dependency
        xpkg = dependency["xpkg"]
        assert xpkg["apiVersion"] == "pkg.crossplane.io/v1"
        declared[xpkg["package"]] = (xpkg["kind"], xpkg["version"])
    wanted = {p: ("Provider", v) for p, v in _configuration_dependencies("Provider").items()}
    assert declared == wanted


def test_the_projects_functions_are_the_configurations_function_dependencies() -> None:
    embedded = [f["directory"]["name"] for f in PROJECT["spec"]["functions"]]
    assert all(f["source"] == "Directory" for f in PROJECT["spec"]["functions"])
    depended = sorted(dependency_name(p) for p in _configuration_dependencies("Function"))
    assert sorted(embedded) == depended == FUNCTIONS
    for package, version in _configuration_dependencies("Function").items():
        assert package == f"xpkg.modelfleet.io/{dependency_name(package)}"
        assert version == ">=v0.1.0"


def test_the_project_and_the_configuration_describe_the_package_alike() -> None:
    annotations = CONFIGURATION["metadata"]["annotations"]
    spec = PROJECT["spec"]
    assert PROJECT["metadata"]["name"] == CONFIGURATION["metadata"]["name"]
    assert spec["repository"] == f"xpkg.modelfleet.io/{CONFIGURATION['metadata']['name']}"
    for field in ("maintainer", "source", "license", "description"):
        assert spec[field] == annotations[f"meta.crossplane.io/{field}"], field


def test_provider_helm_is_optional_in_both() -> None:
    """Only an InferenceCluster asking for LeaderWorkerSet to be installed composes a Release."""
    packages = set(_configuration_dependencies("Provider"))
    packages |= {d["xpkg"]["package"] for d in PROJECT["spec"]["dependencies"]}
    assert PROVIDER_HELM not in packages
    xrd = yaml.safe_load((APIS_DIR / "inferenceclusters" / "definition.yaml").read_text())
    lws = _spec_properties(xrd)["leaderWorkerSet"]["properties"]
    assert lws["install"]["default"] is False


# -- the versions ---------------------------------------------------------------------------


def _spec_properties(xrd: dict[str, Any]) -> dict[str, Any]:
    [version] = [v for v in xrd["spec"]["versions"] if v.get("referenceable")]
    properties: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return properties["properties"]


def _tested_versions() -> dict[str, tuple[str, str]]:
    """getting-started.md's table: component -> (tested, what the packages accept)."""
    text = GETTING_STARTED.read_text()
    table = text.split("<!-- versions: start -->", 1)[1].split("<!-- versions: end -->", 1)[0]
    rows = [line.strip("|").split("|") for line in table.strip().splitlines()[2:]]
    return {r[0].strip(): (r[1].strip(), r[2].strip().strip("`")) for r in rows}


TESTED = _tested_versions()
CROSSPLANE, CROSSPLANE_FLOOR = TESTED["Crossplane"]
KUBERNETES, KUBERNETES_FLOOR = TESTED["provider-kubernetes"]
HELM, _ = TESTED["provider-helm (optional)"]
LWS, _ = TESTED["LeaderWorkerSet chart (optional)"]


def test_the_table_names_every_component() -> None:
    assert set(TESTED) == {
        "Crossplane",
        "provider-kubernetes",
        "provider-helm (optional)",
        "LeaderWorkerSet chart (optional)",
    }
    for version in (CROSSPLANE, KUBERNETES, HELM):
        assert re.fullmatch(r"v\d+\.\d+\.\d+", version), version
    assert re.fullmatch(r"\d+\.\d+\.\d+", LWS), LWS


def test_the_packages_floors_are_the_tables_and_admit_the_tested_releases() -> None:
    assert CONFIGURATION["spec"]["crossplane"]["version"] == CROSSPLANE_FLOOR
    assert _configuration_dependencies("Provider")[PROVIDER_KUBERNETES] == KUBERNETES_FLOOR
    assert version_floor(CROSSPLANE_FLOOR) <= version_floor(f">={CROSSPLANE}")
    assert version_floor(KUBERNETES_FLOOR) <= version_floor(f">={KUBERNETES}")


@pytest.mark.parametrize("function", FUNCTIONS)
def test_each_function_package_asks_for_the_configurations_crossplane(function: str) -> None:
    meta = yaml.safe_load(
        (REPO_ROOT / "functions" / function / "package" / "crossplane.yaml").read_text()
    )
    assert meta["spec"]["crossplane"]["version"] == CROSSPLANE_FLOOR


def test_the_readme_names_the_tested_releases() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    published = dict(
        re.findall(
            r"\| (crossplane/crossplane|crossplane-contrib/provider-kubernetes|"
            r"crossplane-contrib/provider-helm|kubernetes-sigs/lws) (v[\d.]+) \|",
            readme,
        )
    )
    assert published == {
        "crossplane/crossplane": CROSSPLANE,
        "crossplane-contrib/provider-kubernetes": KUBERNETES,
        "crossplane-contrib/provider-helm": HELM,
        "kubernetes-sigs/lws": f"v{LWS}",
    }
    assert f"`crossplane-core` ({CROSSPLANE})" in readme


def test_the_end_to_end_suite_runs_the_tested_releases() -> None:
    from test_examples_validate import CORE_VERSION

    assert PROVIDER_KUBERNETES_VERSION == KUBERNETES
    assert CORE_VERSION == CROSSPLANE
    captured = re.search(r"captured from a real control plane by the end-to-end\s+suite \((.*?)\)",
                         GETTING_STARTED.read_text())  # fmt: skip
    assert captured, "getting-started.md no longer says what the e2e output was captured on"
    assert f"Crossplane {CROSSPLANE}" in captured[1]
    assert f"provider-kubernetes {KUBERNETES}" in captured[1]


def _documented_providers() -> list[tuple[str, dict[str, Any]]]:
    found = [(p.name, m) for p in sorted(DOCS.glob("*.md")) for m in manifests(p)]
    for path in sorted(INSTALL.glob("*.yaml")):
        found += [(path.name, m) for m in yaml.safe_load_all(path.read_text()) if m]
    return [(where, m) for where, m in found if m["kind"] == "Provider"]


def test_every_documented_provider_is_the_tested_release() -> None:
    providers = _documented_providers()
    seen = set()
    for where, provider in providers:
        package, _, tag = provider["spec"]["package"].rpartition(":")
        wanted = {PROVIDER_KUBERNETES: KUBERNETES, PROVIDER_HELM: HELM}
        assert package in wanted, f"{where}: {package}"
        assert tag == wanted[package], f"{where}: {provider['spec']['package']}"
        seen.add(package)
    assert seen == {PROVIDER_KUBERNETES, PROVIDER_HELM}


def test_getting_started_installs_the_tested_crossplane_chart() -> None:
    text = GETTING_STARTED.read_text()
    installs = re.findall(r"helm install crossplane .*?--version (\S+)", text)
    assert installs == [CROSSPLANE.removeprefix("v")]


def test_the_leaderworkerset_chart_by_default_and_in_the_examples_is_the_tested_one() -> None:
    xrd = yaml.safe_load((APIS_DIR / "inferenceclusters" / "definition.yaml").read_text())
    assert _spec_properties(xrd)["leaderWorkerSet"]["properties"]["version"]["default"] == LWS
    asked = [
        (path.relative_to(REPO_ROOT), xr["spec"]["leaderWorkerSet"]["version"])
        for path in sorted(EXAMPLES_DIR.glob("**/*.yaml"))
        for xr in yaml.safe_load_all(path.read_text())
        if isinstance(xr, dict)
        and xr.get("kind") == "InferenceCluster"
        and "version" in xr.get("spec", {}).get("leaderWorkerSet", {})
    ]
    assert asked, "no example asks for LeaderWorkerSet any more"
    assert {version for _, version in asked} == {LWS}, asked


@pytest.mark.parametrize("page", ["getting-started.md", "inferencecluster.md"])
def test_the_docs_name_no_other_leaderworkerset_chart(page: str) -> None:
    text = (DOCS / page).read_text()
    named = set(re.findall(r'version: "?(\d+\.\d+\.\d+)"?', text))
    named |= set(re.findall(r"chart (\d+\.\d+\.\d+)", text))
    named |= set(re.findall(r"default `(\d+\.\d+\.\d+)`", text))
    assert named <= {LWS}, named
