"""speed_columns over numpy columns gives speed.decode_estimates' and prefill_estimates' answers
row by row, on seeded samples of catalog cards, backends and model terms (equality, not a
tolerance: the same formulas in the same order)."""
from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from tpscalc.catalog import store
from tpscalc.estimate import speed
from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.speed_columns import decode_columns, prefill_columns

QUANTS = ["F16", "BF16", "Q8_0", "Q6_K", "Q4_K_M", "Q4_0", "IQ2_XXS", "MXFP4"]


def _rows(seed: int, n: int = 300) -> dict[str, list[Any]]:
    rnd = random.Random(seed)
    cards = rnd.choices(store.cards(), k=n)
    moe = [rnd.random() < 0.4 for _ in range(n)]
    return {
        "cards": cards, "moe": moe, "quant": [rnd.choice(QUANTS) for _ in range(n)],
        "read": [rnd.uniform(1e8, 8e10) for _ in range(n)],
        "kv": [rnd.choice([0.0, rnd.uniform(0, 4e9)]) for _ in range(n)],
        "layers": [float(rnd.randint(1, 90)) for _ in range(n)],
        "params": [rnd.uniform(0, 1e11) for _ in range(n)],
        "attention": [rnd.choice([0.0, rnd.uniform(0, 1e10)]) for _ in range(n)],
        "flops": [rnd.uniform(1e9, 3e11) for _ in range(n)],
        "experts": [rnd.uniform(1e8, 1e11) if m else 0.0 for m in moe],
        "batch": [rnd.choice([math.inf, rnd.uniform(1, 600)]) for _ in range(n)],
        "gemms": [rnd.uniform(0, 200) if m else 0.0 for m in moe],
        "matrices": [rnd.uniform(0, 600) if m else 0.0 for m in moe],
        "depth": [rnd.choice([0.0, 4096.0, 32768.0]) for _ in range(n)],
        "wmma": [rnd.random() < 0.5 for _ in range(n)],
    }


@pytest.mark.parametrize(("seed", "backend"), [(1, None), (2, "vulkan"), (3, "cuda"),
                                               (4, "rocm"), (5, "sycl")])
def test_decode_columns_are_decode_estimates_row_by_row(seed: int, backend: str | None) -> None:
    r, cal = _rows(seed), calibration()
    rows = speed.decode_estimates(r["read"], r["kv"], r["layers"], r["cards"], backend, cal,
                                  params_read=r["params"], quant=r["quant"],
                                  attention_flops=r["attention"],
                                  expert_matrices=r["matrices"], depth_tokens=r["depth"],
                                  expert_params=r["experts"])
    cols = decode_columns(*(np.array(r[k]) for k in ("read", "kv", "layers")), r["cards"],
                          backend, cal, np.array(r["params"]), r["quant"],
                          np.array(r["attention"]), np.array(r["matrices"]),
                          np.array(r["depth"]), np.array(r["experts"]))
    assert [cols.estimate(i) for i in range(len(rows))] == rows
    assert len({e.bound for e in rows}) > 1  # the sample reaches more than one bound
    if backend == "vulkan":  # BF16 experts through the matrix-matrix kernel: slower rows
        plain = speed.decode_estimates(r["read"], r["kv"], r["layers"], r["cards"], backend,
                                       cal, params_read=r["params"], quant=r["quant"],
                                       attention_flops=r["attention"],
                                       expert_matrices=r["matrices"], depth_tokens=r["depth"])
        slower = {i for i, (a, b) in enumerate(zip(rows, plain, strict=True))
                  if a.tokens_per_s < b.tokens_per_s}
        assert slower and all(r["quant"][i] == "BF16" and r["moe"][i] for i in slower)


@pytest.mark.parametrize(("seed", "backend", "flash_attn"), [
    (1, None, True), (2, "vulkan", True), (3, "cuda", False), (4, "metal", True),
    (5, "sycl", True), (6, "rocm", True)])  # sycl: no deep prompts, its ranges reach k's cap
def test_prefill_columns_are_prefill_estimates_row_by_row(seed: int, backend: str | None,
                                                          flash_attn: bool) -> None:
    r, cal = _rows(seed), calibration()
    quantized = [q not in ("F16", "BF16") for q in r["quant"]]
    bf16 = [q == "BF16" for q in r["quant"]]
    rows = speed.prefill_estimates(
        r["flops"], 512, r["cards"], backend, cal, weights_bytes=r["read"], quantized=quantized,
        ubatch=256, attention_flops_per_token=r["attention"], expert_params=r["experts"],
        expert_batch=r["batch"], expert_gemms=r["gemms"], flash_attn=flash_attn, bf16=bf16,
        wmma_attention=r["wmma"], context_tokens=r["depth"])
    cols = prefill_columns(
        np.array(r["flops"]), 512, r["cards"], backend, cal, np.array(r["read"]), quantized,
        256, np.array(r["attention"]), np.array(r["experts"]), np.array(r["batch"]),
        np.array(r["gemms"]), flash_attn, bf16, r["wmma"], np.array(r["depth"]))
    assert [cols.estimate(i) for i in range(len(rows))] == rows
    assert len({"none" if e is None else e.bound for e in rows}) > 1  # more than one kind
    # a measured device's prompt at a condition its rows never held widens (condition_bands)
    shallow = speed.prefill_estimates(
        r["flops"], 512, r["cards"], backend, cal, weights_bytes=r["read"], quantized=quantized,
        ubatch=256, attention_flops_per_token=r["attention"], expert_params=r["experts"],
        expert_batch=r["batch"], expert_gemms=r["gemms"], flash_attn=flash_attn, bf16=bf16,
        wmma_attention=r["wmma"])
    wider = [i for i, (a, b) in enumerate(zip(rows, shallow, strict=True))
             if a is not None and b is not None and a.high > b.high]
    assert all(r["depth"][i] >= speed.DEEP_TOKENS for i in wider)
    if backend in (None, "cuda"):  # the sample holds measured CUDA cards without deep prompts
        assert wider
