"""Modelfleet as packages: built with `crossplane xpkg build`, pushed to the local registry.

The Configuration and the Functions are built from this repository as they are published.
provider-kubernetes is packaged here from its CRDs (no registry serves its package offline),
with the Object conversion webhook turned off: nothing serves it out of cluster.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from ..paths import REPO_ROOT
from .crossplane import Registry

VERSION = "v0.1.0"
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


def publish(
    crossplane_cli: Path, crane: Path, registry: Registry, provider_crds: Path, work: Path
) -> dict[str, str]:
    """Build and push every package; returns each package's upstream name -> local reference."""
    out = work / "packages"
    out.mkdir(parents=True, exist_ok=True)
    built: dict[str, tuple[Path, str]] = {}
    for function in FUNCTIONS:
        root = REPO_ROOT / "functions" / function / "package"
        built[function] = (_build(crossplane_cli, root, out / f"{function}.xpkg"), VERSION)
    built["modelfleet"] = (
        _build(crossplane_cli, REPO_ROOT / "apis", out / "modelfleet.xpkg"),
        VERSION,
    )
    provider_root = provider_kubernetes_root(provider_crds, work / "provider-kubernetes-package")
    built[PROVIDER_KUBERNETES] = (
        _build(crossplane_cli, provider_root, out / "provider-kubernetes.xpkg"),
        PROVIDER_KUBERNETES_VERSION,
    )
    references = {}
    for repository, (package, version) in built.items():
        reference = f"{registry.host}/{repository}:{version}"
        _push(crane, package, reference)
        registry_name = (
            UPSTREAM_REGISTRY if repository == PROVIDER_KUBERNETES else MODELFLEET_REGISTRY
        )
        references[f"{registry_name}/{repository}"] = reference
    return references


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
