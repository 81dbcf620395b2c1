"""The measured rows of data/measured/llamacpp_extra_calibration.csv: sourced, unique, and
loaded by tools/calibration_data.py on the cards and models they name."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from calibration_data import EXTRA_CSV, EXTRA_GPUS, EXTRA_MODELS, extra_rows, ubatch_of

from tpscalc.catalog import get_card, get_model

ROWS = list(csv.DictReader(EXTRA_CSV.open(encoding="utf-8")))


def _key(r: dict[str, str]) -> tuple[str, ...]:
    """What makes two rows the same measurement (the test name without its spaces)."""
    return (r["gpu"], r["n_gpus"], r["backend"], r["runtime"], r["model"], r["quant"],
            r["test"].replace(" ", ""), r["split_mode"], r["ngl"], r["offload_notes"],
            r["flash_attn"])


def test_every_row_has_a_source_and_a_positive_speed() -> None:
    assert all(r["source"].strip() and float(r["tokens_per_s"]) > 0 for r in ROWS)


def test_no_measurement_is_entered_twice() -> None:
    keys = [_key(r) for r in ROWS]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("label", sorted(EXTRA_MODELS))
def test_each_model_label_maps_to_a_catalog_architecture(label: str) -> None:
    assert any(r["model"].startswith(label) for r in ROWS)
    assert getattr(get_model(EXTRA_MODELS[label]), "architecture", None) is not None


@pytest.mark.parametrize("prefix", sorted(EXTRA_GPUS))
def test_each_gpu_label_maps_to_a_catalog_card(prefix: str) -> None:
    assert any(r["gpu"].startswith(prefix) for r in ROWS)
    assert get_card(EXTRA_GPUS[prefix]).name == EXTRA_GPUS[prefix]


def test_strix_halo_rows_load_on_both_backends_at_depth_and_in_prompts() -> None:
    """kyuz0/amd-strix-halo-toolboxes: ROCm and Vulkan, pp and tg, depth 0 to 65536."""
    obs = [o for o in extra_rows(get_card, get_model)
           if o.card.name == "Ryzen AI Max+ 395 (Radeon 8060S)" and "kyuz0" in o.source]
    assert {(o.backend, o.kind) for o in obs} == {
        (b, k) for b in ("rocm", "vulkan") for k in ("decode", "prefill")}
    assert {o.depth for o in obs} == {0, 32768, 65536}
    assert sum(o.is_moe and o.kind == "prefill" for o in obs) >= 20


def test_the_amd_pull_request_rows_load_with_their_cards_depths_and_micro_batches() -> None:
    """The nineteenth session's deep prompts of AMD cards from llama.cpp pull requests: the RX
    9060 XT on the 16 GB board, the RX 7900 XTX at micro-batches 512 and 1024, the Strix Halo's
    Qwen3.6-35B-A3B sweep at -ub 2048 from depth 0 to 65,536."""
    obs = [o for o in extra_rows(get_card, get_model)
           if any(f"pull {n}" in o.source for n in (28102, 26284, 22880, 26419))]
    assert len(obs) == 17
    by_card = {o.card.name for o in obs}
    assert by_card == {"Radeon RX 9060 XT 16 GB", "Radeon RX 7900 XTX",
                       "Ryzen AI Max+ 395 (Radeon 8060S)"}
    rx9060 = [o for o in obs if o.card.name == "Radeon RX 9060 XT 16 GB"]
    assert {o.depth for o in rx9060} == {4096, 8192, 16384, 32768}
    assert all(o.model == "Llama 3.1-8B" and o.quant == "Q4_0" and o.flash_attn for o in rx9060)
    xtx = [o for o in obs if o.card.name == "Radeon RX 7900 XTX" and o.kind == "prefill"]
    assert sorted(o.ubatch for o in xtx) == [512, 512, 1024, 1024]
    sweep = [o for o in obs if o.model == "Qwen3.6-35B-A3B"]
    assert {o.depth for o in sweep} == {0, 2048, 8192, 16384, 32768, 65536}
    assert {o.ubatch for o in sweep} == {2048}


@pytest.mark.parametrize(("runtime", "ubatch"), [
    ("llama.cpp build 1a68ec937 (9193) (ROCm 7.2.3; -mmap 0; -ub 2048)", 2048),
    ("llama.cpp build 1a68ec937 (9193) (ROCm 7.2.3; -mmap 0)", 512),
    ("llama.cpp (llama-bench -ngl 99)", 512),
])
def test_a_rows_micro_batch_is_its_ub_option_else_llama_cpps_default(runtime: str,
                                                                     ubatch: int) -> None:
    assert ubatch_of(runtime) == ubatch


def test_a_deep_prompt_run_with_ub_2048_has_a_quarter_of_the_expert_gemms_per_token() -> None:
    """kyuz0's deep ROCm prompts ran with -ub 2048: one micro-batch of 2048 rows, so each
    expert GEMM holds 4 × the rows and a token pays a quarter of the GEMMs of -ub 512."""
    obs = [o for o in extra_rows(get_card, get_model)
           if o.card.name == "Ryzen AI Max+ 395 (Radeon 8060S)" and o.kind == "prefill"
           and o.model == "Qwen3.6-35B-A3B" and o.quant == "Q4_K_M" and "kyuz0" in o.source]
    deep = {o.backend: o for o in obs if o.depth == 32768}
    assert (deep["rocm"].ubatch, deep["vulkan"].ubatch) == (2048, 512)
    assert deep["rocm"].expert_gemms == pytest.approx(deep["vulkan"].expert_gemms / 4, rel=1e-6)
    assert deep["rocm"].expert_batch == pytest.approx(4 * deep["vulkan"].expert_batch)


def test_the_dgx_spark_runs_are_at_their_printed_micro_batch_of_2048() -> None:
    """ggml-org/llama.cpp benches/dgx-spark.md prints n_ubatch 2048 in every llama-bench table,
    and the DGX Spark run it quotes (discussion #16578) ran `-ub 2048`: the GB10's expert GEMMs
    hold 4 × the rows of a 512-token micro-batch (64 for gpt-oss-120b, not 16)."""
    obs = [o for o in extra_rows(get_card, get_model) if o.card.name == "GB10"]
    assert obs and {o.ubatch for o in obs if o.kind == "prefill"} == {2048}
    oss = [o for o in obs if o.kind == "prefill" and o.model == "gpt-oss-120b"]
    assert oss and all(o.expert_batch == pytest.approx(2048 * 4 / 128) for o in oss)


def test_a_file_of_another_mix_than_llama_cpps_own_is_read_at_its_printed_size() -> None:
    from calibration_data import GIB, MIX_TOLERANCE, model_facts
    own = model_facts("Qwen3.6-27B", "Q8_0", None, get_model)
    assert own is not None and own.bytes_source == "architecture"
    near = model_facts("Qwen3.6-27B", "Q8_0", own.weights_bytes / GIB * (1 + MIX_TOLERANCE / 2),
                       get_model)
    assert near is not None and near.read_bytes == own.read_bytes
    # Unsloth's UD-Q8_K_XL as kyuz0's Strix Halo rows ran it: 33.31 GiB, 25 % over a Q8_0
    ud = model_facts("Qwen3.6-27B", "Q8_0", 33.31, get_model)
    assert ud is not None and ud.bytes_source == "architecture scaled to the file"
    assert ud.weights_bytes == pytest.approx(33.31 * GIB)
    assert ud.read_bytes / own.read_bytes == pytest.approx(33.31 * GIB / own.weights_bytes)


def test_every_file_of_the_main_table_is_llama_cpps_own_mix_within_the_tolerance() -> None:
    """MIX_TOLERANCE's premise: the weights model gives each llamacpp_calibration.csv file's
    printed size within it, so no row of that table is scaled to its file."""
    from calibration_data import GIB, MIX_TOLERANCE, main_rows

    sized = [o for o in main_rows(get_card, get_model) if o.size_gib]
    assert len(sized) > 100
    assert all(o.bytes_source == "architecture" for o in sized)
    assert max(abs(o.weights_bytes / GIB / o.size_gib - 1) for o in sized) < MIX_TOLERANCE


def test_the_xe2_rows_load_on_the_xmx_engines_by_their_build_date() -> None:
    """PR #21431's Arc Pro B60 rows (April 2026) and the B70's (July 2026) ran builds with PR
    #18178's Xe2 tiles, on the XMX engines; PR #14001's B580 rows (June 2025) and the
    main table's undated scoreboard rows did not. BF16 stays on the shader ALUs."""
    from tpscalc.estimate.speed_terms import xe2_coopmat

    obs = [o for o in extra_rows(get_card, get_model)
           if o.card.name in ("Arc Pro B60", "Arc Pro B70", "Arc B580") and o.backend == "vulkan"]
    b60 = [o for o in obs if o.card.name == "Arc Pro B60"]
    assert len(b60) == 8 and {o.date for o in b60} == {"2026-04-04"}
    on_xmx = {(o.card.name, o.quant == "BF16"): xe2_coopmat(o.card, o.backend, o.date,
                                                            o.quant == "BF16") for o in obs}
    assert on_xmx == {("Arc Pro B60", False): True, ("Arc Pro B60", True): False,
                      ("Arc Pro B70", False): True, ("Arc B580", False): False}
