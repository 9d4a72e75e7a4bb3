"""The hydrator image definition: pinned throughout, and the script where the Job looks for it.

No container engine runs here, so these read the Dockerfile and its lock as text.
"""

import re
import shlex
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from compose_model_cache import hydrator
from compose_model_cache.hydrator import DEFAULT_IMAGE, PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE
from modelfleet_contracts.models.modelcache import HuggingFace

FUNCTION_DIR = Path(__file__).resolve().parents[1]
IMAGE_DIR = FUNCTION_DIR / "hydrator-image"
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


def test_the_base_image_is_pinned_to_an_exact_version_or_digest():
    (base,) = [args for word, args in instructions(DOCKERFILE) if word == "FROM"]
    image = base.split()[0]
    assert "@sha256:" in image or re.search(r":\d+\.\d+\.\d+[\w.-]*$", image), image
    assert not image.endswith(":latest")


def test_every_package_is_pinned_by_version_and_hash_and_installed_with_require_hashes():
    pins = pinned_requirements(REQUIREMENTS)
    assert {"huggingface-hub", "boto3", "hf-xet"} <= set(pins)
    assert all(hashes > 0 for _, hashes in pins.values()), pins
    (install,) = [args for word, args in instructions(DOCKERFILE) if "pip install" in args]
    argv = shlex.split(install)
    assert "--require-hashes" in argv
    assert "/opt/modelfleet/requirements.txt" in argv
    copies = [args.split() for word, args in instructions(DOCKERFILE) if word == "COPY"]
    assert ["hydrator-image/requirements.txt", "/opt/modelfleet/requirements.txt"] in copies


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


def test_the_hf_cli_is_checked_at_build_time():
    runs = " ".join(args for word, args in instructions(DOCKERFILE) if word == "RUN")
    assert "hf version" in runs


def test_the_script_is_baked_at_the_path_the_job_command_names():
    copies = [args.split() for word, args in instructions(DOCKERFILE) if word == "COPY"]
    script_dir = SCRIPT_PATH_IN_IMAGE.rpartition("/")[0] + "/"
    sources = [src for src, dest in copies if dest == script_dir]
    assert sources == ["src/compose_model_cache/hydrator/"], "the package, next to nothing else"
    baked = FUNCTION_DIR / sources[0] / SCRIPT_PATH_IN_IMAGE.rpartition("/")[2]
    assert baked.read_text() == hydrator.script_source(), "the image bakes the packaged script"
    argv = hydrator.hydration_argv(
        HuggingFace(repo="a/b"),
        cache_dir="/mnt/models",
        fingerprint="0123456789ab",
    )
    assert argv[:2] == [PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE]


@pytest.mark.parametrize("forbidden", ["pip install", "curl ", "wget "])
def test_the_job_command_installs_nothing_at_run_time(forbidden):
    argv = hydrator.hydration_argv(
        HuggingFace.model_validate({"repo": "a/b", "include": ["*.json"]}),
        cache_dir="/mnt/models",
        fingerprint="0123456789ab",
    )
    assert not any(forbidden in a for a in argv)
    assert "sh" not in {Path(a).name for a in argv}, "no shell between the Job and the script"


def test_the_default_image_has_a_version_tag():
    repository, _, tag = DEFAULT_IMAGE.rpartition(":")
    assert repository and re.fullmatch(r"\d+\.\d+\.\d+", tag), DEFAULT_IMAGE


def test_the_script_runs_from_the_image_layout_with_the_standard_library_only(tmp_path):
    """As in the image: the package's files in one directory, nothing else importable (no
    site-packages: -S), so the script finds its modules beside itself."""
    layout = tmp_path / "opt-modelfleet"
    shutil.copytree(FUNCTION_DIR / "src/compose_model_cache/hydrator", layout)
    proc = subprocess.run(
        [sys.executable, "-S", str(layout / "hydrate.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--cache-dir" in proc.stdout


def test_the_image_reports_with_the_contracts_annotation_names():
    from compose_model_cache.hydrator import job_report
    from modelfleet_contracts import hydration

    names = [n for n in dir(hydration) if n.isupper()]
    assert names and {n: getattr(job_report, n) for n in names} == {
        n: getattr(hydration, n) for n in names
    }
