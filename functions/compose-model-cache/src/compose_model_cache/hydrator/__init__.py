"""The downloader a hydration Job runs: a pinned image and a fixed script.

User values (repo, revision, filters, S3 URI) reach the script only as `--flag=value`
argv elements — never shell text — so a value that looks like a flag or contains shell
syntax stays an inert string.
"""

from collections.abc import Mapping
from importlib import resources
from typing import Any

# Built from functions/compose-model-cache/hydrator-image/ (pinned huggingface_hub and
# boto3, the script baked in); override per cache with spec.hydration.image.
DEFAULT_IMAGE = "ghcr.io/modelfleet/model-hydrator:0.1.0"
# Where the image holds the script (hydrate.py in this package).
SCRIPT_PATH_IN_IMAGE = "/opt/modelfleet/hydrate.py"
PYTHON_IN_IMAGE = "python3"


def script_source() -> str:
    """The script baked into the image (also run as is by the integration tests)."""
    return resources.files(__package__).joinpath("hydrate.py").read_text()


def hydration_argv(
    source: Mapping[str, Any],
    *,
    cache_dir: str,
    fingerprint: str,
    job: str = "",
    python: str = PYTHON_IN_IMAGE,
    script: str = SCRIPT_PATH_IN_IMAGE,
) -> list[str]:
    """The exact container command of a hydration Job."""
    argv = [python, script, f"--cache-dir={cache_dir}", f"--fingerprint={fingerprint}"]
    if job:
        argv.append(f"--job={job}")  # the Job it reports progress on (a name we derive)
    if source.get("source") == "S3":
        s3 = source.get("s3") or {}
        argv += ["--source=S3", f"--uri={s3.get('uri', '')}"]
        return argv
    hf = source.get("huggingFace") or {}
    argv += ["--source=HuggingFace", f"--repo={hf.get('repo', '')}"]
    if hf.get("revision"):
        argv.append(f"--revision={hf['revision']}")
    argv += [f"--include={pattern}" for pattern in hf.get("include") or []]
    argv += [f"--exclude={pattern}" for pattern in hf.get("exclude") or []]
    return argv
