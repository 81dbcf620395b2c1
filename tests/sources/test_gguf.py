"""--gguf: exact weights from a GGUF header, KV from its metadata, bad files as one line."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpscalc import api
from tpscalc.catalog.schema import Architecture
from tpscalc.cli.main import app
from tpscalc.sources import SourceError
from tpscalc.sources.gguf_header import GgufHeader, TensorInfo, read_header
from tpscalc.sources.gguf_model import architecture, read_gguf

GIB = 2**30
runner = CliRunner()
Writer = Callable[..., int]


def _estimate(path: Path, *extra: str) -> dict[str, object]:
    result = runner.invoke(app, ["estimate", "--gguf", str(path), "--gpu", "GeForce RTX 4090",
                                 "--json", *extra])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def _memory(data: dict[str, object]) -> dict[str, float]:
    memory = data["memory"]
    assert isinstance(memory, dict)
    return memory


def test_weights_are_the_sum_of_tensor_bytes(tiny_gguf: tuple[Path, int]) -> None:
    path, tensor_bytes = tiny_gguf
    data = _estimate(path)
    assert _memory(data)["weights_gib"] == pytest.approx(tensor_bytes / GIB, rel=0.01)
    assert data["quant"] == "Q8_0"
    assert "tiny.gguf" in json.dumps(data["sources"])


def test_kv_cache_from_the_metadata(tiny_gguf: tuple[Path, int]) -> None:
    # 2 layers × 2 KV heads × 16 values per head × (K and V) × 2048 tokens × 2 bytes (f16)
    data = _estimate(tiny_gguf[0], "--context", "2048")
    assert _memory(data)["kv_cache_gib"] * GIB == 2 * 2 * 16 * 2 * 2048 * 2
    assert _memory(data)["approximated"] is False


def test_a_file_cut_after_its_header_gives_the_same_answer(tiny_gguf: tuple[Path, int],
                                                           tmp_path: Path) -> None:
    path, _ = tiny_gguf
    cut = tmp_path / "partial.gguf"
    cut.write_bytes(path.read_bytes()[: read_header(path).header_bytes])
    assert cut.stat().st_size < path.stat().st_size
    assert _estimate(cut)["memory"] == _estimate(path)["memory"]


def test_split_files_add_up_every_shard(tmp_path: Path, write_gguf: Writer,
                                        tiny_gguf: tuple[Path, int]) -> None:
    tensor_bytes = write_gguf(tmp_path / "split.gguf", split=8)
    shards = sorted(tmp_path.glob("split-*-of-*.gguf"))
    assert len(shards) == 3
    fw = read_gguf(shards[1]).model.file_weights
    assert fw is not None and fw.bytes_stored == tensor_bytes == tiny_gguf[1]


def test_a_missing_shard_is_one_line(tmp_path: Path, write_gguf: Writer) -> None:
    write_gguf(tmp_path / "split.gguf", split=8)
    (tmp_path / "split-00003-of-00003.gguf").unlink()
    with pytest.raises(SourceError, match="split-00003-of-00003.gguf"):
        read_gguf(tmp_path / "split-00001-of-00003.gguf")


def test_an_unknown_architecture_keeps_exact_weights_and_approximates_kv(
        tmp_path: Path, write_gguf: Writer) -> None:
    path = tmp_path / "odd.gguf"
    tensor_bytes = write_gguf(path, arch="someday-arch")
    data = _estimate(path)
    assert _memory(data)["weights_gib"] == pytest.approx(tensor_bytes / GIB, rel=0.01)
    assert _memory(data)["approximated"] is True
    assert "approximated" in str(data["sources"])


def test_a_per_layer_embedding_table_is_neither_held_nor_read(
        tmp_path: Path, write_gguf: Writer, tiny_gguf: tuple[Path, int]) -> None:
    """Gemma 4's per_layer_token_embd: llama.cpp reads its rows from the mapped file."""
    path = tmp_path / "ple.gguf"
    file_bytes = write_gguf(path, per_layer=32)
    table = 256 * 2 * 32 // 32 * 34  # VOCAB × LAYERS × 32 values, Q8_0 (34 bytes per 32)
    assert file_bytes == tiny_gguf[1] + table
    fw = read_gguf(path).model.file_weights
    plain = read_gguf(tiny_gguf[0]).model.file_weights
    assert fw is not None and plain is not None
    assert fw.bytes_stored == tiny_gguf[1]
    assert fw.bytes_read_per_token == plain.bytes_read_per_token


def test_sliding_window_layers_from_the_metadata(tmp_path: Path, write_gguf: Writer) -> None:
    path = tmp_path / "gemma2.gguf"
    write_gguf(path, arch="gemma2", sliding_window=128)
    arch, _ = architecture(read_header(path))
    assert arch is not None
    assert (arch.sliding_window, arch.sliding_window_layers) == (128, 1)  # every other layer


def test_mla_keys_map_onto_the_latent_cache(tmp_path: Path) -> None:
    # DeepSeek-V3's GGUF keys (llama.cpp convert_hf_to_gguf.py, DeepseekV2Model).
    meta = {"general.architecture": "deepseek2", "deepseek2.block_count": 61,
            "deepseek2.embedding_length": 7168, "deepseek2.attention.head_count": 128,
            "deepseek2.attention.head_count_kv": 1, "deepseek2.vocab_size": 129280,
            "deepseek2.attention.kv_lora_rank": 512, "deepseek2.attention.q_lora_rank": 1536,
            "deepseek2.rope.dimension_count": 64, "deepseek2.attention.key_length_mla": 192,
            "deepseek2.attention.value_length_mla": 128, "deepseek2.expert_count": 256,
            "deepseek2.expert_used_count": 8, "deepseek2.leading_dense_block_count": 3}
    arch, why = architecture(GgufHeader(tmp_path / "x.gguf", 3, meta, (), 0))
    assert arch is not None, why
    assert (arch.kv_lora_rank, arch.qk_rope_head_dim, arch.qk_nope_head_dim) == (512, 64, 128)
    assert (arch.num_experts, arch.num_experts_active, arch.first_dense_layers) == (256, 8, 3)


def test_the_python_api_takes_a_gguf(tiny_gguf: tuple[Path, int]) -> None:
    path, tensor_bytes = tiny_gguf
    out = api.evaluate(None, "RTX 4090", gguf=path)
    assert out["memory"]["weights_gib"] == pytest.approx(tensor_bytes / GIB, rel=0.01)
    report = api.model_report(None, gguf=path, search="rtx 4090")
    assert report.summary.model.name == "Tiny Llama" and report.rows


def test_the_model_command_takes_a_gguf(tiny_gguf: tuple[Path, int]) -> None:
    result = runner.invoke(app, ["model", "--gguf", str(tiny_gguf[0]), "--search", "rtx 4090",
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert "tiny.gguf" in json.loads(result.stdout)["sources"]["weights"]


def _corrupt(path: Path) -> None:
    path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (2**62).to_bytes(8, "little") * 2)


def _random(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 20)


def _truncated_header(path: Path) -> None:
    path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (5).to_bytes(8, "little"))


@pytest.mark.parametrize("make, words", [
    (_random, "not a GGUF"), (_corrupt, "corrupt"), (_truncated_header, "cut short or corrupt"),
])
def test_bad_files_end_with_one_line_and_exit_2(tmp_path: Path, make: Callable[[Path], None],
                                                words: str) -> None:
    path = tmp_path / "bad.gguf"
    make(path)
    result = runner.invoke(app, ["estimate", "--gguf", str(path), "--gpu", "4090"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and words in result.output
    assert "Traceback" not in result.output


def test_an_unreadable_path_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["estimate", "--gguf", str(tmp_path), "--gpu", "4090"])
    assert result.exit_code == 2 and result.output.count("\n") == 1


def test_a_gguf_refuses_another_quantization(tiny_gguf: tuple[Path, int]) -> None:
    result = runner.invoke(app, ["estimate", "--gguf", str(tiny_gguf[0]), "--gpu", "4090",
                                 "--quant", "Q4_K_M"])
    assert result.exit_code == 2 and "holds Q8_0" in result.output


def test_the_python_api_raises_an_input_error_for_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.gguf"
    _random(path)
    with pytest.raises(api.INPUT_ERRORS, match="not a GGUF"):
        api.evaluate(None, "4090", gguf=path)


# llama.cpp's keys for two catalog models, as convert_hf_to_gguf.py writes them from the
# configs in tests/sources/data (Qwen3-8B; gpt-oss-20b, sliding window on every other layer).
GGUF_METADATA = {
    "qwen3-8b": {"general.architecture": "qwen3", "qwen3.block_count": 36,
                 "qwen3.embedding_length": 4096, "qwen3.attention.head_count": 32,
                 "qwen3.attention.head_count_kv": 8, "qwen3.attention.key_length": 128,
                 "qwen3.vocab_size": 151936, "qwen3.context_length": 40960},
    "gpt-oss-20b": {"general.architecture": "gpt-oss", "gpt-oss.block_count": 24,
                    "gpt-oss.embedding_length": 2880, "gpt-oss.attention.head_count": 64,
                    "gpt-oss.attention.head_count_kv": 8, "gpt-oss.attention.key_length": 64,
                    "gpt-oss.attention.sliding_window": 128, "gpt-oss.vocab_size": 201088,
                    "gpt-oss.expert_count": 32, "gpt-oss.expert_used_count": 4},
}




def _gemma4(n_layers: int, period: int, **keys: object) -> dict[str, object]:
    """Gemma 4 keys as llama.cpp's Gemma4Model writes them: `period - 1` sliding layers, then a
    global one, over and over."""
    pattern = tuple((i + 1) % period != 0 for i in range(n_layers))
    meta: dict[str, object] = {"general.architecture": "gemma4", "gemma4.block_count": n_layers,
                               "gemma4.attention.sliding_window_pattern": pattern,
                               "gemma4.attention.key_length": 512,
                               "gemma4.attention.value_length": 512,
                               "gemma4.attention.key_length_swa": 256,
                               "gemma4.attention.value_length_swa": 256,
                               "gemma4.vocab_size": 262144}
    kv = keys.pop("kv", None)
    if isinstance(kv, tuple):  # (sliding, global) KV heads: one entry per layer
        meta["gemma4.attention.head_count_kv"] = tuple(kv[0] if swa else kv[1] for swa in pattern)
    meta.update({f"gemma4.{k.replace('__', '.')}": v for k, v in keys.items()})
    return meta


def _nemotron_h(mixers: str, ffns: str) -> dict[str, object]:
    """Nemotron-H keys as llama.cpp's NemotronHModel writes them: per-layer KV heads and FFN
    widths, 0 where a layer has none (Mamba-2 where both are 0)."""
    return {"general.architecture": "nemotron_h", "nemotron_h.block_count": len(mixers),
            "nemotron_h.embedding_length": 4480, "nemotron_h.attention.head_count": 40,
            "nemotron_h.attention.head_count_kv": tuple(8 if m == "A" else 0 for m in mixers),
            "nemotron_h.attention.key_length": 128,
            "nemotron_h.feed_forward_length": tuple(15680 if f == "D" else 0 for f in ffns),
            "nemotron_h.ssm.inner_size": 10240, "nemotron_h.ssm.state_size": 128,
            "nemotron_h.ssm.group_count": 8, "nemotron_h.ssm.time_step_rank": 128,
            "nemotron_h.ssm.conv_kernel": 4, "nemotron_h.vocab_size": 131072,
            "nemotron_h.context_length": 131072}


def _qwen35(arch: str, n_layers: int, hidden: int, heads: int, kv: int, v_heads: int,
            **keys: object) -> dict[str, object]:
    """Qwen3.5 / 3.6 keys as llama.cpp's Qwen3_5 converters write them (Gated DeltaNet with
    16 key heads of 128 and `v_heads` value heads of 128; full attention every 4th layer)."""
    meta: dict[str, object] = {
        "general.architecture": arch, f"{arch}.block_count": n_layers,
        f"{arch}.embedding_length": hidden, f"{arch}.attention.head_count": heads,
        f"{arch}.attention.head_count_kv": kv, f"{arch}.attention.key_length": 256,
        f"{arch}.full_attention_interval": 4, f"{arch}.ssm.group_count": 16,
        f"{arch}.ssm.state_size": 128, f"{arch}.ssm.time_step_rank": v_heads,
        f"{arch}.ssm.inner_size": 128 * v_heads, f"{arch}.ssm.conv_kernel": 4,
        f"{arch}.vocab_size": 248320, f"{arch}.context_length": 262144}
    meta.update({f"{arch}.{k}": v for k, v in keys.items()})
    return meta


# The 2026 layouts, each as its config.json gives it (google/gemma-4-*, Qwen/Qwen3.6-*,
# nvidia/NVIDIA-Nemotron-Nano-9B-v2): the same caches as the catalog's architecture.
LAYOUT_METADATA = {
    "gemma-4-26b-a4b": _gemma4(30, 6, kv=(8, 2), embedding_length=2816, attention__head_count=16,
                               attention__sliding_window=1024, feed_forward_length=2112,
                               expert_count=128, expert_used_count=8,
                               expert_feed_forward_length=704),
    "gemma-4-31b": _gemma4(60, 6, kv=(16, 4), embedding_length=5376, attention__head_count=32,
                           attention__sliding_window=1024, feed_forward_length=21504),
    "gemma-4-e2b": _gemma4(35, 5, embedding_length=1536, attention__head_count=8,
                           attention__head_count_kv=1, attention__sliding_window=512,
                           attention__shared_kv_layers=20, embedding_length_per_layer_input=256,
                           feed_forward_length=(6144,) * 15 + (12288,) * 20),
    "qwen3-6-35b-a3b": _qwen35("qwen35moe", 40, 2048, 16, 2, 32, expert_count=256,
                               expert_used_count=8, expert_feed_forward_length=512,
                               expert_shared_feed_forward_length=512),
    "qwen3-6-27b": _qwen35("qwen35", 64, 5120, 24, 4, 48, feed_forward_length=17408),
    "nvidia-nemotron-nano-9b-v2": _nemotron_h(
        "M-M-M-MM-M-M-MA-M-M-MA-M-M-M-MA-M-M-M-MA-M-MM-M-M-M-M-M-",
        "-D-D-D--D-D-D--D-D-D--D-D-D-D--D-D-D-D--D-D--D-D-D-D-D-D"),
}


def _assert_catalog_caches(arch: Architecture | None, why: str, slug: str) -> None:
    """`arch` (read from a GGUF header) holds the same KV cache at 4k and 128k, and the same
    recurrent state, as the catalog's architecture of `slug`; a hybrid's state is not 0."""
    from tpscalc.catalog import get_model
    from tpscalc.estimate.memory import kv_cache_bytes, recurrent_state_bytes

    catalog = get_model(slug).architecture
    assert arch is not None and catalog is not None, why
    for context in (4096, 131072):
        assert kv_cache_bytes(arch, context) == kv_cache_bytes(catalog, context)
    assert recurrent_state_bytes(arch) == recurrent_state_bytes(catalog)
    assert recurrent_state_bytes(arch) > 0 or not catalog.linear_attention_layers


@pytest.mark.parametrize("slug", sorted({**GGUF_METADATA, **LAYOUT_METADATA}))
def test_gguf_metadata_gives_the_catalog_caches(slug: str, tmp_path: Path) -> None:
    meta = {**GGUF_METADATA, **LAYOUT_METADATA}[slug]
    _assert_catalog_caches(*architecture(GgufHeader(tmp_path / "m.gguf", 3, meta, (), 0)), slug)


def test_gemma4_global_layers_without_v_share_k(tmp_path: Path) -> None:
    """attention_k_eq_v: llama.cpp's global layers have no attn_v tensor."""
    meta = LAYOUT_METADATA["gemma-4-31b"]
    names = ("blk.0.attn_v.weight", "blk.5.attn_k.weight")
    tensors = tuple(TensorInfo(n, (256, 256), "F16", 65536, 131072) for n in names)
    arch, why = architecture(GgufHeader(tmp_path / "m.gguf", 3, meta, tensors, 0))
    assert arch is not None and arch.global_k_eq_v, why
    with_v = (*tensors, TensorInfo("blk.5.attn_v.weight", (256, 256), "F16", 65536, 131072))
    arch, why = architecture(GgufHeader(tmp_path / "m.gguf", 3, meta, with_v, 0))
    assert arch is not None and not arch.global_k_eq_v, why


def test_a_2026_layout_with_missing_keys_is_approximated_and_says_why(tmp_path: Path) -> None:
    meta = {k: v for k, v in LAYOUT_METADATA["qwen3-6-27b"].items() if "ssm." not in k}
    arch, why = architecture(GgufHeader(tmp_path / "m.gguf", 3, meta, (), 0))
    assert arch is None and "ssm" in why
    meta = {k: v for k, v in LAYOUT_METADATA["gemma-4-31b"].items() if "pattern" not in k}
    arch, why = architecture(GgufHeader(tmp_path / "m.gguf", 3, meta, (), 0))
    assert arch is None and "sliding_window_pattern" in why


def test_a_gemma4_file_gets_its_cache_from_the_metadata(tmp_path: Path,
                                                         write_gguf: Writer) -> None:
    """Through the CLI: a Gemma 4 GGUF (one sliding layer of 16-wide heads, one global layer
    of 32-wide heads with one KV head) is no longer approximated, and its cache is the two
    layers' own sizes."""
    path = tmp_path / "gemma4.gguf"
    write_gguf(path, arch="gemma4", sliding_window=8, keys={
        "attention.sliding_window_pattern": [True, False], "attention.key_length": 32,
        "attention.key_length_swa": 16, "attention.head_count_kv": [2, 1]})
    data = _estimate(path, "--context", "1024")
    assert _memory(data)["approximated"] is False
    assert "gemma4" in str(data["sources"])
    arch, why = architecture(read_header(path))
    assert arch is not None, why
    # f16 K and V: the sliding layer keeps its window and a micro-batch (8 + 512, padded to
    # 256: 768 cells) of 2 heads × 16, the global layer all 1024 of 1 head × 32
    expected = 2 * 2 * (768 * 2 * 16 + 1024 * 1 * 32)
    from tpscalc.estimate.memory import kv_cache_bytes
    assert kv_cache_bytes(arch, 1024) == expected


def test_nemotron_3_layers_come_from_their_tensors(tmp_path: Path) -> None:
    """nemotron_h_moe (NVIDIA-Nemotron-3-Nano-30B-A3B): attention where blk.N.attn_q is,
    Mamba-2 where blk.N.ssm_in is, routed experts where blk.N.ffn_up_exps is."""
    mixers = "M-M-MA-M-M-MA-M-M-MA-M-M-MA-M-M-MA-M-M-M-MA-M-M-M-M-"
    ffns = "-E-E--E-E-E--E-E-E--E-E-E--E-E-E--E-E-E-E--E-E-E-E-E"
    role = {"A": "attn_q", "M": "ssm_in", "E": "ffn_up_exps"}
    names = [f"blk.{i}.{role[c]}.weight" for s in (mixers, ffns) for i, c in enumerate(s)
             if c in role]
    tensors = tuple(TensorInfo(n, (64, 64), "F16", 4096, 8192) for n in names)
    a = "nemotron_h_moe"
    meta = {"general.architecture": a, f"{a}.block_count": 52, f"{a}.embedding_length": 2688,
            f"{a}.attention.head_count": 32, f"{a}.attention.head_count_kv": 2,
            f"{a}.attention.key_length": 128, f"{a}.ssm.inner_size": 4096,
            f"{a}.ssm.state_size": 128, f"{a}.ssm.group_count": 8,
            f"{a}.ssm.time_step_rank": 64, f"{a}.ssm.conv_kernel": 4, f"{a}.vocab_size": 131072,
            f"{a}.expert_count": 128, f"{a}.expert_used_count": 6}
    arch, why = architecture(GgufHeader(tmp_path / "m.gguf", 3, meta, tensors, 0))
    _assert_catalog_caches(arch, why, "nvidia-nemotron-3-nano-30b-a3b")
    assert arch is not None and (arch.layer_mixers, arch.layer_ffns) == (mixers, ffns)
    arch, why = architecture(GgufHeader(tmp_path / "m.gguf", 3, meta, (), 0))
    assert arch is None and "ssm_in" in why
