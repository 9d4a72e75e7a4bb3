"""The model name clients send (OpenAI `model`), shared by the scheduler, which resolves it
for a ModelDeployment, and the replica, which hands it to the engine.

Precedence, highest first: a `--served-model-name` the user already passes in a vLLM
deployment's `engine.args`; `spec.servedModelName`; the ModelCache source's natural id (a
Hugging Face repo, an OCI image's repository, an S3 prefix's last segment). Without any of
them the engine keeps its own default (vLLM: the `--model` value).
"""

import re
from dataclasses import dataclass

# vLLM's flag; the value (first of its names) is what clients send.
SERVED_MODEL_NAME_FLAG = "--served-model-name"
# Every engine container gets the resolved name here; a Custom engine passes it to its own
# flag as `$(MODELFLEET_SERVED_MODEL_NAME)` in its args (Kubernetes expands it, no shell).
SERVED_MODEL_NAME_ENV = "MODELFLEET_SERVED_MODEL_NAME"

# The shape of spec.servedModelName in both XRDs (keep them equal): never a flag, no spaces.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:/@+=-]{0,255}")

# Where a resolved name came from (the reason on ServedModelNameResolved).
FROM_ENGINE_ARGS = "EngineArgs"
FROM_SPEC = "Spec"
FROM_MODEL_CACHE = "ModelCacheSource"
ENGINE_DEFAULT = "EngineDefault"
CONFLICT = "ConflictingEngineArgs"


@dataclass(frozen=True)
class ServedName:
    """The resolved name (None: the engine's own default), where it came from, and the
    value of `spec.servedModelName` the engine args override (None: no conflict)."""

    name: str | None
    origin: str
    overridden: str | None = None


def natural_model_name(
    source: str, *, hf_repo: str = "", oci_image: str = "", s3_uri: str = ""
) -> str:
    """The id a model is known by at its source; "" when the source names none.

    HuggingFace: the repo (`Qwen/Qwen3-0.6B`). OCI: the image's repository without registry,
    tag or digest (`ghcr.io/acme/llama-3.1-8b:1.0` -> `acme/llama-3.1-8b`). S3: the prefix's
    last segment (`s3://models/llama-3.1-8b/` -> `llama-3.1-8b`), the bucket without one."""
    name = ""
    if source == "HuggingFace":
        name = hf_repo.strip()
    elif source == "OCI":
        name = _oci_repository(oci_image.strip())
    elif source == "S3":
        segments = [s for s in s3_uri.strip().removeprefix("s3://").split("/") if s]
        name = segments[-1] if segments else ""
    return name if is_servable_name(name) else ""


def is_servable_name(name: str) -> bool:
    """`name` fits spec.servedModelName (what a ModelReplica may carry)."""
    return NAME_PATTERN.fullmatch(name) is not None


def _oci_repository(image: str) -> str:
    reference = image.split("@", 1)[0]
    _registry, slash, rest = reference.partition("/")
    if not slash:
        return ""  # the XRD requires a registry; a bare name names no repository
    if ":" in rest.rsplit("/", 1)[-1]:  # a tag (a port is only ever in the registry part)
        rest = rest[: rest.rindex(":")]
    return rest


def served_name_in_args(args: list[str]) -> str | None:
    """The first name given to `--served-model-name` in `args` (`--flag=a` or `--flag a [b]`);
    None when the flag is absent or given no value."""
    for i, arg in enumerate(args):
        if arg.startswith(SERVED_MODEL_NAME_FLAG + "="):
            value = arg.split("=", 1)[1]
            return value or None
        if arg == SERVED_MODEL_NAME_FLAG:
            following = args[i + 1] if i + 1 < len(args) else ""
            return following if following and not following.startswith("-") else None
    return None


def resolve_served_name(
    *, framework: str, engine_args: list[str], spec_name: str | None, natural: str
) -> ServedName:
    """The name clients send, by the precedence in this module's docstring. Engine args are
    read for vLLM only (a Custom command's flags are its own)."""
    in_args = served_name_in_args(engine_args) if framework == "vLLM" else None
    if in_args is not None:
        overridden = spec_name if spec_name and spec_name != in_args else None
        return ServedName(in_args, CONFLICT if overridden else FROM_ENGINE_ARGS, overridden)
    if spec_name:
        return ServedName(spec_name, FROM_SPEC)
    if natural:
        return ServedName(natural, FROM_MODEL_CACHE)
    return ServedName(None, ENGINE_DEFAULT)
