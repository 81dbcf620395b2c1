"""--config: a Hugging Face config.json gives the catalog's shape, KV cache and weights."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpscalc import api
from tpscalc.cli.main import app
from tpscalc.sources import SourceError
from tpscalc.sources.hf_config import read_config

DATA = Path(__file__).parent / "data"  # copies of ../shared/data/sources/aiconfigurator_*
runner = CliRunner()


@pytest.mark.parametrize("config, catalog_slug", [
    ("Qwen--Qwen3-8B_config.json", "qwen3-8b"),
    ("openai--gpt-oss-20b_config.json", "gpt-oss-20b"),  # sliding window on half the layers
    ("deepseek-ai--DeepSeek-V3_config.json", "deepseek-v3"),  # multi-head latent attention
])
def test_a_stored_config_gives_the_catalog_kv_cache(config: str, catalog_slug: str) -> None:
    for context in (4096, 32768):  # Qwen3-8B's config holds 40,960
        mine = api.evaluate(None, "H100 SXM5 80 GB", quant="Q4_K_M", context=context,
                            config=DATA / config)
        catalog = api.evaluate(catalog_slug, "H100 SXM5 80 GB", quant="Q4_K_M", context=context)
        assert mine["memory"]["kv_cache_gib"] == catalog["memory"]["kv_cache_gib"]
        assert mine["memory"]["weights_gib"] == pytest.approx(catalog["memory"]["weights_gib"],
                                                              rel=0.001)
        assert mine["sources"]["kv_cache"] == f"config {config}"


def test_the_cli_names_where_facts_came_from() -> None:
    result = runner.invoke(app, ["estimate", "--config", str(DATA / "Qwen--Qwen3-8B_config.json"),
                                 "--gpu", "4090", "--json"])
    assert result.exit_code == 0, result.output
    sources = json.loads(result.stdout)["sources"]
    assert sources["card"] == "catalog" and "config" in sources["architecture"]


def test_a_safetensors_index_gives_the_parameter_count(tmp_path: Path) -> None:
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 16_381_470_720}, "weight_map": {}}))
    sm = read_config(DATA / "Qwen--Qwen3-8B_config.json", index)
    assert sm.model.parameters_total == 16_381_470_720 // 2  # bfloat16: 2 bytes a parameter
    assert "total_size" in sm.sources["parameters"]


@pytest.mark.parametrize("text, words", [
    ('{"model_type": "llama", "hidden_size": 4096}', "lacks num_hidden_layers"),
    ("not json at all", "not JSON"),
    ("[1, 2]", "not a config object"),
    ('{"model_type": "mamba", "num_hidden_layers": 2}', "does not read yet"),
    (('{"model_type": "qwen3_moe", "num_hidden_layers": 2, "hidden_size": 64, '
      '"num_attention_heads": 4, "vocab_size": 100, "num_experts": 4, '
      '"moe_intermediate_size": 8, "moe_latent_size": 1000000000}'), "moe_latent_size"),
])
def test_bad_configs_end_with_one_line_and_exit_2(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    result = runner.invoke(app, ["estimate", "--config", str(path), "--gpu", "4090"])
    assert result.exit_code == 2 and words in result.output
    assert result.output.count("\n") == 1


def test_a_missing_config_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot read"):
        read_config(tmp_path / "nope.json")


def test_a_model_and_a_file_together_are_refused() -> None:
    result = runner.invoke(app, ["estimate", "--model", "qwen3-8b", "--config",
                                 str(DATA / "Qwen--Qwen3-8B_config.json"), "--gpu", "4090"])
    assert result.exit_code == 2 and "not a model name and --config" in result.output


def test_a_config_json_is_named_after_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "Qwen3-8B"
    folder.mkdir()
    (folder / "config.json").write_bytes((DATA / "Qwen--Qwen3-8B_config.json").read_bytes())
    assert read_config(folder / "config.json").model.name == "Qwen3-8B"


def test_nemotron_h_shared_width_latent_and_block_list() -> None:
    """moe_shared_expert_intermediate_size counts the shared expert in expert widths (Nemotron 3:
    one shared expert twice as wide), moe_latent_size is kept, and a config that lists its blocks
    (`layers_block_type`, no num_hidden_layers) has as many layers as it lists."""
    from tpscalc.sources.hf_config import moe_fields, shape_fields

    cfg = {"model_type": "nemotron_h", "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 131072,
           "layers_block_type": ["mamba", "moe", "attention", "moe"], "n_routed_experts": 512,
           "num_experts_per_tok": 22, "moe_intermediate_size": 2688, "n_shared_experts": 1,
           "moe_shared_expert_intermediate_size": 5376, "moe_latent_size": 1024}
    moe = moe_fields(cfg)
    assert (moe["num_shared_experts"], moe["moe_latent_size"]) == (2, 1024)
    fields = shape_fields(cfg, "test")
    assert isinstance(fields, dict) and fields["num_layers"] == 4
    assert moe_fields({**cfg, "moe_latent_size": None}).get("moe_latent_size") is None
    qwen_style = {"num_experts": 64, "moe_intermediate_size": 512,
                  "shared_expert_intermediate_size": 1024}  # no n_shared_experts: 2 widths
    assert moe_fields(qwen_style)["num_shared_experts"] == 2
