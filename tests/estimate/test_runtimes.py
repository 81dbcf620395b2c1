"""The runtimes behind the Runtime seam (issue 25): their formats, memory rules, levels,
refusals and the commands that realise an answer."""
from __future__ import annotations

from dataclasses import replace

import pytest

from tpscalc.catalog import get_card, get_model
from tpscalc.estimate import engine
from tpscalc.estimate.query import RUNTIMES as RUNTIME_NAMES
from tpscalc.estimate.query import EstimateInputError, Query, Rig
from tpscalc.estimate.runtimes import MLX_BITS, OLLAMA_LEVEL, RUNTIMES, get_runtime
from tpscalc.estimate.tensor_parallel import estimate_tp
from tpscalc.estimate.types import Estimate

M4_MAX = "Apple M4 Max (40-core GPU)"


def one(model: str, card: str, runtime: str, quant: str | None = None,
        **q: object) -> Estimate:
    return engine.estimate(get_model(model), Rig.of(get_card(card)),
                           Query(runtime=runtime, **q), quant)  # type: ignore[arg-type]


def test_every_runtime_names_itself_in_its_answer() -> None:
    for name in ("llama.cpp", "ollama", "lmstudio", "llamafile", "vllm", "sglang"):
        e = one("Llama 3.1-8B", "RTX 4090", name, context=8192)
        assert e.runtime == name and e.run is not None and e.run.runtime == name
    assert one("Llama 3.1-8B", M4_MAX, "mlx").runtime == "mlx"
    assert set(RUNTIMES) == set(RUNTIME_NAMES)  # the request's choices are the implementations


def test_ollama_runs_llama_cpp_at_its_level_with_its_context_and_modelfile() -> None:
    base = one("Llama 3.1-8B", "RTX 4090", "llama.cpp", "Q4_K_M", context=32768)
    e = one("Llama 3.1-8B", "RTX 4090", "ollama", "Q4_K_M")
    assert e.context == 32768  # ollama's default on a 24-48 GiB GPU
    assert one("Llama 3.1-8B", "RTX 3060 12 GB", "ollama").context == 4096
    assert e.memory == base.memory  # llama.cpp's memory underneath
    assert e.decode is not None and base.decode is not None
    assert e.decode.tokens_per_s == pytest.approx(base.decode.tokens_per_s * OLLAMA_LEVEL.decode)
    assert e.run is not None and e.run.command.startswith("ollama create ")
    settings = dict(e.run.settings)
    assert "PARAMETER num_ctx 32768" in settings["Modelfile"]
    assert "OLLAMA_NUM_PARALLEL=1" in settings["serve"]


def test_mlx_formats_carry_their_scales() -> None:
    model = get_model("Llama 3.1-8B")
    e = one("Llama 3.1-8B", M4_MAX, "mlx", "mlx-4bit")
    assert e.quant == "MLX-4bit" and e.fits and e.backend == "metal"
    assert e.memory.weights_gib * 2**30 == pytest.approx(model.parameters_total * 4.5 / 8)
    assert MLX_BITS == {"MLX-8bit": 8.5, "MLX-6bit": 6.5, "MLX-4bit": 4.5, "BF16": 16.0}
    assert e.run is not None and e.run.command.startswith("mlx_lm.generate --model mlx-community/")
    chosen = one("Llama 3.1-8B", M4_MAX, "mlx")
    assert chosen.quant in ("MLX-8bit", "MLX-6bit", "MLX-4bit")


@pytest.mark.parametrize(("runtime", "card"), [("mlx", "RTX 4090"), ("vllm", M4_MAX),
                                               ("sglang", M4_MAX)])
def test_a_runtime_refuses_a_device_it_cannot_run_on(runtime: str, card: str) -> None:
    with pytest.raises(EstimateInputError) as exc:
        one("Llama 3.1-8B", card, runtime)
    assert exc.value.code == "runtime_unsupported"
    assert get_runtime(runtime).label in str(exc.value)


def test_vllm_splits_llama_70b_over_two_h100s() -> None:
    h100 = get_card("H100 SXM5 80 GB")
    e = engine.estimate(get_model("Llama 3.3 70B"), Rig((h100, h100)), Query(runtime="vllm"))
    assert e.fits and e.quant in ("BF16", "FP8") and e.tensor_parallel == 2
    assert e.run is not None and e.run.command.startswith("vllm serve ")
    assert "--tensor-parallel-size 2" in e.run.command
    per_gpu = e.memory.total_gib / 2
    assert per_gpu <= 0.9 * h100.memory_gib  # within --gpu-memory-utilization


def test_tensor_parallel_of_one_is_the_single_card_answer() -> None:
    model, card = get_model("Llama 3.1-8B"), get_card("RTX 4090")
    query = Query(runtime="vllm", context=8192)
    alone = engine.estimate(model, Rig.of(card), query, placed=False)
    terms = engine._terms(model, engine._ladder(model, query), query)
    tp = estimate_tp(model, terms, Rig((card,)), query, get_runtime("vllm"))
    assert replace(tp, gpu=alone.gpu) == alone


def test_tensor_parallel_needs_identical_cards_and_even_heads() -> None:
    a, b = get_card("RTX 4090"), get_card("RTX 3090")
    with pytest.raises(EstimateInputError):
        engine.estimate(get_model("Llama 3.1-8B"), Rig((a, b)), Query(runtime="vllm"))
    with pytest.raises(EstimateInputError) as exc:  # 32 heads do not split three ways
        engine.estimate(get_model("Llama 3.1-8B"), Rig((a, a, a)), Query(runtime="vllm"))
    assert exc.value.code == "bad_tensor_parallel"


def test_llamafile_runs_at_localscore_level() -> None:
    base = one("Llama 3.1-8B", "RTX 4090", "llama.cpp", "Q4_K_M")
    e = one("Llama 3.1-8B", "RTX 4090", "llamafile", "Q4_K_M")
    assert e.decode is not None and base.decode is not None
    assert 0.72 <= e.decode.tokens_per_s / base.decode.tokens_per_s <= 0.79
    assert e.run is not None and e.run.command.startswith("llamafile --server -m ")


def test_model_page_rows_for_a_runtime_refuse_the_cards_it_cannot_run() -> None:
    rigs = [Rig.of(get_card(c)) for c in ("RTX 4090", M4_MAX)]
    rows = engine.estimate_on_rigs(get_model("Llama 3.1-8B"), rigs, Query(runtime="mlx"))
    assert rows[0].refusal is not None and not rows[0].fits
    assert rows[1].refusal is None and rows[1].fits and rows[1].runtime == "mlx"


def test_ollama_on_two_cards_is_ollama_at_its_level() -> None:
    card = get_card("RTX 3090")
    query = Query(context=8192)
    base = engine.estimate(get_model("Llama 3.3 70B"), Rig((card, card)), query, "Q4_K_M")
    e = engine.estimate(get_model("Llama 3.3 70B"), Rig((card, card)),
                        replace(query, runtime="ollama"), "Q4_K_M")
    assert e.runtime == "ollama" and e.placement is not None and e.run is not None
    assert e.decode is not None and base.decode is not None
    assert e.decode.tokens_per_s == pytest.approx(base.decode.tokens_per_s * OLLAMA_LEVEL.decode)
    assert "PARAMETER num_gpu" in dict(e.run.settings)["Modelfile"]


@pytest.mark.parametrize(("runtime", "card", "default", "more"), [
    ("mlx", M4_MAX, "MLX-4bit", "MLX-8bit"), ("ollama", "RTX 4090", "Q4_K_M", "Q8_0"),
])
def test_a_plain_answer_takes_the_runtimes_default_download(
        runtime: str, card: str, default: str, more: str) -> None:
    e = one("Llama 3.1-8B", card, runtime)
    assert e.fits and e.quant == default and e.run is not None
    assert dict(e.run.settings)["format"].startswith(default)
    # the less compressed format fits too: taken when asked, by name or by a quality ceiling
    asked = one("Llama 3.1-8B", card, runtime, more)
    assert asked.fits and asked.quant == more and "format" not in dict(asked.run.settings or ())
    assert one("Llama 3.1-8B", card, runtime, max_quality="Q8_0").quant == more


def test_a_default_download_that_does_not_fit_gives_way_to_a_smaller_file() -> None:
    # Llama 3.1 8B at Q4_K_M (~4.6 GiB) is over a 4 GiB GTX 1650: ollama's ladder goes on down
    assert not one("Llama 3.1-8B", "GTX 1650", "ollama").fits  # not above the IQ4_XS floor
    e = one("Llama 3.1-8B", "GTX 1650", "ollama", min_quality="IQ2_XXS")
    assert e.fits and e.quant not in ("Q4_K_M", "Q8_0")
