"""What `modelfleet-release` publishes, built for real from this checkout into a loopback
registry: reproducible digests, images that run as they should (podman + runc), packages
with their runtime embedded, and the hydrator image the functions compose by default.

Skipped, saying what to install, where mmdebstrap, podman or runc is missing (.ci/run
installs them; under CI a skip fails the run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelfleet_contracts.hydration import DEFAULT_IMAGE, RELEASE_VERSION
from modelfleet_devtools.e2e.containers import ContainersUnavailable, Podman
from modelfleet_devtools.e2e.crossplane import Registry, start_registry
from modelfleet_devtools.e2e.processes import Processes, free_port
from modelfleet_devtools.paths import REPO_ROOT
from modelfleet_devtools.realcp import RealcpUnavailable, realcp_binary
from modelfleet_devtools.release import cli
from modelfleet_devtools.release.build import (
    FUNCTION_ENTRYPOINT,
    Artifact,
    Tools,
    release_functions,
    source_epoch,
)

FUNCTIONS = release_functions(REPO_ROOT)
HYDRATOR_REQUIREMENTS = (
    REPO_ROOT / "packages" / "modelfleet-hydrator" / "image" / "requirements.txt"
)


@pytest.fixture(scope="module")
def tools() -> Tools:
    if shutil.which("mmdebstrap") is None:
        pytest.skip("mmdebstrap not installed: `apt-get install mmdebstrap` builds the images")
    try:
        return Tools(crossplane=realcp_binary("crossplane"), crane=realcp_binary("crane"))
    except RealcpUnavailable as error:
        pytest.skip(f"real control plane binaries not found: {error}")


@pytest.fixture(scope="module")
def registry(tools: Tools, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    work = tmp_path_factory.mktemp("registry")
    processes = Processes(work / "logs")
    bins = work / "bin"
    bins.mkdir()
    (bins / "crane").symlink_to(tools.crane)
    try:
        yield start_registry(processes, bins, work)
    finally:
        processes.stop_all()


def build(tools: Tools, registry: Registry, work: Path) -> dict[str, Artifact]:
    pushed = cli.build_release(
        REPO_ROOT, registry.host, RELEASE_VERSION, work, tools,
        platforms=["linux/amd64"], epoch=source_epoch(REPO_ROOT),
    )  # fmt: skip
    return {artifact.name: artifact for artifact in pushed}


@pytest.fixture(scope="module")
def release_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first build's work folder: the base root filesystem and the staged layers."""
    return tmp_path_factory.mktemp("release")


@pytest.fixture(scope="module")
def release(tools: Tools, registry: Registry, release_work: Path) -> dict[str, Artifact]:
    return build(tools, registry, release_work)


@pytest.fixture(scope="module")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Podman]:
    try:
        engine = Podman.under(tmp_path_factory.mktemp("podman"))
    except ContainersUnavailable as error:
        pytest.skip(str(error))
    yield engine
    engine.remove_all()


def crane(tools: Tools, *args: str) -> str:
    return subprocess.run(
        [str(tools.crane), *args], capture_output=True, text=True, check=True
    ).stdout


def image_config(tools: Tools, artifact: Artifact) -> dict:
    return json.loads(crane(tools, "config", artifact.pinned))["config"]


def test_a_release_is_every_image_and_package_each_with_its_digest(release):
    kinds = {name: artifact.kind for name, artifact in release.items()}
    assert kinds == {
        "model-hydrator": "image",
        **{f"{f}-runtime": "image" for f in FUNCTIONS},
        **{f: "function" for f in FUNCTIONS},
        "modelfleet": "configuration",
    }
    for artifact in release.values():
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", artifact.digest), artifact
        assert artifact.reference.endswith(f"/{artifact.name}:{RELEASE_VERSION}")


def test_the_same_commit_built_twice_gives_the_same_digests(
    tools, registry, release, capsys, monkeypatch, tmp_path
):
    """A second, separate build through the command itself (`--output json`)."""
    monkeypatch.setattr(cli, "_tools", lambda: tools)
    code = cli.main(["--registry", registry.host, "--output", "json", "--work-dir", str(tmp_path)])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert {a["name"]: a["digest"] for a in printed} == {n: a.digest for n, a in release.items()}
    assert all(a["pinned"] == f"{a['reference']}@{a['digest']}" for a in printed)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_function_image_runs_its_console_script_as_non_root(tools, release, function, tmp_path):
    config = image_config(tools, release[f"{function}-runtime"])
    assert config["Entrypoint"] == [FUNCTION_ENTRYPOINT]
    assert config["User"] == "65532:65532"
    # The entrypoint is a link to the console script named after the function.
    links = members_of_layer(tools, release[f"{function}-runtime"], -1, tmp_path)
    assert links["usr/local/bin/modelfleet-function"].linkname == function
    assert links[f"usr/local/bin/{function}"].isreg()


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_function_package_embeds_its_runtime(tools, release, function):
    """Crossplane's package manager runs the package image itself: it must be runnable."""
    package = release[function]
    assert image_config(tools, package)["Entrypoint"] == [FUNCTION_ENTRYPOINT]
    manifest = json.loads(crane(tools, "manifest", package.pinned))
    runtime = json.loads(crane(tools, "manifest", release[f"{function}-runtime"].pinned))
    # The runtime's layers, then the package's own (its crossplane.yaml).
    layers = [x["digest"] for x in manifest["layers"]]
    runtime_layers = [x["digest"] for x in runtime["layers"]]
    assert layers[: len(runtime_layers)] == runtime_layers
    assert len(layers) > len(runtime_layers)


def test_the_functions_compose_the_hydrator_image_this_release_publishes(release):
    published = release["model-hydrator"].reference
    assert f"ghcr.io/modelfleet/model-hydrator:{RELEASE_VERSION}" == DEFAULT_IMAGE
    assert published.rpartition("/")[2] == DEFAULT_IMAGE.rpartition("/")[2]


def pinned_in(requirements: Path) -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", requirements.read_text(), re.MULTILINE)
    return {name.lower().replace("_", "-"): version for name, version in pins}


def members_of_layer(
    tools: Tools, artifact: Artifact, layer: int, tmp: Path
) -> dict[str, tarfile.TarInfo]:
    """Path -> tar entry of one layer of the image, as pushed."""
    manifest = json.loads(crane(tools, "manifest", artifact.pinned))
    blob = tmp / "layer.tar.gz"
    digest = manifest["layers"][layer]["digest"]
    with blob.open("wb") as out:
        subprocess.run(
            [str(tools.crane), "blob", f"{artifact.reference.rpartition(':')[0]}@{digest}"],
            stdout=out, check=True,
        )  # fmt: skip
    with tarfile.open(blob) as tar:
        return {m.name: m for m in tar.getmembers()}


def installed_in_layer(tools: Tools, artifact: Artifact, layer: int, tmp: Path) -> dict[str, str]:
    """name -> version of every distribution installed in one layer of the image."""
    members = members_of_layer(tools, artifact, layer, tmp)
    infos = {Path(m).parent.name for m in members if m.endswith(".dist-info/METADATA")}
    found = {}
    for info in infos:
        name, _, version = info.removesuffix(".dist-info").rpartition("-")
        found[name.lower().replace("_", "-")] = version
    return found


def test_the_hydrator_image_holds_exactly_its_pinned_packages(tools, release, tmp_path):
    installed = installed_in_layer(tools, release["model-hydrator"], 1, tmp_path)
    assert installed == pinned_in(HYDRATOR_REQUIREMENTS)
    assert {"huggingface-hub", "boto3"} <= set(installed)


def test_a_function_container_starts_serving_and_stops_cleanly_on_sigterm(
    release, podman, tmp_path
):
    image = release["compose-model-cache"].pinned
    podman.pull(image)
    address = f"127.0.0.1:{free_port()}"
    argv = podman.run_argv("serving-check", image, env={"ADDRESS": address, "INSECURE": "true"})
    log = tmp_path / "container.log"
    started = time.monotonic()
    with log.open("wb") as out:
        container = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **podman.env}
        )
        try:
            while '"msg": "Serving"' not in log.read_text() and time.monotonic() - started < 60:
                assert container.poll() is None, log.read_text()
                time.sleep(0.1)
            assert '"msg": "Serving"' in log.read_text(), log.read_text()
            assert f'"address": "{address}"' in log.read_text()
            container.terminate()  # podman run passes it on to the container's PID 1
            assert container.wait(timeout=30) == 0, log.read_text()
        finally:
            if container.poll() is None:
                container.kill()
    assert '"msg": "Stopped"' in log.read_text()


DOCKERFILES = {
    "compose-model-cache": (REPO_ROOT / "functions" / "compose-model-cache" / "Dockerfile",
                            ["--build-arg", "FUNCTION=compose-model-cache"]),
    "model-hydrator": (REPO_ROOT / "packages" / "modelfleet-hydrator" / "image" / "Dockerfile", []),
}  # fmt: skip


@pytest.mark.parametrize("image", sorted(DOCKERFILES))
def test_the_dockerfile_builds_the_image_the_release_publishes(
    tools, release, release_work, podman, image
):
    """The Dockerfile, built with podman from the release's staged folder, gives an image with
    the same settings as the one modelfleet-release assembled, and it runs."""
    dockerfile, build_args = DOCKERFILES[image]
    podman.call("import", str(release_work / "base-amd64.tar"), "modelfleet-base")
    podman.call(
        "build", "--quiet", "--file", str(dockerfile), *build_args, "--tag", f"built-{image}",
        str(release_work),
    )  # fmt: skip
    built = json.loads(podman.call("image", "inspect", f"built-{image}"))[0]["Config"]
    published = image_config(
        tools, release[image if image == "model-hydrator" else f"{image}-runtime"]
    )
    for key in ("Entrypoint", "User", "WorkingDir"):
        assert (built.get(key) or None) == (published.get(key) or None), key
    assert set(published["Env"]) <= set(built["Env"])
    ran = subprocess.run(
        podman.argv("run", "--rm", "--network", "host", f"built-{image}", "--help"),
        env={**os.environ, **podman.env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "usage" in ran.stdout.lower()


def test_the_hydrator_image_imports_what_its_sources_need(release, podman):
    image = release["model-hydrator"].pinned
    podman.pull(image)
    code = "import boto3, huggingface_hub, hf_xet; print(huggingface_hub.__version__)"
    argv = podman.argv("run", "--rm", "--network", "none", "--entrypoint", "python3", image)
    ran = subprocess.run(
        [*argv, "-c", code],
        env={**os.environ, **podman.env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == pinned_in(HYDRATOR_REQUIREMENTS)["huggingface-hub"]
