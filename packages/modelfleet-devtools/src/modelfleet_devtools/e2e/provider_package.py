"""provider-kubernetes as a Provider package Crossplane's default runtime can run: a runtime
image of ../shared/realcp's static binary, embedded in the package of its CRDs.

No registry here serves crossplane-contrib's package or image, so both are built from the
shared binary and CRDs and pushed under the name docs/install/provider-kubernetes.yaml installs
(`crossplane-contrib/provider-kubernetes:v1.2.1`, sent to the loopback registry by an
ImageConfig). The image is one layer: the binary at `/usr/local/bin/provider`, run as the
non-root user Crossplane's runtime asks for.
"""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from ..release import images
from .crossplane import Registry
from .packages import PROVIDER_KUBERNETES, PROVIDER_KUBERNETES_VERSION, provider_kubernetes_root

ENTRYPOINT = "/usr/local/bin/provider"
RUNTIME_USER = "65532:65532"
PLATFORM = "linux/amd64"


def binary_layer(binary: Path, out: Path) -> Path:
    """A layer holding `binary` at ENTRYPOINT, owned by root, executable by everyone."""
    out.parent.mkdir(parents=True, exist_ok=True)
    binary = binary.resolve()  # the suite's bin folder holds links: the layer holds the file
    with tarfile.open(out, "w") as tar:
        info = tar.gettarinfo(str(binary), arcname=ENTRYPOINT.lstrip("/"))
        info.mode, info.uid, info.gid, info.mtime = 0o755, 0, 0, 0
        with binary.open("rb") as stream:
            tar.addfile(info, stream)
    return out


def publish_provider(
    crossplane_cli: Path, crane: Path, registry: Registry, binary: Path, crds: Path, work: Path
) -> str:
    """Build and push the runtime image and the package embedding it; the package's
    reference in the loopback registry."""
    runtime = f"{registry.host}/{PROVIDER_KUBERNETES}-runtime:{PROVIDER_KUBERNETES_VERSION}"
    digest = images.push_image(
        crane, runtime, [binary_layer(binary, work / "provider-layer.tar")],
        images.ImageSettings(entrypoint=[ENTRYPOINT], user=RUNTIME_USER), PLATFORM,
    )  # fmt: skip
    tarball = images.save_tarball(crane, f"{runtime}@{digest}", work / "provider-runtime.tar")
    root = provider_kubernetes_root(crds, work / "provider-kubernetes-package")
    package = work / "provider-kubernetes.xpkg"
    built = subprocess.run(
        [str(crossplane_cli), "xpkg", "build", "--package-root", str(root), "-o", str(package),
         f"--embed-runtime-image-tarball={tarball}"],
        capture_output=True, text=True, check=False, cwd=work,
    )  # fmt: skip
    if built.returncode != 0:
        raise RuntimeError(f"crossplane xpkg build provider-kubernetes:\n{built.stderr[-2000:]}")
    reference = f"{registry.host}/{PROVIDER_KUBERNETES}:{PROVIDER_KUBERNETES_VERSION}"
    images.push_file(crane, package, reference)
    return reference
