"""The models released after Epoch AI's last record (tools/recent_models.py): taken from
llmfit's HF list, one entry per model, pages that say so, native formats, honest KV caches."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tpscalc.catalog import get_card, get_model, store
from tpscalc.catalog.schema import Model
from tpscalc.estimate import engine
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.runtime import LLAMA_CPP

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT  # holds data/: the public data, in the repository
sys.path.insert(0, str(ROOT / "tools"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tpscalc", *args], capture_output=True,
                          text=True, timeout=180, check=False)


def recent() -> list[Model]:
    return [m for m in store.models() if not m.in_epoch_data]


def test_at_least_100_models_from_2026() -> None:
    dated = [m for m in recent() if "2026-01" <= (m.publication_date or "") < "2026-11"]
    assert len(dated) >= 100


@pytest.mark.parametrize("name", [
    "gemma-4-E2B", "gemma-4-E4B", "gemma-4-12B", "gemma-4-26B-A4B", "gemma-4-31B",
    "Qwen3.5-0.8B", "Qwen3.5-397B-A17B", "Qwen3.6-27B", "Qwen3.6-35B-A3B", "Qwen3.8-27B",
    "GLM-4.7-Flash", "GLM-5", "GLM-5.1", "DeepSeek-V4-Flash", "DeepSeek-V4-Pro",
    "MiniMax-M2.5", "MiniMax-M2.7", "Kimi-K2.6", "NVIDIA-Nemotron-3-Nano-30B-A3B",
    "NVIDIA-Nemotron-3-Super-120B-A12B",
])
def test_the_named_2026_models_are_in(name: str) -> None:
    model = get_model(name)
    assert model.name == name and not model.in_epoch_data
    assert model.hf_repo and model.record["link"][0] == f"https://huggingface.co/{model.hf_repo}"


def test_base_and_instruct_are_one_model_and_copies_are_none() -> None:
    names = {m.name for m in recent()}
    gemma = get_model("gemma-4-31B")
    assert gemma.record["hugging_face_checkpoints"] == ["google/gemma-4-31B-it",
                                                        "google/gemma-4-31B"]
    assert not any(n.endswith(("-FP8", "-NVFP4", "-it", "-Base", "-GGUF")) for n in names)
    assert not any("DFlash" in n or "Eagle" in n or "assistant" in n for n in names)
    assert "NVFP4" in get_model("Qwen3.6-27B").record["published_formats"]


def test_models_search_lists_gemma_4_and_qwen3_6() -> None:
    gemma = json.loads(_cli("models", "--search", "gemma 4", "--json").stdout)
    assert len(gemma) >= 4
    qwen = json.loads(_cli("models", "--search", "qwen3.6", "--json").stdout)
    assert len([m for m in qwen if m.get("architecture")]) >= 2


def test_the_json_and_the_page_say_not_in_epoch_and_link_hugging_face() -> None:
    from tpscalc import api
    from tpscalc.report.serialize import report_json

    report = api.model_report("Qwen3.6-27B", search="RTX 4090")
    data = report_json(report)
    assert data["model"]["in_epoch_data"] is False
    assert data["model"]["hf_url"] == "https://huggingface.co/Qwen/Qwen3.6-27B"
    assert "Not yet in Epoch AI's data" in data["source_note"]
    assert any("huggingface.co/Qwen/Qwen3.6-27B" in n for n in data["notes"])
    epoch = report_json(api.model_report("Llama 3-8B", search="RTX 4090"))
    assert epoch["model"]["in_epoch_data"] is True and epoch["source_note"] is None


def test_the_site_page_says_it_too() -> None:
    from fastapi.testclient import TestClient

    from tpscalc.web.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as client:
        page = client.get(f"/en/models/{get_model('Qwen3.6-27B').slug}")
        assert page.status_code == 200
        assert "Not yet in Epoch AI&#39;s data" in page.text or "Not yet in Epoch AI's data" in \
            page.text
        assert 'href="https://huggingface.co/Qwen/Qwen3.6-27B"' in page.text
        es = client.get(f"/es/models/{get_model('Qwen3.6-27B').slug}").text
        assert "Aún no está en los datos de Epoch AI" in es


def test_gated_deltanet_kv_is_computed_from_the_config() -> None:
    """Qwen3.5-27B's config states its layer pattern: 48 of 64 layers are Gated DeltaNet."""
    model = get_model("Qwen3.5-27B")
    arch = model.architecture
    assert arch is not None and not arch.approximated
    assert arch.linear_attention_layers == 48 and arch.linear_num_value_heads
    full = arch.model_copy(update={"linear_attention_layers": 0})
    kv, kv_full = (LLAMA_CPP.kv_cache_bytes(a, 32768, "f16") for a in (arch, full))
    assert kv < kv_full / 3  # 16 attention layers' cache, plus the fixed recurrent state


def test_sliding_window_kv_is_computed_where_a_config_states_it() -> None:
    arch = get_model("gemma-4-26B-A4B").architecture
    assert arch is not None and not arch.approximated
    assert arch.sliding_window and arch.sliding_window_layers == 25


@pytest.mark.parametrize(("name", "word"), [
    ("gemma-4-12B", "sliding-window"), ("Qwen3.8-2.4T-A95B", "linear attention"),
])
def test_an_unstated_pattern_is_flagged_with_its_reason(name: str, word: str) -> None:
    from tpscalc import api
    from tpscalc.report.serialize import report_json

    model = get_model(name)
    assert model.architecture is not None and model.architecture.approximated
    estimate = engine.estimate(model, Rig.of(get_card("H100 SXM5 80 GB")), Query())
    assert estimate.memory.approximated
    data = report_json(api.model_report(name, search="H100 SXM5"))
    assert any(word in reason for reason in data["approximation_reasons"])


def test_a_qat_model_defaults_to_q4_0() -> None:
    model = get_model("gemma-4-31B-it-qat-q4_0")
    assert LLAMA_CPP.native_format(model) == LLAMA_CPP.formats(model)[0] == "Q4_0"
    assert engine.estimate(model, Rig.of(get_card("H100 SXM5 80 GB")), Query()).quant == "Q4_0"
    plain = get_model("gemma-4-31B")  # the same shape without QAT tops its ladder at Q8_0
    assert engine.estimate(plain, Rig.of(get_card("H100 SXM5 80 GB")), Query()).quant == "Q8_0"


def test_fp8_releases_top_their_ladder_with_q8_0_and_say_why() -> None:
    model = get_model("MiniMax-M2.5")
    assert LLAMA_CPP.native_format(model) == "Q8_0"
    assert model.record["native_format_basis"] == "fp8_config"
    from tpscalc.report import provenance

    why = provenance.native_reason(model, lambda text: text)
    assert why is not None and "FP8" in why and "Q8_0" in why


def test_tq1_0_is_accepted_for_a_bitnet_model() -> None:
    model = get_model("bitnet-b1.58-2B-4T")
    assert LLAMA_CPP.native_format(model) == "TQ2_0"
    done = _cli("estimate", "--model", model.name, "--gpu", "GeForce RTX 4090",
                "--quant", "TQ1_0", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["quant"] == "TQ1_0"
    tq2 = LLAMA_CPP.weights_bytes(model, "TQ2_0")[0]
    assert 0 < data["memory"]["weights_gib"] * 2**30 < tq2


def test_names_of_checkpoints_and_copies() -> None:
    import recent_models as rm

    assert rm.split_copy("Qwen3.5-122B-A10B-GPTQ-Int4") == ("Qwen3.5-122B-A10B", ["GPTQ", "INT4"])
    assert rm.split_copy("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")[1] == []
    assert rm.model_key("gemma-4-26B-A4B-it") == rm.model_key("gemma-4-26B-A4B") \
        == rm.model_key("Gemma-4-26B-A4B-NVFP4")
    assert rm.display_name("gemma-4-31B-it-qat-q4_0-unquantized") == "gemma-4-31B-it-qat-q4_0"
    assert rm.family_owner("qwen3_5") == "qwen" and rm.family_owner("youtu") is None


@pytest.mark.skipif(not SHARED.exists(), reason="shared data not present")
def test_a_newer_epoch_csv_takes_over_a_model(tmp_path: Path) -> None:
    """Re-running the build with an Epoch CSV that has GLM-5 takes it from Epoch: not twice."""
    import epoch
    import recent_models as rm

    source = SHARED / "data" / "sources" / "epoch" / "all_ai_models.csv"
    with source.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        row = next(r for r in reader if epoch.is_open_language_model(r))
    newer = dict(row, **{"Model": "GLM-5", "Publication date": "2026-02-11",
                         "Link": "https://huggingface.co/zai-org/GLM-5",
                         "Parameters": "744000000000"})
    path = tmp_path / "all_ai_models.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows([row, newer])
    recs = epoch.open_language_models(path, minimum=2)
    llmfit = json.loads((SHARED / "data" / "sources" / "llmfit_hf_models_v1.1.17.json")
                        .read_text())
    sel = rm.select(llmfit, recs, rm.load_rules())
    names = {rm.display_name(g.primary["name"].split("/", 1)[1]) for g in sel.groups}
    assert "GLM-5" not in names and "GLM-5.1" in names
    assert sel.skipped["zai-org/GLM-5"].startswith("already in Epoch AI's data")
    assert sel.cutoff == "2026-02-11" and sel.since == "2025-12-01"
    assert "GLM-4.7-Flash" in names  # before the new last record, but Epoch still lacks it


def test_deepseek_v4_compressed_kv_is_computed_from_its_ratios() -> None:
    """The config's compress_ratios are modelled, so V4-Flash is no longer approximated."""
    arch = get_model("DeepSeek-V4-Flash").architecture
    assert arch is not None and arch.compress_ratios and not arch.approximated


@pytest.mark.parametrize("name", ["Mistral-Small-4-119B-2603", "Leanstral-1.5-119B-A6B"])
def test_mistral_small_4_is_latent_attention_with_a_shared_expert(name: str) -> None:
    """mistral4 (transformers Mistral4Config): MLA of rank 256 + rope 64, 128 experts top-4 + 1
    shared; its KV cache at 32k is 36 layers x 320 values x 2 bytes per token: 0.70 GiB."""
    arch = get_model(name).architecture
    assert arch is not None and not arch.approximated
    assert (arch.kv_lora_rank, arch.qk_rope_head_dim, arch.num_shared_experts) == (256, 64, 1)
    assert LLAMA_CPP.kv_cache_bytes(arch, 32768, "f16") == 36 * 32768 * 320 * 2


@pytest.mark.parametrize(("name", "sliding", "window"), [
    ("North-Mini-Code-1.0", 36, 4096), ("Laguna-XS.2", 30, 512), ("Laguna-XS-2.1", 30, 512),
    ("Laguna-S-2.1", 36, 512), ("Olmo 3", 48, 4096), ("Olmo-3.1-32B", 48, 4096),
    ("SimPO", 21, 4096), ("EXAONE-4.5-33B", 48, 4096),
])
def test_sliding_window_layouts_come_from_their_sources(name: str, sliding: int,
                                                        window: int) -> None:
    """The hand-kept rows with their sources: North Mini Code's config (layer_types full where
    i % 4 == 0: 13 full, 36 sliding of 4096; one dense first layer of FFN 3072), the Laguna
    cards (a quarter of the layers global, the rest a 512-token window), Olmo 3 32B's config
    (3 sliding of 4096 + 1 full, x 16) and Gemma 2 for its fine-tune SimPO. At 32k tokens their
    KV cache is that of the full layers plus a window per sliding layer, not 32k on each."""
    arch = get_model(name).architecture
    assert arch is not None and not arch.approximated
    assert (arch.sliding_window_layers, arch.sliding_window) == (sliding, window)
    full = arch.model_copy(update={"sliding_window_layers": 0, "sliding_window": None})
    kv, kv_full = (LLAMA_CPP.kv_cache_bytes(a, 32768, "f16") for a in (arch, full))
    held = (arch.num_layers - sliding + sliding * (window + 2048) / 32768) / arch.num_layers
    assert kv_full * 0.2 < kv < kv_full * held  # a sliding layer holds its window and a batch
    if name == "North-Mini-Code-1.0":
        assert (arch.first_dense_layers, arch.intermediate_size) == (1, 3072)


@pytest.mark.parametrize("name", ["GLM-Z1-32B-0414", "GLM-Z1-9B-0414"])
def test_glm4_0414_is_plain_attention_like_its_chat_twin(name: str) -> None:
    """glm4 has grouped-query attention on every layer (transformers' Glm4DecoderLayer): the
    reasoning models take llmfit's facts unflagged, as GLM-4-32B-0414 and GLM-4-9B-0414 do."""
    arch = get_model(name).architecture
    assert arch is not None and not arch.approximated
    assert not arch.sliding_window_layers and not arch.linear_attention_layers


@pytest.mark.parametrize(("name", "layers", "kv_heads"), [
    ("Qwen3.5-0.8B", 24, 2), ("Qwen3.5-2B", 24, 2), ("Qwen3.5-4B", 32, 4), ("Qwen3.5-9B", 32, 4),
    ("Qwen3.8-27B", 64, 4),
])
def test_the_small_qwen3_5_models_have_their_hybrid_layout(name: str, layers: int,
                                                           kv_heads: int) -> None:
    """Their text configs (tools/data/recent_architectures.csv, with sources): every 4th layer
    full attention with KV heads of 256, the rest Gated DeltaNet. Qwen3.5-9B's cache at 128k
    is 8 full layers x 2 x 4 x 256 x 2 B per token, about 4 GiB, not 32 layers' 16 GiB; before,
    without an architecture, its memory came from the parameter count, vision tower included."""
    arch = get_model(name).architecture
    assert arch is not None and not arch.approximated
    assert (arch.num_layers, arch.linear_attention_layers, arch.num_kv_heads, arch.head_dim) == (
        layers, layers * 3 // 4, kv_heads, 256)
    kv = LLAMA_CPP.kv_cache_bytes(arch, 131072, "f16")
    attention_only = layers // 4 * 2 * kv_heads * 256 * 2 * 131072
    assert attention_only <= kv < attention_only * 1.1  # plus the fixed recurrent state


def test_nemotron_3_super_and_ultra_are_latent_moe() -> None:
    """Their verbatim configs (aiconfigurator) set moe_latent_size: the 512 routed experts read
    and write a 1024- (Super) or 2048-wide latent, so Super counts 120.7 B without its MTP layer
    (123.6 B in llmfit's count), 12.2 B active (its name's A12B); at the hidden width its
    experts alone would be 451 B."""
    super_, ultra = (get_model(n).architecture for n in (
        "NVIDIA-Nemotron-3-Super-120B-A12B", "NVIDIA-Nemotron-3-Ultra-550B-A55B"))
    assert super_ is not None and ultra is not None
    assert (super_.moe_latent_size, ultra.moe_latent_size) == (1024, 2048)
    assert 0.95 < super_.params_total / 123.6e9 < 1.0 and 11.5e9 < super_.params_active < 13e9
    assert 0.95 < ultra.params_total / 560.5e9 < 1.0 and 52e9 < ultra.params_active < 58e9
    assert super_.num_shared_experts == 2  # one shared expert of 5376 = 2 x 2688


@pytest.mark.parametrize(("name", "params"), [
    ("NVIDIA-Nemotron-3-Nano-30B-A3B", 31_577_937_344),  # its verbatim config
    ("NVIDIA-Nemotron-3-Nano-4B", 3_973_556_832),  # the hand row's config fields
])
def test_nemotron_3_counts_are_the_releases(name: str, params: int) -> None:
    """The shared expert is moe_shared_expert_intermediate_size wide (Nano 30B: 3712, twice an
    expert), so the count is llmfit's safetensors count of the release to the parameter."""
    arch = get_model(name).architecture
    assert arch is not None and arch.params_total == params


def test_glm_4_5v_is_glm_4_5_air_with_its_shared_expert() -> None:
    """GLM-4.5V's language model is GLM-4.5-Air: its verbatim config gives the dense first layer
    and the shared expert llmfit's facts lacked, so the model is no longer approximated."""
    v, air = (get_model(n).architecture for n in ("GLM-4.5V", "GLM-4.5-Air"))
    assert v is not None and air is not None and not v.approximated
    assert (v.num_shared_experts, v.first_dense_layers) == (1, 1)
    assert v.params_total == air.params_total
