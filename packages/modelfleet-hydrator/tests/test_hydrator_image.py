"""The hydrator image definition: pinned throughout, and the script where the Job looks for it.

The image is built for real by tests/test_release_images.py; these check its definition (the
Dockerfile, the hashed lock) and its code layout (modelfleet-release's staging) without a build.
"""

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from compose_model_cache.shard.hydration_command import hydration_argv
from modelfleet_contracts import hydration
from modelfleet_contracts.hydration import DEFAULT_IMAGE, PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE
from modelfleet_contracts.models.modelcache import HuggingFace
from modelfleet_devtools.release.build import stage_hydrator_code

PACKAGE_DIR = Path(__file__).resolve().parents[1]
ROOT = PACKAGE_DIR.parents[1]  # the workspace: the image's build context
IMAGE_DIR = PACKAGE_DIR / "image"
DOCKERFILE = IMAGE_DIR / "Dockerfile"
REQUIREMENTS = IMAGE_DIR / "requirements.txt"
REQUIREMENTS_IN = IMAGE_DIR / "requirements.in"


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per Dockerfile instruction, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", path.read_text())
    result = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def pinned_requirements(path: Path) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) from a `uv pip compile --generate-hashes` lock."""
    pins: dict[str, tuple[str, int]] = {}
    name = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("--hash=sha256:"):
            version, hashes = pins[name]
            pins[name] = (version, hashes + 1)
        elif stripped and not stripped.startswith("#"):
            match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s\\;]+)(?:\s*;[^\\]*)?\s*\\?", stripped)
            assert match, f"unpinned requirement line: {line!r}"
            name = match[1].lower().replace("_", "-")
            pins[name] = (match[2], 0)
    return pins


def test_the_base_is_the_debian_root_filesystem_the_release_makes_not_a_registry_image():
    args = dict(
        a.split("=", 1) for word, a in instructions(DOCKERFILE) if word == "ARG" and "=" in a
    )
    (base,) = [a for word, a in instructions(DOCKERFILE) if word == "FROM"]
    assert base == "${BASE}"
    assert "/" not in args["BASE"] and ":" not in args["BASE"], "a local name, no registry"


def test_every_package_is_pinned_by_version_and_hash():
    pins = pinned_requirements(REQUIREMENTS)
    assert {"huggingface-hub", "boto3", "hf-xet"} <= set(pins)
    assert all(hashes > 0 for _, hashes in pins.values()), pins
    copies = [a.split() for word, a in instructions(DOCKERFILE) if word == "COPY"]
    assert ["stage/model-hydrator-deps/", "/usr/local/lib/python3.11/dist-packages/"] in copies


def test_the_image_pins_the_huggingface_hub_the_integration_test_ran():
    direct = dict(
        line.split("==", 1)
        for line in REQUIREMENTS_IN.read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert set(direct) == {"huggingface_hub", "boto3"}
    locked = pinned_requirements(REQUIREMENTS)
    assert locked["huggingface-hub"][0] == direct["huggingface_hub"]
    assert locked["boto3"][0] == direct["boto3"]
    assert direct["huggingface_hub"] == metadata.version("huggingface_hub")


def image_layout(into: Path) -> Path:
    """What modelfleet-release stages at /opt/modelfleet (the Dockerfile copies it there),
    laid out under `into`; returns where /opt/modelfleet landed."""
    opt = into / SCRIPT_PATH_IN_IMAGE.lstrip("/").rpartition("/")[0]
    opt.mkdir(parents=True)
    stage_hydrator_code(ROOT, opt)
    copies = [a.split() for word, a in instructions(DOCKERFILE) if word == "COPY"]
    assert ["stage/model-hydrator/", "/opt/modelfleet/"] in copies
    return opt


def test_the_script_is_baked_at_the_path_the_job_command_names(tmp_path):
    opt = image_layout(tmp_path)
    script = tmp_path / SCRIPT_PATH_IN_IMAGE.lstrip("/")
    assert script.read_text() == (IMAGE_DIR / "hydrate.py").read_text(), "the launcher"
    baked = sorted(p.name for p in (opt / "modelfleet_hydrator").glob("*.py"))
    packaged = sorted(p.name for p in (PACKAGE_DIR / "src/modelfleet_hydrator").glob("*.py"))
    assert baked == packaged, "the whole package, beside the launcher"
    (entrypoint,) = [args for word, args in instructions(DOCKERFILE) if word == "ENTRYPOINT"]
    assert json.loads(entrypoint) == [PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE]
    argv = hydration_argv(HuggingFace(repo="a/b"), cache_dir="/mnt/models", fingerprint="0" * 12)
    assert argv[:2] == [PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE]


@pytest.mark.parametrize("forbidden", ["pip install", "curl ", "wget "])
def test_the_job_command_installs_nothing_at_run_time(forbidden):
    argv = hydration_argv(
        HuggingFace.model_validate({"repo": "a/b", "include": ["*.json"]}),
        cache_dir="/mnt/models",
        fingerprint="0123456789ab",
    )
    assert not any(forbidden in a for a in argv)
    assert "sh" not in {Path(a).name for a in argv}, "no shell between the Job and the script"


def test_the_default_image_is_tagged_with_the_release():
    repository, _, tag = DEFAULT_IMAGE.rpartition(":")
    assert repository and re.fullmatch(r"v\d+\.\d+\.\d+", tag), DEFAULT_IMAGE
    assert tag == hydration.RELEASE_VERSION


def test_the_script_runs_from_the_image_layout_with_the_standard_library_only(tmp_path):
    """As in the image: what the Dockerfile copies, nothing else importable (no
    site-packages: -S; no PYTHONPATH), so the launcher finds the packages beside itself and
    they import nothing but the standard library."""
    image_layout(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-S", str(tmp_path / SCRIPT_PATH_IN_IMAGE.lstrip("/")), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "--cache-dir" in proc.stdout


def test_the_image_reports_with_the_contracts_annotation_names_not_a_copy(tmp_path):
    """The hydrator imports the names the function reads from the contracts; the image ships
    that very module."""
    opt = image_layout(tmp_path)
    shipped = opt / "modelfleet_contracts" / "hydration.py"
    assert shipped.read_text() == Path(hydration.__file__).read_text()
    sources = (PACKAGE_DIR / "src/modelfleet_hydrator").glob("*.py")
    copied = [p.name for p in sources if hydration.PREFIX in p.read_text()]
    assert copied == [], "annotation names are imported, never spelled out again"
