"""The docs install provider-kubernetes so that it redacts the credentials it copies: a
DeploymentRuntimeConfig whose provider container gets the flags compose-model-cache asks for
when it sees credentials echoed, referenced by the Provider. The manifest is a file a platform
team applies (docs/install/provider-kubernetes.yaml), shown as it is by the pages, and the
end-to-end harness runs the provider with the same flags."""

import inspect
import re
from pathlib import Path

import pytest
import yaml
from compose_model_cache.shard import credentials
from modelfleet_contracts.recheck import RECHECK_SETTLED
from modelfleet_devtools.e2e import crossplane as e2e_crossplane
from modelfleet_devtools.e2e import provider_config
from test_docs import DOCS, manifests

PAGES = ["getting-started.md", "modelcache.md"]
INSTALL_FILE = DOCS / "install" / "provider-kubernetes.yaml"
FLAGS = ["--sanitize-secrets", "--enable-server-side-apply"]


def _install(page: str) -> tuple[dict, dict]:
    """The page's DeploymentRuntimeConfig and the provider-kubernetes Provider."""
    found = manifests(DOCS / page)
    configs = [m for m in found if m["kind"] == "DeploymentRuntimeConfig"]
    providers = [
        m
        for m in found
        if m["kind"] == "Provider" and "provider-kubernetes" in m["spec"]["package"]
    ]
    assert len(configs) == 1 and len(providers) == 1, page
    return configs[0], providers[0]


@pytest.mark.parametrize("page", PAGES)
def test_provider_kubernetes_runs_with_the_redacting_flags(page):
    config, provider = _install(page)
    assert config["apiVersion"] == "pkg.crossplane.io/v1beta1"
    pod = config["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]
    runtime = [c for c in pod["containers"] if c["name"] == "package-runtime"]
    assert len(runtime) == 1, "the provider's container is named package-runtime"
    assert all(isinstance(a, str) for a in runtime[0]["args"])
    assert set(FLAGS) <= set(runtime[0]["args"])
    assert provider["apiVersion"] == "pkg.crossplane.io/v1"
    assert provider["spec"]["runtimeConfigRef"]["name"] == config["metadata"]["name"]


def test_both_pages_install_it_the_same_way():
    assert _install(PAGES[0]) == _install(PAGES[1])


def test_the_flags_the_warning_asks_for_are_the_ones_installed():
    source = Path(credentials.__file__).read_text()
    asked = set(re.findall(r"--[a-z]+(?:-[a-z]+)+", source))
    assert asked == set(FLAGS)


def test_the_install_file_is_what_the_pages_show() -> None:
    config, provider = [d for d in yaml.safe_load_all(INSTALL_FILE.read_text()) if d]
    assert (config["kind"], provider["kind"]) == ("DeploymentRuntimeConfig", "Provider")
    for page in PAGES:
        assert _install(page) == (config, provider), page


def test_the_end_to_end_provider_runs_with_the_documented_flags() -> None:
    """The harness starts provider-kubernetes itself (no package runtime): its command line
    is the DeploymentRuntimeConfig's args, read from the install file, and sets no flag of
    its own that the file sets (no faster poll)."""
    args = provider_config.recommended_args()
    assert INSTALL_FILE.resolve() == provider_config.INSTALL_FILE
    assert set(FLAGS) <= set(args)
    # The provider's poll is the fleet's round: a settled InferenceCluster asks to be run again
    # as rarely (modelfleet_contracts.recheck).
    poll = f"--poll={RECHECK_SETTLED.total_seconds() / 60:.0f}m"
    assert {"--enable-watches", poll} <= set(args)
    source = inspect.getsource(e2e_crossplane.start_provider_kubernetes)
    assert "provider_config.recommended_args()" in source
    literal = set(re.findall(r'"(--[a-z-]+)', source))
    assert not literal & {a.split("=")[0] for a in args}, literal


@pytest.mark.parametrize(
    "name", ["provider-kubernetes", "provider-helm", "modelfleet", "image-config"]
)
def test_getting_started_shows_each_install_file_as_it_is(name: str) -> None:
    documents = [
        d for d in yaml.safe_load_all((DOCS / "install" / f"{name}.yaml").read_text()) if d
    ]
    shown = manifests(DOCS / "getting-started.md")
    assert documents and all(d in shown for d in documents)
    assert f"(install/{name}.yaml)" in (DOCS / "getting-started.md").read_text()


def test_every_install_file_is_shown() -> None:
    files = sorted(p.stem for p in (DOCS / "install").glob("*.yaml"))
    assert files == sorted(["provider-kubernetes", "provider-helm", "modelfleet", "image-config"])
