"""Tiny GGUF files written with gguf.GGUFWriter for the readers' tests (no network, no model)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize

HIDDEN, FFN, HEADS, KV_HEADS, LAYERS, VOCAB = 64, 128, 4, 2, 2, 256


def _tensors() -> list[tuple[str, tuple[int, ...], bool]]:
    """(name, numpy shape (rows, row length), quantized) of a 2-layer llama."""
    head_dim = HIDDEN // HEADS
    out = [("token_embd.weight", (VOCAB, HIDDEN), True), ("output_norm.weight", (HIDDEN,), False),
           ("output.weight", (VOCAB, HIDDEN), True)]
    for i in range(LAYERS):
        b = f"blk.{i}"
        out += [(f"{b}.attn_norm.weight", (HIDDEN,), False),
                (f"{b}.attn_q.weight", (HIDDEN, HIDDEN), True),
                (f"{b}.attn_k.weight", (KV_HEADS * head_dim, HIDDEN), True),
                (f"{b}.attn_v.weight", (KV_HEADS * head_dim, HIDDEN), True),
                (f"{b}.attn_output.weight", (HIDDEN, HIDDEN), True),
                (f"{b}.ffn_norm.weight", (HIDDEN,), False),
                (f"{b}.ffn_gate.weight", (FFN, HIDDEN), True),
                (f"{b}.ffn_up.weight", (FFN, HIDDEN), True),
                (f"{b}.ffn_down.weight", (HIDDEN, FFN), True)]
    return out


def write_tiny_llama(path: Path, arch: str = "llama", *, sliding_window: int | None = None,
                     split: int = 0, per_layer: int = 0,
                     keys: dict[str, int | list[int] | list[bool]] | None = None) -> int:
    """Write a 2-layer llama GGUF (Q8_0 matrices, F32 norms); return its tensor bytes.
    per_layer: also a per-layer embedding table of that width per layer (Gemma 4's
    per_layer_token_embd, which llama.cpp reads row by row); keys: more `{arch}.` metadata
    (ints as uint32, lists as arrays)."""
    rng = np.random.default_rng(0)
    writer = GGUFWriter(path, arch, split_max_tensors=split)
    writer.add_name("Tiny Llama")
    writer.add_block_count(LAYERS)
    writer.add_context_length(2048)
    writer.add_embedding_length(HIDDEN)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_vocab_size(VOCAB)
    if sliding_window:
        writer.add_sliding_window(sliding_window)
    for key, value in (keys or {}).items():
        if isinstance(value, list):
            writer.add_array(f"{arch}.{key}", value)
        else:
            writer.add_uint32(f"{arch}.{key}", value)
    total = 0
    tensors = _tensors()
    if per_layer:
        tensors.append(("per_layer_token_embd.weight", (VOCAB, LAYERS * per_layer), True))
    for name, shape, quantized in tensors:
        data = rng.standard_normal(shape).astype(np.float32)
        if quantized:
            raw = quantize(data, GGMLQuantizationType.Q8_0)
            writer.add_tensor(name, raw, raw_dtype=GGMLQuantizationType.Q8_0)
            total += raw.nbytes
        else:
            writer.add_tensor(name, data)
            total += data.nbytes
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return total


@pytest.fixture
def tiny_gguf(tmp_path: Path) -> tuple[Path, int]:
    """A 2-layer llama GGUF (Q8_0 matrices, F32 norms) and the sum of its tensor bytes."""
    path = tmp_path / "tiny.gguf"
    return path, write_tiny_llama(path)


@pytest.fixture
def write_gguf() -> object:
    """`write_tiny_llama(path, arch=..., sliding_window=..., split=...)` for variants."""
    return write_tiny_llama
