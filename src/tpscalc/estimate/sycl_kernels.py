"""SYCL's decode kernels per weight type: which read Intel's reordered layout, and what the
others cost in bandwidth.

A decode step multiplies each weight matrix by one token (ggml-sycl's MMVQ or DMMV kernels; a
MoE's routed experts through MUL_MAT_ID's fused MMVQ). On Intel GPUs, with GGML_SYCL_ENABLE_OPT
on (the default for every Intel device since llama.cpp PR #13973), ggml-sycl rewrites a tensor
at first use into a "reordered" layout: the quants of all its blocks together, then the scales,
so that a sub-group's loads are coalesced. It does so only for the types its reordered kernels
take (ggml-sycl.cpp, `ggml_sycl_supports_reorder_mmvq` / `_dmmv` for MUL_MAT,
`opt_for_reorder_id` for MUL_MAT_ID). Every other type is read in the GGUF's own array of
blocks, each block's scales beside its quants, and streams at a fraction of the bandwidth; the
fitted η is that of the reordered kernels (the measured SYCL rows are mostly Q4_K_M), so the
bytes of the other types are charged UNREORDERED_SLOWDOWN times their time.

The slowdowns are the pull requests' own before/after measurements, not fitted:
- 32-weight blocks (Q8_0's 34 bytes, Q4_0's 18, MXFP4's 17: not a power of two, so a block
  straddles cache lines): PR #21527 (April 2026), Arc Pro B70, Qwen3.5-27B Q8_0 decode 4.88 ->
  15.24 tokens/s when Q8_0 was reordered, 3.1x ("bandwidth utilization 21 % -> 66 %").
- 256-weight super-blocks (the k- and i-quants): PR #29107 (September 2026, open), Arc Pro B60,
  a 27B IQ3_XXS file decode 7.67 -> 14.94 tokens/s with IQ3_XXS/IQ3_S reordered, 1.95x (on the
  B70 at 9k tokens of context 1.76x, the attention's share diluting it). PR #26336 (July 2026,
  merged then reverted) saw 1.54-1.90x on a Q2_K_M file, all reordering off against on.
"""
from __future__ import annotations

from functools import lru_cache

from tpscalc.catalog.schema import Architecture
from tpscalc.estimate.weights import canonical_ftype, read_per_token_by_type

SYCL = "sycl"
# Since when (the ggml tree's sync date of each llama.cpp pull request) a type's MUL_MAT decode
# reads the reordered layout: PRs #12858, #13109, #13885, #21527, #22152, #23725, #24721, and
# #25064 (Q2_K takes DMMV, reordered there; its MMVQ reorder, #26336, was reverted).
REORDERED_SINCE: dict[str, str] = {
    "Q4_0": "2025-05-09", "Q4_K": "2025-05-15", "Q6_K": "2025-06-09", "Q8_0": "2026-04-07",
    "Q5_K": "2026-05-08", "Q3_K": "2026-06-01", "Q1_0": "2026-06-18", "Q2_K": "2026-07-12",
}
# The routed experts' MUL_MAT_ID: Q4_K, Q5_K and Q6_K reordered since PR #24452.
REORDERED_EXPERTS_SINCE: dict[str, str] = {
    "Q4_K": "2026-06-16", "Q5_K": "2026-06-16", "Q6_K": "2026-06-16",
}
# Reordering on by default for every Intel device (PR #13973); before it, off by default.
REORDER_DEFAULT_SINCE = "2025-06-25"
# Time per byte of an unreordered type over a reordered one (module docstring), by block size.
UNREORDERED_SLOWDOWN_SMALL_BLOCK = 3.1  # Q8_0 on the Arc Pro B70, PR #21527
UNREORDERED_SLOWDOWN_SUPER_BLOCK = 1.95  # IQ3_XXS on the Arc Pro B60, PR #29107
# The range's slow end takes every unreordered type at the largest slowdown measured.
UNREORDERED_SLOWDOWN_LARGEST = max(UNREORDERED_SLOWDOWN_SMALL_BLOCK,
                                   UNREORDERED_SLOWDOWN_SUPER_BLOCK)
_SUPER_BLOCK_WEIGHTS = 256
_UNBLOCKED = ("F32", "F16", "BF16")  # plain arrays: no block layout to reorder


def reordered(ggml_type: str, expert: bool, date: str = "") -> bool:
    """True where a build of `date` ("" for current builds, else "YYYY-MM[-DD]") multiplies
    `ggml_type` weights (of a routed expert tensor: `expert`) in the reordered layout."""
    since = (REORDERED_EXPERTS_SINCE if expert else REORDERED_SINCE).get(ggml_type)
    if since is None:
        return False
    return not date or date >= max(since, REORDER_DEFAULT_SINCE)


def unreordered_slowdown(ggml_type: str) -> float:
    """Time per byte of `ggml_type` read unreordered over the reordered kernels' (1 for float
    weights)."""
    if ggml_type in _UNBLOCKED:
        return 1.0
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    weights_per_block, _ = GGML_QUANT_SIZES[GGMLQuantizationType[ggml_type]]
    return (UNREORDERED_SLOWDOWN_SUPER_BLOCK if weights_per_block >= _SUPER_BLOCK_WEIGHTS
            else UNREORDERED_SLOWDOWN_SMALL_BLOCK)


@lru_cache(maxsize=4096)
def read_factors(arch: Architecture, ftype: str, date: str = "") -> tuple[float, float]:
    """(the decode time of `arch`'s weights at `ftype` under SYCL on an Intel GPU over their
    time at the fitted (reordered) rate, the same with every unreordered type at the largest
    slowdown measured): bytes read per token, each type's unreordered bytes weighted by its
    slowdown, ÷ bytes read per token; both ≥ 1. The second is the range's slow end: a super-block
    type's slowdown was measured on IQ3 alone (and 1.54-1.90x whole-token on Q2_K), so a range
    holds it at the small blocks' 3.1 too (UNREORDERED_SLOWDOWN_LARGEST)."""
    by_type = read_per_token_by_type(arch, canonical_ftype(ftype))
    total = sum(by_type.values())
    if total <= 0:
        return 1.0, 1.0
    slow = worst = 0.0
    for (g, expert), b in by_type.items():
        s = 1.0 if reordered(g, expert, date) else unreordered_slowdown(g)
        slow += b * s
        worst += b * (1.0 if s == 1.0 else UNREORDERED_SLOWDOWN_LARGEST)
    return slow / total, worst / total


def kernel_read_factors(arch: Architecture, quant: str, backend: str | None,
                        ) -> tuple[float, float]:
    """read_factors of `arch` at `quant` (current builds) where `backend` is SYCL, else (1, 1):
    no other backend's decode is told apart by weight type. (1, 1) for a format without
    llama.cpp's tensor rules (a runtime's own format)."""
    if backend != SYCL:
        return 1.0, 1.0
    try:
        return read_factors(arch, quant)
    except (KeyError, ValueError):
        return 1.0, 1.0


def runs_reordered(vendor: str | None) -> bool:
    """True for a GPU whose SYCL decode reorders weights (ggml-sycl sets opt_feature.reorder
    for Intel GPUs only): where a read factor applies."""
    return vendor == "Intel"
