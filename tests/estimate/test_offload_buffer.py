"""The partial-offload compute buffer rule (memory.offload_buffer_bytes) against llama.cpp's
measured buffers in gguf-parser-go's sweep (tools/data/compute_buffer_sweep.csv): full GPU
offload versus partial offload, one row per architecture. Only the rows whose model the
catalog holds (mapped below by hand, the same architecture and size) are compared."""
from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from tpscalc.catalog import get_model
from tpscalc.catalog.quants import get_quant
from tpscalc.estimate import memory as mem
from tpscalc.estimate.placement import DeviceSlot, ModelLayout, place

SWEEP = Path(__file__).parents[2] / "tools" / "data" / "compute_buffer_sweep.csv"
MIB = 2**20
GIB = 2**30
# sweep architecture -> the catalog model of the file's architecture and size (a fine-tune or a
# later release of the same shape counts: the buffer depends on the shape only)
CATALOG = {
    "apertus": "Apertus 8B", "bailingmoe": 'Ling-lite-1.5 ("Bailing")',
    "bailingmoe2": "Ling-mini-base-2.0-20T", "bloom": "BLOOM-7.1B", "command-r": "Command R+",
    "dbrx": "DBRX", "deepseek2-ocr": "Deepseek OCR", "ernie4_5-moe": "ERNIE-4.5-21B-A3B",
    "exaone": "EXAONE 3.5 7.8B", "falcon": "Falcon-40B", "gemma2": "Gemma 2 2B",
    "gemma3": "Gemma 3 1B", "gpt-oss": "gpt-oss-20b", "gptneox": "Pythia-1.4b",
    "granitehybrid": "Granite-4.0-H-Micro", "kimi-linear": "Kimi Linear",
    "llama4": "Llama 4 Scout", "mamba2": "Codestral Mamba", "minicpm3": "MiniCPM-3-4B",
    "mpt": "MPT-7B", "nemotron_h": "NVIDIA-Nemotron-Nano-12B-v2", "olmoe": "OLMoE",
    "phi3": "phi-3.5-mini", "phimoe": "Phi-3.5-MoE", "qwen2": "Qwen2.5-3B",
    "qwen2vl": "Qwen2.5-VL-7B", "qwen3": "Qwen3-4B", "qwen3moe": "Qwen3-30B-A3B",
    "qwen3next": "Qwen3-Next-80B-A3B", "stablelm": "StableLM-2-1.6B", "starcoder": "Granite 20B",
    "starcoder2": "StarCoder 2 7B",
}
FILE_TYPES = ("Q4_K_M", "Q8_0", "Q4_0")


def _rows() -> list[dict[str, str]]:
    with SWEEP.open() as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def _compared() -> list[tuple[str, bool, float, float, float]]:
    """(architecture, is MoE, measured full MiB, measured partial MiB, rule's addition MiB)."""
    out = []
    for row in _rows():
        name = CATALOG.get(row["architecture"])
        if name is None:
            continue
        arch = get_model(name).architecture
        assert arch is not None
        quant = next((q for q in FILE_TYPES if q in row["file"].upper()), "Q4_K_M")
        per_weight = get_quant(quant).bits_per_weight / 8
        out.append((row["architecture"], arch.is_moe, float(row["full_mib"]),
                    float(row["partial_mib"]),
                    # what the placement adds: the copy's growth of the buffer's peak at the
                    # sweep's context (n_ubatch 512, flash attention: llama.cpp's defaults)
                    mem.offload_buffer_growth(arch, int(row["context"]), 512, True,
                                              mem.offload_buffer_bytes(arch, per_weight))
                    / MIB))
    return out


def test_the_sweep_keeps_its_source_line() -> None:
    first = SWEEP.read_text().splitlines()[0]
    assert first.startswith("# gguf-parser-go") and "MIT" in first


def test_rule_against_the_measured_partial_offload_buffers() -> None:
    rows = _compared()
    assert len(rows) >= 25
    # the difference partial − full, which is what the rule models
    added = [abs(rule / (part - full) - 1) for _a, _m, full, part, rule in rows if part - full > 1]
    # the whole partial buffer, the measured full one plus the rule
    whole = [abs((full + rule) / part - 1) for _a, _m, full, part, rule in rows]
    moe = [abs(rule / (part - full) - 1) for _a, m, full, part, rule in rows if m]
    print(f"\npartial-offload buffer, {len(rows)} sweep rows: median error of the addition "
          f"{statistics.median(added):.0%} (MoE {statistics.median(moe):.0%}), of the whole "
          f"buffer {statistics.median(whole):.0%}")
    assert statistics.median(added) <= 0.35
    assert statistics.median(moe) <= 0.30
    assert statistics.median(whole) <= 0.20
    # a mixture of experts grows by far more than a dense model of the same width
    by_arch = {a: rule for a, _m, _f, _p, rule in rows}
    assert by_arch["qwen3moe"] > 5 * by_arch["qwen3"]


def _layout(offload: float) -> ModelLayout:
    return ModelLayout(n_layers=40, layer_bytes=0.8 * GIB, expert_bytes=0.0,
                       kv_per_layer_bytes=0.01 * GIB, output_bytes=0.3 * GIB,
                       embedding_bytes=0.3 * GIB, offload_buffer_bytes=offload)


@pytest.mark.parametrize("ram", [None, 64 * GIB])
def test_the_first_gpu_holds_the_larger_buffer_only_when_offloading(ram: float | None) -> None:
    slots = [DeviceSlot("A", 16 * GIB, 0.5 * GIB), DeviceSlot("B", 16 * GIB, 0.5 * GIB)]
    roomy = place(_layout(0.4 * GIB), [DeviceSlot("A", 40 * GIB, 0.5 * GIB)], ram)
    assert roomy.devices[0].buffer_bytes == 0.5 * GIB  # all on the GPU: the plain buffer
    tight = place(_layout(0.4 * GIB), slots, ram)
    if ram is None:  # nothing may move to RAM: no offload, no larger buffer
        assert tight.devices[0].buffer_bytes == 0.5 * GIB
        return
    assert tight.cpu_layers > 0
    assert tight.devices[0].buffer_bytes == pytest.approx(0.9 * GIB)
    assert tight.devices[1].buffer_bytes == 0.5 * GIB
