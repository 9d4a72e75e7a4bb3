"""Everything a release publishes, built from one source tree and pushed to one registry.

- `model-hydrator`: the image every hydration Job runs (the layers and settings of
  packages/modelfleet-hydrator/image/Dockerfile, which builds the same from the staged folder);
- `<function>-runtime`: each function's runtime image (likewise, functions/Dockerfile);
- `<function>`: each Function package, its runtime image embedded, so Crossplane's package
  manager runs the package itself;
- `modelfleet`: the Configuration (apis/), which depends on the four Functions.

Each image is the Debian base (rootfs.py) plus layers of pinned wheels (python_site.py) and
our code. The same tree, epoch and Debian mirror state give the same digests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from . import images, layers, python_site
from .rootfs import SITE_PACKAGES, debian_rootfs, rootfs_key

HYDRATOR = "model-hydrator"
CONFIGURATION = "modelfleet"
FUNCTION_USER = "65532:65532"  # non-root, as Crossplane's function pods run
# A link to the function's console script (bin/<function>), as functions/Dockerfile names it.
FUNCTION_ENTRYPOINT = "/usr/local/bin/modelfleet-function"
RUNTIME_ENV = {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
HYDRATOR_ENV = {
    **RUNTIME_ENV,
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HOME": "/tmp/hf-home",
}
HYDRATOR_HOME = "opt/modelfleet"  # SCRIPT_PATH_IN_IMAGE's folder
SITE_IN_PREFIX = SITE_PACKAGES.removeprefix("usr/local/")  # a function's code, under /usr/local


@dataclass(frozen=True)
class Artifact:
    """One pushed thing: its name, kind (image, function, configuration) and where it is."""

    name: str
    kind: str
    reference: str
    digest: str

    @property
    def pinned(self) -> str:
        return f"{self.reference}@{self.digest}"

    def as_dict(self) -> dict[str, str]:
        return {**asdict(self), "pinned": self.pinned}


@dataclass(frozen=True)
class Tools:
    crossplane: Path  # the CLI: `xpkg build`
    crane: Path


def release_functions(tree: Path) -> list[str]:
    """The Functions a tree publishes (each functions/<name>/package)."""
    return sorted(p.parent.parent.name for p in tree.glob("functions/*/package/crossplane.yaml"))


def source_epoch(tree: Path) -> int:
    """The time of the tree's commit: what every file time in the images is set to."""
    shown = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%ct"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if shown.returncode != 0 or not shown.stdout.strip():
        raise RuntimeError(f"{tree} is not a git checkout: set SOURCE_DATE_EPOCH to build it")
    return int(shown.stdout.strip())


def build_epoch(tree: Path) -> int:
    """The file time of what is built from `tree`: $SOURCE_DATE_EPOCH, else its commit's time."""
    return int(os.environ.get("SOURCE_DATE_EPOCH") or source_epoch(tree))


def stage_hydrator_code(tree: Path, folder: Path) -> None:
    """What the hydrator image holds at /opt/modelfleet: the launcher the Job's command names
    (SCRIPT_PATH_IN_IMAGE), the hydrator package beside it, and of the contracts only their
    marker and the hydration module (standard library only), not their pydantic models."""
    packages = tree / "packages"
    shutil.copy(packages / "modelfleet-hydrator" / "image" / "hydrate.py", folder / "hydrate.py")
    shutil.copytree(
        packages / "modelfleet-hydrator" / "src" / "modelfleet_hydrator",
        folder / "modelfleet_hydrator",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    contracts = packages / "modelfleet-contracts" / "src" / "modelfleet_contracts"
    (folder / "modelfleet_contracts").mkdir()
    for module in ("__init__.py", "hydration.py"):
        shutil.copy(contracts / module, folder / "modelfleet_contracts" / module)


class ReleaseBuild:
    """Builds and pushes one release for one registry prefix (HOST:PORT[/PATH])."""

    def __init__(
        self,
        tree: Path,
        registry: str,
        tag: str,
        work: Path,
        tools: Tools,
        *,
        epoch: int,
        architecture: str = "amd64",
        progress: Callable[[str], None] = lambda _: None,
        base_cache: Path | None = None,
    ) -> None:
        self.tree, self.registry, self.tag, self.work = tree, registry.rstrip("/"), tag, work
        self.base_cache = base_cache
        self.tools, self.epoch, self.architecture = tools, epoch, architecture
        self.progress = progress
        self.platform = f"linux/{architecture}"

    def reference(self, repository: str) -> str:
        return f"{self.registry}/{repository}:{self.tag}"

    def run(self) -> list[Artifact]:
        self.work.mkdir(parents=True, exist_ok=True)
        base = self._base_layer()
        pushed = [self._hydrator(base)]
        for function in release_functions(self.tree):
            pushed += self._function(function, base)
        pushed.append(self._configuration())
        return pushed

    def _base_layer(self) -> Path:
        """The base layer, made anew, or taken from `base_cache` where a build with the same
        recipe, architecture and epoch left it (the e2e suite builds two releases a run)."""
        out = self.work / f"base-{self.architecture}.tar"
        cached = None
        if self.base_cache is not None:
            cached = self.base_cache / f"{rootfs_key(self.architecture, self.epoch)}.tar"
            if cached.is_file():
                shutil.copy(cached, out)
                return out
        self.progress(f"Debian {self.architecture} root filesystem (mmdebstrap)")
        rootfs = debian_rootfs(
            self.work / f"rootfs-{self.architecture}.tar",
            architecture=self.architecture,
            epoch=self.epoch,
        )
        layers.rootfs_layer(rootfs, out)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(out, cached.with_suffix(".partial"))
            cached.with_suffix(".partial").rename(cached)
        return out

    def _layer(self, name: str, fill: Callable[[Path], None], in_image: str) -> Path:
        """A layer holding the folder `fill` writes, at `in_image`."""
        folder = self.work / "stage" / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        fill(folder)
        return layers.tree_layer(
            folder, self.work / f"{name}.tar", under=in_image, mtime=self.epoch
        )

    def _third_party(self, package: str, requirements: Path) -> Path:
        def fill(folder: Path) -> None:
            python_site.install_requirements(self.tree, requirements, folder, self.architecture)
            python_site.tidy(folder, "/" + SITE_PACKAGES)

        return self._layer(f"{package}-deps", fill, SITE_PACKAGES)

    def _hydrator(self, base: Path) -> Artifact:
        self.progress(f"image {HYDRATOR}")
        image_dir = self.tree / "packages" / "modelfleet-hydrator" / "image"
        deps = self._third_party(HYDRATOR, image_dir / "requirements.txt")

        def fill(folder: Path) -> None:
            stage_hydrator_code(self.tree, folder)
            python_site.tidy(folder, "/" + HYDRATOR_HOME)

        app = self._layer(HYDRATOR, fill, HYDRATOR_HOME)
        config = images.ImageSettings(
            entrypoint=["python3", f"/{HYDRATOR_HOME}/hydrate.py"], workdir="/tmp",
            env=HYDRATOR_ENV,
        )  # fmt: skip
        reference = self.reference(HYDRATOR)
        digest = images.push_image(
            self.tools.crane, reference, [base, deps, app], config, self.platform
        )
        return Artifact(HYDRATOR, "image", reference, digest)

    def _function(self, function: str, base: Path) -> list[Artifact]:
        self.progress(f"image {function}-runtime and package {function}")
        requirements = python_site.locked_requirements(
            self.tree, function, self.work / f"{function}-requirements.txt"
        )
        deps = self._third_party(function, requirements)
        entry = python_site.console_script(self.tree, function)
        module, _, attribute = entry.partition(":")

        def fill(folder: Path) -> None:
            members = python_site.workspace_dependencies(self.tree, function)
            site = folder / SITE_IN_PREFIX
            site.mkdir(parents=True)
            python_site.install_members(
                self.tree, members, site, self.work / "wheels" / function, self.epoch
            )
            python_site.tidy(site, f"/usr/local/{SITE_IN_PREFIX}")
            (folder / "bin").mkdir()
            launcher = folder / "bin" / function
            launcher.write_text(
                f"#!/usr/bin/python3\nimport sys\nfrom {module} import {attribute}\n"
                f"sys.exit({attribute}())\n"
            )
            launcher.chmod(0o755)
            # The one name functions/Dockerfile's exec-form ENTRYPOINT can give every function.
            (folder / "bin" / FUNCTION_ENTRYPOINT.rpartition("/")[2]).symlink_to(function)

        app = self._layer(function, fill, "usr/local")
        config = images.ImageSettings(
            entrypoint=[FUNCTION_ENTRYPOINT], user=FUNCTION_USER, env=RUNTIME_ENV
        )
        runtime_ref = self.reference(f"{function}-runtime")
        runtime_digest = images.push_image(
            self.tools.crane, runtime_ref, [base, deps, app], config, self.platform
        )
        tarball = images.save_tarball(
            self.tools.crane,
            f"{runtime_ref}@{runtime_digest}",
            self.work / f"{function}-runtime.tar",
        )
        package = self._xpkg(self.tree / "functions" / function / "package", function, tarball)
        reference = self.reference(function)
        return [
            Artifact(f"{function}-runtime", "image", runtime_ref, runtime_digest),
            Artifact(
                function,
                "function",
                reference,
                images.push_file(self.tools.crane, package, reference),
            ),
        ]

    def _configuration(self) -> Artifact:
        self.progress(f"package {CONFIGURATION}")
        package = self._xpkg(self.tree / "apis", CONFIGURATION, None)
        reference = self.reference(CONFIGURATION)
        return Artifact(
            CONFIGURATION, "configuration", reference,
            images.push_file(self.tools.crane, package, reference),
        )  # fmt: skip

    def _xpkg(self, root: Path, name: str, runtime: Path | None) -> Path:
        out = self.work / f"{name}.xpkg"
        with tempfile.TemporaryDirectory() as no_examples:
            argv = [
                str(self.tools.crossplane), "xpkg", "build", "--package-root", str(root),
                "--examples-root", no_examples, "-o", str(out),
            ]  # fmt: skip
            if runtime is not None:
                argv.append(f"--embed-runtime-image-tarball={runtime}")
            built = subprocess.run(argv, capture_output=True, text=True, check=False)
        if built.returncode != 0:
            raise RuntimeError(f"crossplane xpkg build {name} failed:\n{built.stderr[-2000:]}")
        return out
