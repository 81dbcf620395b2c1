"""Sourced guard overrides, T5-family and vision-language text decoders in the built catalog.

Expected counts are the safetensors counts of the Hugging Face repositories the map rows cite
(as llmfit v1.1.17 lists them), or worked by hand from the config facts.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tpscalc.catalog.schema import Model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from matching import guard, guard_reference, load_map

MAP_FILE = ROOT / "tools" / "data" / "model_architecture_map.csv"


def _total(models: dict[str, Model], name: str) -> int:
    arch = models[name].architecture
    assert arch is not None and arch.params_total is not None, name
    return arch.params_total


# --- the override mechanism -------------------------------------------------------------

def _write_map(tmp_path: Path, overrides: str, note: str) -> Path:
    path = tmp_path / "map.csv"
    path.write_text("epoch_name,target,overrides,note\n"
                    f'X,base:Y,"{overrides}","{note}"\n', encoding="utf-8")
    return path


def test_published_count_leaves_the_overrides_and_becomes_the_guard_reference(
        tmp_path: Path) -> None:
    row = load_map(_write_map(tmp_path, '{""published_params"": 1176764416, ""num_layers"": 16}',
                              "count of https://huggingface.co/x/y"))["X"]
    assert row.published_params == 1_176_764_416
    assert row.overrides == {"num_layers": 16}  # only Architecture fields remain
    rec = {"parameters": 1.0e9}
    assert guard_reference(rec, row) == 1_176_764_416
    assert guard_reference(rec, None) == 1.0e9


@pytest.mark.parametrize(("overrides", "note"), [
    ('{""published_params"": 1176764416}', "no source given"),
    ('{""published_params"": 1.2}', "https://huggingface.co/x/y"),
    ('{""published_params"": -5}', "https://huggingface.co/x/y"),
])
def test_published_count_needs_a_url_and_a_positive_integer(tmp_path: Path, overrides: str,
                                                            note: str) -> None:
    with pytest.raises(ValueError, match="published_params"):
        load_map(_write_map(tmp_path, overrides, note))


def test_override_does_not_let_a_wrong_size_through() -> None:
    # OLMo-1B: the 1.18 B architecture fails against Epoch's 1.0 B and passes against the
    # published count; the 6.89 B OLMo-7B architecture fails against both.
    assert not guard(1_176_832_000, 1.0e9)
    assert guard(1_176_832_000, 1_176_764_416)
    assert not guard(6_888_628_224, 1_176_764_416)


def test_every_override_row_cites_a_url_and_is_used() -> None:
    rows = {k: r for k, r in load_map(MAP_FILE).items() if r.published_params}
    assert {"OLMo-1B", "Phi-3.5-MoE", "T5Gemma (Gemma 9B-9B)", "BGE-M3 Embedding"} <= set(rows)
    for name, row in rows.items():
        assert "https://" in row.note, name


# --- parameter counts against the published figures -------------------------------------

@pytest.mark.parametrize(("name", "expected", "abs_tol"), [
    # allenai/OLMo-1B-hf: non-parametric LayerNorm, so the 2 x 16 + 1 norm vectors of 2048
    # counted here are not in the checkpoint
    ("OLMo-1B", 1_176_764_416 + 33 * 2048, 0),
    ("LLama 3..2 Typhoon 2 1B", 1_235_814_400, 0),  # typhoon-ai/llama3.2-typhoon2-1b-instruct
    ("Phi-3.5-MoE", 41_873_153_344, 0.0001 * 41.9e9),  # microsoft/Phi-3.5-MoE-instruct
    # google/t5gemma-9b-9b-ul2: less Gemma 2's post-norms (2 per encoder, 3 per decoder layer)
    ("T5Gemma (Gemma 9B-9B)", 20_333_401_088 - 42 * 5 * 3584, 0),
    # mlx-community/bge-m3-mlx-fp16 (BAAI/bge-m3): less the pooler llama.cpp does not load
    ("BGE-M3 Embedding", 567_754_752 - (1024 * 1024 + 1024), 0),
])
def test_override_family_counts(models: dict[str, Model], name: str, expected: int,
                                abs_tol: float) -> None:
    assert _total(models, name) == pytest.approx(expected, abs=abs_tol, rel=0)


def test_fuyu_is_persimmon_plus_the_patch_projection(models: dict[str, Model]) -> None:
    # adept/fuyu-8b: 9,408,238,592; not counted here: the image-patch projection
    # (30 x 30 x 3 = 2700 -> 4096 with bias: 11,063,296) and a few small vectors
    missing = 9_408_238_592 - _total(models, "Fuyu-8B")
    assert 11_063_296 <= missing < 11_100_000
    assert _total(models, "Fuyu-8B") == _total(models, "Persimmon-8B")


def test_phi_3_5_moe_active_parameters(models: dict[str, Model]) -> None:
    arch = models["Phi-3.5-MoE"].architecture
    assert arch is not None and arch.params_active is not None
    assert arch.params_active / 1e9 == pytest.approx(6.6, rel=0.03)  # model card: 6.6 B active


def _t5_by_hand(d: int, ff: int, heads: int, d_kv: int, layers: int, vocab: int) -> int:
    """Gated T5 v1.1 encoder-decoder, untied, worked by hand (T5 block layout)."""
    attn = 4 * d * heads * d_kv  # q, k, v, o
    enc = d + attn + d + 3 * d * ff  # attn_norm, attention, ffn_norm, gated FFN
    dec = enc + d + attn  # plus cross_attn_norm and cross-attention
    return 2 * vocab * d + layers * (enc + dec) + 2 * 32 * heads + 2 * d  # rel. bias, out norms


@pytest.mark.parametrize(("name", "dims", "published"), [
    ("Flan-T5 11B", (4096, 10240, 64, 64, 24, 32128), 11.0e9),  # Epoch: 11 B
    ("UL2", (4096, 16384, 16, 256, 32, 32128), 20.0e9),  # Epoch: 20 B
    ("Flan UL2", (4096, 16384, 16, 256, 32, 32128), 19.5e9),  # yitay.net/blog/flan-ul2-20b
    ("CoEdiT-xxl", (4096, 10240, 64, 64, 24, 32128), 11.0e9),  # a Flan-T5-XXL fine-tune
])
def test_t5_family_counts(models: dict[str, Model], name: str, dims: tuple[int, ...],
                          published: float) -> None:
    arch = models[name].architecture
    assert arch is not None and arch.kind == "encoder-decoder"
    assert _total(models, name) == _t5_by_hand(*dims)
    assert _total(models, name) == pytest.approx(published, rel=0.03)


def test_deepseek_vl_text_decoder_by_hand(models: dict[str, Model]) -> None:
    d, ff, vocab, layers = 2048, 5632, 102400, 24
    expected = 2 * vocab * d + layers * (4 * d * d + 3 * d * ff + 2 * d) + d
    assert _total(models, "DeepSeek-VL-1.3B") == expected
    # deepseek-ai/deepseek-vl-1.3b-chat: 1,975,235,584 with the SigLIP-L tower and aligner
    assert 0.5 < expected / 1_975_235_584 < 1.0


def test_granite_docling_text_decoder_is_most_of_the_published_total(
        models: dict[str, Model]) -> None:
    total = _total(models, "Granite-Docling")
    assert 0.5 < total / 257_517_120 < 1.0  # ibm-granite/granite-docling-258M, all towers


def test_multimodal_t5_inherits_its_text_model(models: dict[str, Model]) -> None:
    assert _total(models, "Flan T5-XXL + BLIP-2") == _total(models, "Flan-T5 11B")


@pytest.mark.parametrize(("name", "params"), [
    ("DeepSeekMoE-16B", 16_375_728_128), ("GigaChat Lite (GigaChat-20B-A3B)", 20_589_299_712),
])
def test_deepseek_moe_shapes_take_their_shared_experts_and_dense_first_layer(
        name: str, params: int) -> None:
    """Their config.json files add what llmfit's list lacks (n_shared_experts 2,
    first_k_dense_replace 1 with the dense FFN width): the count is then the release's
    safetensors count exactly, and the model is no longer approximated."""
    from tpscalc.catalog import get_model

    arch = get_model(name).architecture
    assert arch is not None and not arch.approximated
    assert (arch.num_shared_experts, arch.first_dense_layers) == (2, 1)
    assert arch.params_total == params
