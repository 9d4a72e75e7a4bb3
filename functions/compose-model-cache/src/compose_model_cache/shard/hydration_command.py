"""The container command of a hydration Job: the hydrator's script in its image, and flags.

User values (repo, revision, filters, S3 URI, OCI image and path) reach the script only as
`--flag=value` argv elements — never shell text — so a value that looks like a flag or
contains shell syntax stays an inert string. The hydrator (packages/modelfleet-hydrator)
parses these flags; its integration tests run the command composed here.
"""

from modelfleet_contracts.hydration import PYTHON_IN_IMAGE, SCRIPT_PATH_IN_IMAGE
from modelfleet_contracts.models.modelcache import S3, HuggingFace, Oci

from compose_model_cache.fingerprint import DEFAULT_OCI_PATH


def hydration_argv(
    source: HuggingFace | S3 | Oci,
    *,
    cache_dir: str,
    fingerprint: str,
    job: str = "",
    python: str = PYTHON_IN_IMAGE,
    script: str = SCRIPT_PATH_IN_IMAGE,
) -> list[str]:
    """The exact container command of a hydration Job fetching `source` (the spec's block
    its `source` selects)."""
    argv = [python, script, f"--cache-dir={cache_dir}", f"--fingerprint={fingerprint}"]
    if job:
        argv.append(f"--job={job}")  # the Job it reports progress on (a name we derive)
    if isinstance(source, S3):
        argv += ["--source=S3", f"--uri={source.uri}"]
        return argv
    if isinstance(source, Oci):
        # The XRD's default path is applied here too: a spec typed in a test may omit it.
        argv += [
            "--source=OCI",
            f"--image={source.image}",
            f"--path={source.path or DEFAULT_OCI_PATH}",
        ]
    else:
        argv += ["--source=HuggingFace", f"--repo={source.repo}"]
        if source.revision:
            argv.append(f"--revision={source.revision}")
    argv += [f"--include={pattern.root}" for pattern in source.include or []]
    argv += [f"--exclude={pattern.root}" for pattern in source.exclude or []]
    return argv
