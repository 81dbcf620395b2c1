"""The serving part of an estimate as plain data: N users at once, the most users at a target
speed, speculative decoding (one builder for the CLI's JSON, the API and the site)."""
from __future__ import annotations

from typing import Any

from tpscalc.estimate.batched import BatchedDecode
from tpscalc.estimate.serving import ServingEstimate
from tpscalc.report.common import command_json


def _r(x: float | None, digits: int = 2) -> float | None:
    return None if x is None else round(x, digits)


def batched_json(d: BatchedDecode | None) -> dict[str, Any] | None:
    """Aggregate and per-user decode at N, tok/s, with the range and the bound."""
    if d is None:
        return None
    return {"parallel": d.parallel, "aggregate_tokens_per_s": _r(d.aggregate_tokens_per_s, 1),
            "per_user_tokens_per_s": _r(d.per_user_tokens_per_s, 2),
            "per_user_low": _r(d.per_user_low, 2), "per_user_high": _r(d.per_user_high, 2),
            "step_ms": _r(d.step_s * 1000, 3), "bound": d.bound}


def _command(s: ServingEstimate) -> str:
    """llama-server's arguments for N slots: the placement's (the estimate's command) with the
    context of all N sequences and -np N."""
    e, p = s.estimate, s.estimate.placement
    if p is None or e.quant is None:
        return s.llama_server
    args = command_json(e, p)["llama_server"].split()
    if "-c" in args:
        args[args.index("-c") + 1] = str(s.parallel * e.context)
    return " ".join(["llama-server", *args, "-np", str(s.parallel)])


def serving_json(s: ServingEstimate) -> dict[str, Any]:
    """The `serving` block of `tpscalc estimate --parallel N` / `--users-at T` JSON."""
    out: dict[str, Any] = {
        "parallel": s.parallel,
        "context_per_user": s.estimate.context,
        "quant": s.estimate.quant,
        "memory": {"kv_cache_gib": _r(s.kv_cache_gib, 3), "total_gib": _r(s.total_gib, 3),
                   "usable_gib": _r(s.usable_gib, 3)},
        "fits": s.fits,
        "decode": batched_json(s.decode),
        "single_decode_tokens_per_s": (_r(s.estimate.decode.tokens_per_s, 2)
                                       if s.estimate.decode else None),
        "time_to_first_token_s": _r(s.time_to_first_token_s, 3),
        "kv_model": "llama-server -np N -c N×context: N × one sequence's KV cache (unified "
                    "or split per slot, the same bytes)",
        "command": {"llama_server": _command(s)},
        # the picture's points: aggregate and per-user tok/s at 1, 2, 4 ... users
        "curve": [{"parallel": d.parallel,
                   "aggregate_tokens_per_s": _r(d.aggregate_tokens_per_s, 1),
                   "per_user_tokens_per_s": _r(d.per_user_tokens_per_s, 2)} for d in s.curve],
    }
    if s.users_at is not None:
        out["users_at"] = {"target_tokens_per_s": s.users_at, "users": s.users,
                           "limited_by": s.users_limit, "quant": s.users_quant,
                           "context_per_user": s.estimate.context,
                           "decode": batched_json(s.users_decode)}
    return out
