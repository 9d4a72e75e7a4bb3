"""The tiny model the CPU engine serves (modelfleet_devtools.engine.tiny_model): the same bytes
in every process, a safetensors file laid out as the format says with a Llama checkpoint's
tensors, a tokenizer whose ids are the vocabulary, and files the loopback Hub serves under any
repo name."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import snapshot_download
from modelfleet_devtools.engine import tiny_model
from modelfleet_devtools.engine.tiny_model import (
    SPECIAL_TOKENS,
    tiny_model_files,
    tiny_model_repo,
    write_tiny_model,
)
from modelfleet_devtools.loopback.hub import FakeHub

DIGEST_SCRIPT = (
    "import hashlib, sys\n"
    "from pathlib import Path\n"
    "from modelfleet_devtools.engine.tiny_model import write_tiny_model\n"
    "out = write_tiny_model(Path(sys.argv[1]))\n"
    "for f in sorted(out.iterdir()):\n"
    "    print(f.name, hashlib.sha256(f.read_bytes()).hexdigest())\n"
)


def digests_in_a_new_process(directory: Path, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", DIGEST_SCRIPT, str(directory)],
        env=env, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return done.stdout


def test_two_runs_write_the_same_bytes(tmp_path):
    # Separate processes with different hash seeds: nothing may hang on set or dict order.
    first = digests_in_a_new_process(tmp_path / "first", "1")
    second = digests_in_a_new_process(tmp_path / "second", "2")
    assert first == second
    assert {line.split()[0] for line in first.splitlines()} == set(tiny_model_files())


def read_safetensors(data: bytes) -> tuple[dict, bytes]:
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    return header, data[8 + length :]


def test_the_weights_are_a_llama_checkpoint_in_safetensors_layout():
    files = tiny_model_files()
    config = json.loads(files["config.json"])
    header, body = read_safetensors(files["model.safetensors"])
    header.pop("__metadata__")
    hidden, vocab = config["hidden_size"], config["vocab_size"]
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert hidden // config["num_attention_heads"] == config["head_dim"] == 64
    assert header["model.embed_tokens.weight"]["shape"] == [vocab, hidden]
    assert header["lm_head.weight"]["shape"] == [vocab, hidden]
    assert len([n for n in header if n.endswith(".self_attn.q_proj.weight")]) == 2
    # The tensors tile the body exactly, each float32 (4 bytes an element).
    spans = sorted(entry["data_offsets"] for entry in header.values())
    assert spans[0][0] == 0 and spans[-1][1] == len(body)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    for entry in header.values():
        elements = 1
        for dimension in entry["shape"]:
            elements *= dimension
        assert entry["dtype"] == "F32"
        assert entry["data_offsets"][1] - entry["data_offsets"][0] == 4 * elements
    assert 1_000_000 < len(files["model.safetensors"]) < 2_500_000


def test_the_tokenizer_ids_are_the_vocabulary_and_the_template_uses_its_tokens():
    files = tiny_model_files()
    tokenizer = json.loads(files["tokenizer.json"])
    config = json.loads(files["config.json"])
    vocab = tokenizer["model"]["vocab"]
    assert sorted(vocab.values()) == list(range(config["vocab_size"]))
    assert 300 <= config["vocab_size"] <= 400
    for left, right in tokenizer["model"]["merges"]:
        assert left in vocab and right in vocab and left + right in vocab
    assert {t["content"] for t in tokenizer["added_tokens"]} == set(SPECIAL_TOKENS)
    assert config["eos_token_id"] == vocab["</s>"]
    template = json.loads(files["tokenizer_config.json"])["chat_template"]
    assert "add_generation_prompt" in template and "<|assistant|>" in template


def test_every_weight_changes_with_the_seed(monkeypatch):
    before = tiny_model_files()["model.safetensors"]
    monkeypatch.setattr(tiny_model, "SEED", tiny_model.SEED + 1)
    after = tiny_model_files()["model.safetensors"]
    assert len(before) == len(after) and before != after


@pytest.mark.parametrize("repo_name", ["Qwen/Qwen2.5-1.5B-Instruct", "meta-llama/Llama-3.1-8B"])
def test_the_loopback_hub_serves_it_under_an_examples_repo_name(tmp_path, repo_name):
    with FakeHub({repo_name: tiny_model_repo()}) as hub:
        got = Path(
            snapshot_download(
                repo_name, endpoint=hub.endpoint, cache_dir=tmp_path / "cache", token=False
            )
        )
    expected = write_tiny_model(tmp_path / "expected")
    for name in tiny_model_files():
        assert (
            hashlib.sha256((got / name).read_bytes()).digest()
            == hashlib.sha256((expected / name).read_bytes()).digest()
        ), name
