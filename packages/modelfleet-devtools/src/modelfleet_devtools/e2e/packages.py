"""Packages in the local registry: Modelfleet's as `modelfleet-release` publishes them (built
from a release's tree: this checkout, or the previous release, e2e/release.py), and
provider-kubernetes', packaged here from its CRDs (no registry serves its package offline),
with the Object conversion webhook turned off: nothing serves it out of cluster.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from .crossplane import Registry

Built = dict[str, tuple[Path, str]]  # repository -> (package file, version)

PROVIDER_KUBERNETES_VERSION = "v1.2.1"
# Packages are named as the docs install them; an ImageConfig sends both registries' names to the
# local one. Modelfleet's packages sit at the registry's root because Crossplane names a package
# it installs as a dependency after its repository path, and the Compositions call the
# functions by their own names (compose-model-cache, not modelfleet-compose-model-cache).
MODELFLEET_REGISTRY = "xpkg.modelfleet.io"
UPSTREAM_REGISTRY = "xpkg.crossplane.io"
PROVIDER_KUBERNETES = "crossplane-contrib/provider-kubernetes"
FUNCTIONS = (
    "compose-inference-cluster",
    "compose-model-cache",
    "compose-model-deployment",
    "compose-model-replica",
    "compose-model-service",
)


def _build(crossplane_cli: Path, root: Path, out: Path) -> Path:
    subprocess.run(
        [str(crossplane_cli), "xpkg", "build", "--package-root", str(root), "-o", str(out)],
        check=True,
        capture_output=True,
        cwd=out.parent,
    )
    return out


def _push(crane: Path, package: Path, reference: str) -> None:
    subprocess.run([str(crane), "push", str(package), reference], check=True, capture_output=True)


def provider_kubernetes_root(crds: Path, folder: Path) -> Path:
    """A provider-kubernetes package folder: its CRDs, conversion off, and its metadata."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in sorted(crds.glob("*.yaml")):
        crd = yaml.safe_load(source.read_text())
        if crd["spec"].get("conversion", {}).get("strategy") == "Webhook":
            crd["spec"]["conversion"] = {"strategy": "None"}
        (folder / source.name).write_text(yaml.safe_dump(crd, sort_keys=False))
    meta = {
        "apiVersion": "meta.pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": "provider-kubernetes"},
        "spec": {"crossplane": {"version": ">=v2.0.0"}},
    }
    (folder / "crossplane.yaml").write_text(yaml.safe_dump(meta))
    return folder


def build_provider(crossplane_cli: Path, provider_crds: Path, work: Path) -> Built:
    provider_root = provider_kubernetes_root(provider_crds, work / "provider-kubernetes-package")
    (work / "packages").mkdir(parents=True, exist_ok=True)
    package = _build(crossplane_cli, provider_root, work / "packages" / "provider-kubernetes.xpkg")
    return {PROVIDER_KUBERNETES: (package, PROVIDER_KUBERNETES_VERSION)}


def push(crane: Path, registry: Registry, built: Built) -> dict[str, str]:
    """Push built packages; returns each package's upstream name -> local reference."""
    references = {}
    for repository, (package, version) in built.items():
        reference = f"{registry.host}/{repository}:{version}"
        _push(crane, package, reference)
        registry_name = (
            UPSTREAM_REGISTRY if repository == PROVIDER_KUBERNETES else MODELFLEET_REGISTRY
        )
        references[f"{registry_name}/{repository}"] = reference
    return references


def package_name(repository: str, version: str) -> str:
    """What a user puts in a package's `spec.package`, e.g. xpkg.modelfleet.io/modelfleet:v0.2.0."""
    return f"{MODELFLEET_REGISTRY}/{repository}:{version}"


def image_config(registry: Registry) -> dict[str, object]:
    """Send every package named under either registry to the local one."""
    return {
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "ImageConfig",
        "metadata": {"name": "modelfleet-local-registry"},
        "spec": {
            "matchImages": [
                {"type": "Prefix", "prefix": MODELFLEET_REGISTRY},
                {"type": "Prefix", "prefix": UPSTREAM_REGISTRY},
            ],
            "rewriteImage": {"prefix": registry.host},
        },
    }
