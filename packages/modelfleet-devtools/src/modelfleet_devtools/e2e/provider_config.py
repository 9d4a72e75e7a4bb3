"""The provider-kubernetes configuration Modelfleet recommends, as the docs install it.

docs/install/provider-kubernetes.yaml is a DeploymentRuntimeConfig whose `package-runtime`
container args are the flags a platform team's provider runs with. The e2e suite and
`modelfleet-scale-bench` start their provider with exactly those args, read from that file,
so what is measured and tested cannot drift from what is installed.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..paths import REPO_ROOT

INSTALL_FILE = REPO_ROOT / "docs" / "install" / "provider-kubernetes.yaml"
RUNTIME_CONTAINER = "package-runtime"  # what Crossplane names a provider's container


def recommended_args(install_file: Path = INSTALL_FILE) -> list[str]:
    """The args the DeploymentRuntimeConfig in `install_file` gives the provider's container."""
    documents = [d for d in yaml.safe_load_all(install_file.read_text()) if d]
    configs = [d for d in documents if d.get("kind") == "DeploymentRuntimeConfig"]
    if len(configs) != 1:
        raise ValueError(
            f"{install_file}: expected one DeploymentRuntimeConfig, found {len(configs)}"
        )
    pod = configs[0]["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]
    containers = [c for c in pod["containers"] if c.get("name") == RUNTIME_CONTAINER]
    if len(containers) != 1:
        raise ValueError(f"{install_file}: no container named {RUNTIME_CONTAINER}")
    return [str(arg) for arg in containers[0].get("args") or []]
