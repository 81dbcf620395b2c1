"""The engine's llama-bench test parameters (-p -n -d -fa -ub) and the replay of measured rows."""
from __future__ import annotations

import pytest

from tpscalc import api
from tpscalc.catalog import get_card, get_model
from tpscalc.estimate import engine
from tpscalc.estimate.bench import SpeedTestError, speed_test
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.types import SpeedTest


def estimate(model: object, card: object, quant: str, **query: object) -> object:
    return engine.estimate(model, Rig.of(card), Query(**query), quant)  # type: ignore[arg-type]


def test_default_test_is_a_conversation_filling_the_context() -> None:
    assert speed_test(8192) == SpeedTest(n_prompt=8192, n_gen=8192, depth=0)
    e = estimate(get_model("Llama 2-7B"), get_card("RTX 4090"), "Q4_K_M", context=8192)
    assert e.test == SpeedTest(8192, 8192, 0)  # type: ignore[attr-defined]
    same = estimate(get_model("Llama 2-7B"), get_card("RTX 4090"), "Q4_K_M", context=8192,
                    n_prompt=8192, n_gen=8192, depth=0)
    assert same == e


def test_zero_means_llama_bench_default_for_the_other_kind() -> None:
    t = speed_test(4096, n_prompt=512, n_gen=0, depth=0)
    assert (t.n_prompt, t.n_gen) == (512, 128)


@pytest.mark.parametrize("kwargs", [{"depth": -1}, {"n_prompt": 1.5}, {"n_ubatch": 0}])
def test_bad_test_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(SpeedTestError):
        speed_test(4096, **kwargs)  # type: ignore[arg-type]


def _at(depth: int, flash_attn: bool = True, card: str = "RTX 4090") -> tuple[float, float]:
    e = estimate(get_model("Llama 2-7B"), get_card(card), "Q4_K_M", context=40000,
                 n_prompt=2048, n_gen=32, depth=depth, flash_attn=flash_attn)
    assert e.decode is not None and e.prefill is not None
    return e.decode.tokens_per_s, e.prefill.tokens_per_s


def test_speeds_fall_with_depth_and_without_flash_attention() -> None:
    d0, p0 = _at(0)
    d32, p32 = _at(32768)
    assert d32 < 0.75 * d0 and p32 < 0.6 * p0  # full multi-head attention, 32k cached tokens
    # Without flash attention llama.cpp materialises the attention scores KQ in the compute
    # buffer (n_ctx × n_ubatch × heads × 4 B: 2.4 GiB here) on top of 19.5 GiB of f16 KV
    # cache: Llama 2-7B at 40k context no longer fits a 24 GB card, only a 48 GB one, where
    # decode at depth is slower than with flash attention.
    no_fa = estimate(get_model("Llama 2-7B"), get_card("RTX 4090"), "Q4_K_M", context=40000,
                     n_prompt=2048, n_gen=32, depth=32768, flash_attn=False)
    assert no_fa.decode is None  # type: ignore[attr-defined]
    assert _at(32768, flash_attn=False, card="RTX A6000")[0] < _at(32768, card="RTX A6000")[0]
    # prompts: the CUDA gain of flash attention measured on pairs of llama-bench rows
    factor = calibration().backends["cuda"].prefill_no_flash_attn_factor
    assert 0.8 < factor < 0.97
    off, on = _at(0, flash_attn=False, card="RTX A6000")[1], _at(0, card="RTX A6000")[1]
    assert off == pytest.approx(on * factor, rel=1e-6)


# Public llama-bench rows (llamacpp_extra_calibration.csv): ggml-org/llama.cpp benches/dgx-spark.md
# (GB10, build 6918) and the Radeon AI PRO R9700 row set; fitted on, so a tight tolerance.
REPLAY = [
    ({"model": "Qwen3-30B-A3B", "gpu": "GB10", "quant": "Q8_0", "backend": "cuda",
      "n_prompt": "0", "n_gen": "32", "depth": "32768", "flash_attn": "1"}, "decode", 30.8),
    ({"model": "Qwen2.5-Coder-7B", "gpu": "GB10", "quant": "Q8_0", "backend": "cuda",
      "n_prompt": "0", "n_gen": "32", "depth": "16384", "flash_attn": "1"}, "decode", 25.9),
    ({"model": "Llama 2-7B", "gpu": "Radeon AI PRO R9700", "quant": "Q4_0", "backend": "rocm",
      "n_prompt": "2048", "n_gen": "0", "depth": "32768", "flash_attn": "1"}, "prefill", 567.6),
]


@pytest.mark.parametrize("request_, kind, measured", REPLAY)
def test_llama_bench_rows_replay(request_: dict[str, str], kind: str, measured: float) -> None:
    (row,) = api.evaluate_many([request_])
    assert row["error"] is None
    assert row["test"]["depth"] == int(request_["depth"])
    assert row["context"] >= int(request_["depth"])  # a context that holds the test
    assert row[kind]["tokens_per_s"] == pytest.approx(measured, rel=0.15)


def test_bad_flash_attn_value_is_a_row_error() -> None:
    (row,) = api.evaluate_many([{"model": "Llama 2-7B", "gpu": "RTX 4090", "flash_attn": "maybe"}])
    assert "flash_attn" in row["error"]


def test_measured_figures_beside_the_estimate() -> None:
    """Llama 3-8B Q4_K_M on an RTX 4090: llama-bench tg512 130.58 and pp512 7,138.99 tok/s
    (XiongjieDai/GPU-Benchmarks-on-LLM-Inference, 4090_v3.ipynb, in llamacpp_calibration.csv)."""
    row = api.evaluate("Llama 3-8B", "RTX 4090", quant="Q4_K_M")
    m = row["measured"]
    assert m["decode_tokens_per_s"] == pytest.approx(130.58)
    assert m["prefill_tokens_per_s"] == pytest.approx(7138.99)
    assert (m["decode_test"], m["prefill_test"]) == ("tg512", "pp512")
    assert "XiongjieDai" in m["source"]
    deep = api.evaluate("Llama 3-8B", "RTX 4090", quant="Q4_K_M", context=40000, depth=32768)
    assert deep["measured"] is None
