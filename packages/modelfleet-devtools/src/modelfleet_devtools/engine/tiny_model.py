"""A tiny Llama-shaped model the CPU engine serves: random weights from a fixed seed, a small
byte-level BPE tokenizer learnt from a fixed text, and a chat template. The same bytes every
run, on any host: the weights are uniform draws from Python's seeded Mersenne Twister (plain
IEEE arithmetic, no libm), written as little-endian float32 in safetensors' layout (an 8-byte
header length, a JSON header, the raw tensors); every JSON file is written with sorted keys.

Its answers are noise; what it proves is that an engine loads a model from the files a cache
staged and answers requests for it. Shape: hidden 128, 2 layers, 2 heads (head_dim 64: vLLM's
CPU attention kernel refuses smaller heads), 343 tokens, about 1.7 MB.
"""

from __future__ import annotations

import itertools
import json
import random
import struct
import sys
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

from ..loopback.hub import Repo

SEED = 45
HIDDEN = 128
INTERMEDIATE = 256
LAYERS = 2
HEADS = 2
HEAD_DIM = HIDDEN // HEADS
MAX_POSITIONS = 32768  # at least any --max-model-len the examples pass
MERGES = 82  # 256 byte tokens + 82 merges + 5 special tokens = 343
SPECIAL_TOKENS = ("<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>")
WEIGHT_RANGE = 0.05  # weights are uniform in [-WEIGHT_RANGE, WEIGHT_RANGE)
# What the tokenizer's merges are learnt from.
TRAINING_TEXT = (
    "A model fleet serves models on many clusters. Each cluster stages the weights once, "
    "and the engine answers requests for the served model name. The replica reports its "
    "address when the engine is ready, and the deployment reports the fleet. Hello, how are "
    "you? I am a tiny model and my answers are noise, but the engine that serves them is real."
)
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{{ message['content'] }}{{ eos_token }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def byte_alphabet() -> dict[int, str]:
    """Byte-level BPE's printable stand-in for each byte (the GPT-2 mapping): printable
    Latin-1 bytes stand for themselves, the rest for code points from 256 up, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def _words(text: str, alphabet: dict[int, str]) -> Counter[tuple[str, ...]]:
    """The text split as the pre-tokenizer splits it, roughly: each word with its leading space."""
    pieces = []
    for index, word in enumerate(text.split(" ")):
        pieces.append(word if index == 0 else " " + word)
    return Counter(tuple(alphabet[b] for b in piece.encode()) for piece in pieces if piece)


def learn_merges(text: str, count: int, alphabet: dict[int, str]) -> list[tuple[str, str]]:
    """`count` BPE merges learnt from `text`: the most frequent pair each time, ties broken by
    the pair itself so that the order is fixed."""
    words = _words(text, alphabet)
    merges: list[tuple[str, str]] = []
    while len(merges) < count:
        pairs: Counter[tuple[str, str]] = Counter()
        for word, seen in words.items():
            for pair in itertools.pairwise(word):
                pairs[pair] += seen
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        merges.append(best)
        merged: Counter[tuple[str, ...]] = Counter()
        for word, seen in words.items():
            out: list[str] = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += seen
        words = merged
    return merges


def tokenizer_json() -> tuple[dict[str, Any], int]:
    """tokenizer.json (Hugging Face `tokenizers`' format) and the vocabulary's size."""
    alphabet = byte_alphabet()
    merges = learn_merges(TRAINING_TEXT, MERGES, alphabet)
    vocab: dict[str, int] = {}
    for token in (*SPECIAL_TOKENS, *(alphabet[b] for b in range(256)), *(a + b for a, b in merges)):
        vocab.setdefault(token, len(vocab))
    added = [
        {"id": vocab[token], "content": token, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for token in SPECIAL_TOKENS
    ]  # fmt: skip
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}  # fmt: skip
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": byte_level,
        "decoder": byte_level,
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None,
            "continuing_subword_prefix": None, "end_of_word_suffix": None,
            "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": [[a, b] for a, b in merges],
        },
    }  # fmt: skip
    return tokenizer, len(vocab)


def model_config(vocab_size: int) -> dict[str, Any]:
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": HEADS,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "max_position_embeddings": MAX_POSITIONS,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "vocab_size": vocab_size,
        "bos_token_id": SPECIAL_TOKENS.index("<s>"),
        "eos_token_id": SPECIAL_TOKENS.index("</s>"),
        "tie_word_embeddings": False,
        "attention_bias": False,
        "mlp_bias": False,
        "torch_dtype": "float32",
    }


def tensor_shapes(vocab_size: int) -> list[tuple[str, tuple[int, ...]]]:
    """Every tensor of a Llama checkpoint of this shape, by its name in transformers."""
    shapes: list[tuple[str, tuple[int, ...]]] = [
        ("model.embed_tokens.weight", (vocab_size, HIDDEN))
    ]
    for layer in range(LAYERS):
        prefix = f"model.layers.{layer}"
        shapes += [
            (f"{prefix}.input_layernorm.weight", (HIDDEN,)),
            (f"{prefix}.self_attn.q_proj.weight", (HEADS * HEAD_DIM, HIDDEN)),
            (f"{prefix}.self_attn.k_proj.weight", (HEADS * HEAD_DIM, HIDDEN)),
            (f"{prefix}.self_attn.v_proj.weight", (HEADS * HEAD_DIM, HIDDEN)),
            (f"{prefix}.self_attn.o_proj.weight", (HIDDEN, HEADS * HEAD_DIM)),
            (f"{prefix}.post_attention_layernorm.weight", (HIDDEN,)),
            (f"{prefix}.mlp.gate_proj.weight", (INTERMEDIATE, HIDDEN)),
            (f"{prefix}.mlp.up_proj.weight", (INTERMEDIATE, HIDDEN)),
            (f"{prefix}.mlp.down_proj.weight", (HIDDEN, INTERMEDIATE)),
        ]
    shapes += [("model.norm.weight", (HIDDEN,)), ("lm_head.weight", (vocab_size, HIDDEN))]
    return shapes


def safetensors_bytes(tensors: list[tuple[str, tuple[int, ...], array[float]]]) -> bytes:
    """A safetensors file of float32 tensors, in the order given."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    data = []
    for name, shape, values in tensors:
        if sys.byteorder == "big":  # safetensors is little-endian
            values = array("f", values)
            values.byteswap()
        raw = values.tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        offset += len(raw)
        data.append(raw)
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the tensors start 8-byte aligned
    return struct.pack("<Q", len(text)) + text + b"".join(data)


def _weights(vocab_size: int) -> bytes:
    rng = random.Random(SEED)
    tensors = []
    for name, shape in tensor_shapes(vocab_size):
        size = 1
        for dimension in shape:
            size *= dimension
        if name.endswith("norm.weight"):
            values = array("f", [1.0] * size)
        else:
            values = array("f", [(rng.random() * 2 - 1) * WEIGHT_RANGE for _ in range(size)])
        tensors.append((name, shape, values))
    return safetensors_bytes(tensors)


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def tiny_model_files() -> dict[str, bytes]:
    """The model's files, name -> content, as a Hub repo holds them (any repo name serves it)."""
    tokenizer, vocab_size = tokenizer_json()
    bos, eos = SPECIAL_TOKENS[0], SPECIAL_TOKENS[1]
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": bos,
        "eos_token": eos,
        "add_bos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": MAX_POSITIONS,
        "chat_template": CHAT_TEMPLATE,
    }
    generation_config = {
        "bos_token_id": SPECIAL_TOKENS.index(bos),
        "eos_token_id": SPECIAL_TOKENS.index(eos),
    }
    return {
        "config.json": _json(model_config(vocab_size)),
        "generation_config.json": _json(generation_config),
        "tokenizer.json": _json(tokenizer),
        "tokenizer_config.json": _json(tokenizer_config),
        "special_tokens_map.json": _json({"bos_token": bos, "eos_token": eos}),
        "model.safetensors": _weights(vocab_size),
    }


def write_tiny_model(directory: Path) -> Path:
    """Write the model's files into `directory` (made if missing) and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in tiny_model_files().items():
        (directory / name).write_bytes(content)
    return directory


def tiny_model_repo(ref: str = "main") -> Repo:
    """A loopback Hub repo holding the model at `ref`: serve it under any repo name, as
    `FakeHub({"Qwen/Qwen2.5-1.5B-Instruct": tiny_model_repo()})`."""
    repo = Repo()
    repo.commit(ref, tiny_model_files())
    return repo
