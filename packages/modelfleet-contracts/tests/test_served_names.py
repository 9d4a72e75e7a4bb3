"""The model name clients send: a source's natural id, and which name wins."""

import pytest
from modelfleet_contracts.served_names import (
    CONFLICT,
    ENGINE_DEFAULT,
    FROM_ENGINE_ARGS,
    FROM_MODEL_CACHE,
    FROM_SPEC,
    natural_model_name,
    resolve_served_name,
    served_name_in_args,
)


@pytest.mark.parametrize(
    ("source", "where", "natural"),
    [
        ("HuggingFace", {"hf_repo": "Qwen/Qwen3-0.6B"}, "Qwen/Qwen3-0.6B"),
        ("HuggingFace", {"hf_repo": "gpt2"}, "gpt2"),
        ("OCI", {"oci_image": "ghcr.io/acme/llama-3.1-8b:1.0"}, "acme/llama-3.1-8b"),
        ("OCI", {"oci_image": "registry.local:5000/models/qwen"}, "models/qwen"),
        ("OCI", {"oci_image": f"ghcr.io/acme/qwen@sha256:{'a' * 64}"}, "acme/qwen"),
        ("OCI", {"oci_image": f"ghcr.io/acme/qwen:v2@sha256:{'a' * 64}"}, "acme/qwen"),
        ("S3", {"s3_uri": "s3://models/llama-3.1-8b/"}, "llama-3.1-8b"),
        ("S3", {"s3_uri": "s3://models/meta/llama-3.1-8b"}, "llama-3.1-8b"),
        ("S3", {"s3_uri": "s3://models"}, "models"),
        # Nothing a client could send as a name: the engine keeps its own default.
        ("S3", {"s3_uri": "s3://models/-flag/"}, ""),
        ("OCI", {"oci_image": "qwen"}, ""),
        ("HuggingFace", {}, ""),
        ("Git", {"hf_repo": "Qwen/Qwen3-0.6B"}, ""),
    ],
)
def test_a_sources_natural_id(source, where, natural):
    assert natural_model_name(source, **where) == natural


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["--served-model-name=qwen"], "qwen"),
        (["--max-model-len=8192", "--served-model-name", "qwen", "alias"], "qwen"),
        (["--served-model-name="], None),
        (["--served-model-name", "--port=1"], None),
        (["--served-model-name"], None),
        (["--served-model-names=qwen"], None),
        ([], None),
    ],
)
def test_the_name_given_in_engine_args(args, name):
    assert served_name_in_args(args) == name


@pytest.mark.parametrize(
    ("framework", "args", "spec_name", "natural", "name", "origin", "overridden"),
    [
        ("vLLM", [], None, "Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B", FROM_MODEL_CACHE, None),
        ("vLLM", [], "qwen", "Qwen/Qwen3-0.6B", "qwen", FROM_SPEC, None),
        ("vLLM", ["--served-model-name=q"], None, "Qwen/Qwen3-0.6B", "q", FROM_ENGINE_ARGS, None),
        ("vLLM", ["--served-model-name=q"], "q", "", "q", FROM_ENGINE_ARGS, None),
        # The engine args win (SPEC 7a) and the disagreement is reported.
        ("vLLM", ["--served-model-name=q"], "qwen", "", "q", CONFLICT, "qwen"),
        # A Custom command's flags are its own: not read.
        ("Custom", ["--served-model-name=q"], "qwen", "", "qwen", FROM_SPEC, None),
        ("Custom", [], None, "", None, ENGINE_DEFAULT, None),
        ("vLLM", [], None, "", None, ENGINE_DEFAULT, None),
    ],
)
def test_which_name_wins(framework, args, spec_name, natural, name, origin, overridden):
    served = resolve_served_name(
        framework=framework, engine_args=args, spec_name=spec_name, natural=natural
    )
    assert (served.name, served.origin, served.overridden) == (name, origin, overridden)
