"""The speculative-decoding part of an estimate as plain data (draft model or MTP)."""
from __future__ import annotations

from typing import Any

from tpscalc.catalog.schema import Model
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.types import Estimate


def speculative_json(model: Model, rig: Rig, query: Query, e: Estimate, draft: str | None,
                     mtp: bool) -> dict[str, Any]:
    """The `speculative` block of `tpscalc estimate --draft NAME` / `--mtp` JSON; a draft
    name the catalog does not know raises NameNotFoundError (bad input)."""
    from tpscalc.catalog import get_model
    from tpscalc.estimate.serving import speculative_estimate

    s = speculative_estimate(model, rig, query, e, None if mtp and not draft else
                             get_model(draft or ""))
    low, typical, high = s.speedup
    return {
        "method": s.method, "draft": s.draft, "draft_quant": s.draft_quant,
        "draft_tokens": s.draft_tokens,
        "extra_memory_gib": round(s.extra_memory_gib, 3),
        "total_gib": round(e.memory.total_gib + s.extra_memory_gib, 3), "fits": s.fits,
        "speedup": {"low": round(low, 2), "typical": round(typical, 2), "high": round(high, 2)},
        "decode_tokens_per_s": round(s.decode_tokens_per_s, 2),
        "decode_range": {"low": round((e.decode.low if e.decode else 0) * low, 2),
                         "high": round((e.decode.high if e.decode else 0) * high, 2)},
        "acceptance": dict(zip(("low", "typical", "high"), s.acceptance, strict=True)),
        "sources": list(s.sources),
        "command": {"llama_server": f"llama-server {_args(model, e)} {s.llama_server}"},
        **({"note": "needs a GGUF that keeps the MTP layers (llama.cpp PR #22673; e.g. "
                    "unsloth/Qwen3.6-27B-MTP-GGUF)"} if s.method == "mtp" else {}),
    }


def _args(model: Model, e: Estimate) -> str:
    """The estimate's own llama-server arguments (its placement's), else -m -c -ngl 99."""
    from tpscalc.report.common import command_json

    if e.placement is not None and e.quant is not None:
        return str(command_json(e, e.placement)["llama_server"])
    return f"-m {'-'.join(model.name.split())}-{e.quant}.gguf -c {e.context} -ngl 99"
