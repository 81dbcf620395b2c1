"""The llama-bench conditions an estimate's speeds are for (-p -n -d -fa -ub), validated."""
from __future__ import annotations

from tpscalc.estimate.types import SpeedTest

# Longest context any catalog model publishes (engine.MAX_CONTEXT): no test reaches past it.
MAX_TOKENS = 10_000_000


class SpeedTestError(ValueError):
    """A test parameter out of range (negative depth, fractional tokens, ...)."""


LLAMA_BENCH_PROMPT, LLAMA_BENCH_GEN = 512, 128  # llama-bench's default -p and -n


def speed_test(context: int, n_prompt: int | None = None, n_gen: int | None = None,
               depth: int | None = None, flash_attn: bool = True,
               n_ubatch: int = 512) -> SpeedTest:
    """The conditions of the speeds (llama-bench -p -n -d -fa -ub); else SpeedTestError.

    Defaults describe a conversation that fills `context`: a prompt of `context` tokens, and
    `context` tokens generated from an empty cache (on average half the context is cached).
    0 for n_prompt or n_gen (a llama-bench tg-only or pp-only row) means llama-bench's default
    for the other kind of speed: a 512-token prompt, 128 generated tokens.
    """
    values = {"n_prompt": context if n_prompt is None else n_prompt or LLAMA_BENCH_PROMPT,
              "n_gen": context if n_gen is None else n_gen or LLAMA_BENCH_GEN,
              "depth": 0 if depth is None else depth, "n_ubatch": n_ubatch}
    for name, v in values.items():
        low = 0 if name == "depth" else 1
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_TOKENS:
            raise SpeedTestError(
                f"{name} must be a whole number of tokens from {low} to {MAX_TOKENS:,}, not {v!r}")
    return SpeedTest(values["n_prompt"], values["n_gen"], values["depth"], bool(flash_attn),
                     values["n_ubatch"])
