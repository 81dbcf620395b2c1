"""Pieces both reports share: the engine they call, sorting, medians, JSON forms, number formats."""
from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, cast

from tpscalc.catalog.quants import ladder_names
from tpscalc.catalog.schema import Model
from tpscalc.estimate.query import Query, Rig
from tpscalc.estimate.types import Estimate, MemoryBreakdown
from tpscalc.report.types import fitting_tokens_per_s

if TYPE_CHECKING:  # placements come with rigs of several devices (estimate/rig_engine.py)
    from tpscalc.estimate.placement import Placement
    from tpscalc.report.model_types import Row  # the model page's (a card page loads none)

GIB = 2**30
READING_SPEED_TOKENS_PER_S = 10.0  # roughly how fast people read; the seed pages use ~10 tok/s
quant_names = ladder_names  # the ladder the reports offer (one seam, so tests can use a fake one)


def N_(message: str) -> str:
    """Mark `message` for extraction; it is translated where it is shown."""
    return message


# The words for Estimate.fit (FitLabel), one table for the site, the CLI and the texts: the rig
# values (offload, cpu) were missing and showed as English codes on es/nl pages.
FIT_LABELS: dict[str, str] = {
    "comfortable": N_("Comfortable"),
    "tight": N_("Tight"),
    "offload": N_("Offload to RAM"),
    "cpu": N_("CPU only"),
    "paging": N_("Pages from storage"),
    "no": N_("Does not fit"),
}
# The same, inside a sentence ("The fit is {fit}.").
FIT_WORDS: dict[str, str] = {
    "comfortable": N_("comfortable"),
    "tight": N_("tight"),
    "offload": N_("partial, with the rest offloaded to system RAM"),
    "cpu": N_("CPU only, in system RAM"),
    "paging": N_("partial, with more in system RAM than it can hold: the rest pages from "
                 "storage"),
    "no": N_("no"),
}


class Engine(Protocol):
    """What the reports need from the estimation engine (`tpscalc.estimate.engine`)."""

    def estimate(self, model: Model, rig: Rig, query: Query,
                 quant: str | None = None, *, placed: bool = True) -> Estimate: ...

    def estimate_on_rigs(self, model: Model, rigs: Sequence[Rig],
                         query: Query) -> list[Estimate]: ...

    def estimate_models_on_rig(self, models: Sequence[Model], rig: Rig,
                               query: Query) -> list[Estimate]: ...

    def memory_at(self, model: Model, quant: str, query: Query) -> MemoryBreakdown: ...

    def compare_runtimes(self, model: Model, rig: Rig, query: Query) -> list[Estimate]: ...


def default_engine() -> Engine:
    """The real engine; builders take another through their `engine` argument (tests do)."""
    from tpscalc.estimate import engine  # the engine and the weight table load on first use

    return cast(Engine, engine)


def sort_by_speed(rows: Sequence[Row]) -> list[Row]:
    """Fitting rows fastest first (newest card first on ties), then the others.

    The others come closest miss first.
    """
    fit = [r for r in rows if r.estimate.fits]
    # the key read directly (a rig report sorts ~850 rows three times)
    fit.sort(key=lambda r: (-round(fitting_tokens_per_s(r.estimate), 6),
                            _neg_date_of(r.card.release_date or "")))
    miss = [r for r in rows if not r.estimate.fits]
    miss.sort(key=lambda r: (r.estimate.short_by_gib or 0.0, -r.card.memory_gib))
    return fit + miss


@cache  # a report sorts ~1,000 rows over a few hundred distinct dates
def _neg_date_of(date: str) -> tuple[int, ...]:
    """Key that puts later release dates first ("": unknown, last)."""
    if not date:
        return (1,)
    y, m, d = (int(p) for p in date.split("-"))
    return (0, -y, -m, -d)


def smallest_first(rows: Sequence[Row]) -> list[Row]:
    """Fitting rows by card memory, smallest first (fastest first at equal memory)."""
    fit = [r for r in rows if r.estimate.fits]
    return sorted(fit, key=lambda r: (r.card.memory_gib, -r.tokens_per_s, r.card.name))


def median_tokens_per_s(rows: Sequence[Row]) -> float | None:
    """Median decode speed over the rows that fit, tokens/s."""
    speeds = [r.tokens_per_s for r in rows if r.estimate.fits]
    if not speeds:
        return None
    # statistics.median's own arithmetic, without its imports (fractions, decimal: ~5 ms)
    speeds.sort()
    half = len(speeds) // 2
    return speeds[half] if len(speeds) % 2 else (speeds[half - 1] + speeds[half]) / 2


def memory_json(m: MemoryBreakdown) -> dict[str, Any]:
    """JSON form of a memory breakdown, GiB."""
    return {
        "weights_gib": m.weights_gib,
        "kv_cache_gib": m.kv_cache_gib,
        "runtime_gib": m.runtime_gib,
        "vision_gib": m.vision_gib,
        "total_gib": m.total_gib,
        "approximated": m.approximated,
    }


def decode_json(e: Estimate) -> dict[str, Any] | None:
    """JSON form of the decode estimate, tokens/s (None when it does not fit)."""
    d = e.decode
    if d is None:
        return None
    return {
        "tokens_per_s": d.tokens_per_s,
        "low": d.low,
        "high": d.high,
        "confidence": d.confidence,
        "bound": d.bound,
        "measured": d.measured,
    }


def prefill_json(e: Estimate) -> dict[str, Any] | None:
    """JSON form of the prompt-processing estimate, tokens/s and seconds."""
    p = e.prefill
    if p is None:
        return None
    return {
        "tokens_per_s": p.tokens_per_s,
        "low": p.low,
        "high": p.high,
        "time_to_first_token_s": p.time_to_first_token_s,
    }


def estimate_json(e: Estimate, model_file: str | None = None) -> dict[str, Any]:
    """The public JSON form of one estimate (`tpscalc estimate --json`, the Python API);
    model_file: the GGUF the user gave, named in the llama-server command."""
    return {
        "model": e.model,
        "gpu": e.gpu,
        "quant": e.quant,
        "context": e.context,
        "backend": e.backend,
        "memory": memory_json(e.memory),
        "fits": e.fits,
        "fit": e.fit,
        "decode": decode_json(e),
        "prefill": prefill_json(e),
        "short_by_gib": e.short_by_gib,
        "test": test_json(e),
        "measured": measured_json(e),
        "error": None,
        "runtime": e.runtime,
        "tensor_parallel": e.tensor_parallel,
        "run": run_json(e),
    } | rig_json(e, model_file)


def runtime_row_json(e: Estimate) -> dict[str, Any]:
    """One runtime's answer in the "which runtime is fastest here" comparison."""
    return {"runtime": e.runtime, "quant": e.quant, "fits": e.fits, "context": e.context,
            "tensor_parallel": e.tensor_parallel,
            "decode_tokens_per_s": e.decode.tokens_per_s if e.decode and e.fits else None,
            "prefill_tokens_per_s": e.prefill.tokens_per_s if e.prefill and e.fits else None,
            "memory_gib": e.memory.total_gib}


def run_json(e: Estimate) -> dict[str, Any] | None:
    """The command that realises the estimate in its runtime, and its settings."""
    r = e.run
    if r is None:
        return None
    return {"command": r.command, "settings": dict(r.settings)}


def rig_json(e: Estimate, model_file: str | None = None) -> dict[str, Any]:
    """A rig's placement, offload share and llama.cpp / ollama settings (empty for one card;
    no settings when the model does not fit: no command runs it)."""
    p = e.placement
    if p is None:
        return {}
    return {"placement": placement_json(p), "offload_share": e.offload_share,
            "command": command_json(e, p, model_file) if e.fits else None}


def rig_row_json(e: Estimate) -> dict[str, Any]:
    """A report row's split on a rig (empty on one card alone): the share of the weights in
    system RAM, the layers left on the CPU and the --n-cpu-moe layers."""
    p = e.placement
    if p is None:
        return {}
    return {"offload_share": e.offload_share, "cpu_layers": p.cpu_layers,
            "n_cpu_moe": p.n_cpu_moe, "n_gpu_layers": p.n_gpu_layers}


def placement_json(p: Placement) -> dict[str, Any]:
    """Where the model sits: per GPU and in system RAM, GiB."""
    return {
        "devices": [{"name": d.name, "layers": d.layers,
                     "weights_gib": round(d.weights_bytes / GIB, 3),
                     "kv_cache_gib": round(d.kv_bytes / GIB, 3),
                     "buffers_gib": round(d.buffer_bytes / GIB, 3),
                     "total_gib": round(d.total_bytes / GIB, 3)} for d in p.devices],
        "cpu": {"layers": p.cpu_layers, "expert_layers": p.cpu_expert_layers,
                "weights_gib": round(p.cpu_weights_bytes / GIB, 3)},
        "n_gpu_layers": p.n_gpu_layers,
        "n_cpu_moe": p.n_cpu_moe,
        "tensor_split": list(p.tensor_split),
    }


def command_json(e: Estimate, p: Placement, model_file: str | None = None) -> dict[str, Any]:
    """The llama-server arguments and ollama options that realise the placement; `-m` names
    model_file (the user's GGUF) when given, else the file name a download would have."""
    from tpscalc.estimate.commands import gguf_file, llama_server_args

    file = shlex.quote(model_file) if model_file else gguf_file(e)
    return {"llama_server": " ".join(llama_server_args(e, file, p)),
            "ollama": {"num_ctx": e.context, "num_gpu": p.n_gpu_layers}}


# The smallest model in the calibration's measurements: TinyLlama 1.1B Q4_K_M, 0.62 GiB
# (data/measured/llamacpp_extra_calibration.csv, geerlingguy/ai-benchmarks' Vulkan rows;
# tests/sources/test_file_answers.py reads it there). A model under a tenth of that (a toy or
# test file) is far outside what the speed model was fitted on: its speeds are extrapolated, so
# they never carry more than "low" confidence.
SMALLEST_MEASURED_GIB = 0.62
OUTSIDE_MEASURED_SHARE = 0.1


def outside_measured_range(weights_gib: float) -> bool:
    """Whether weights of `weights_gib` GiB are far below every measured model's."""
    return weights_gib < SMALLEST_MEASURED_GIB * OUTSIDE_MEASURED_SHARE


def within_measured_confidence(e: Estimate) -> Estimate:
    """`e`, its decode confidence lowered to "low" when the model is outside the measured
    range (outside_measured_range)."""
    d = e.decode
    if d is None or d.confidence == "low" or not outside_measured_range(e.memory.weights_gib):
        return e
    return replace(e, decode=replace(d, confidence="low"))


def measured_json(e: Estimate) -> dict[str, Any] | None:
    """Held llama.cpp measurements of this card, model and quant, tokens/s, with their source."""
    m = e.measured
    if m is None:
        return None
    return {"decode_tokens_per_s": m.decode_tokens_per_s, "decode_test": m.decode_test,
            "prefill_tokens_per_s": m.prefill_tokens_per_s, "prefill_test": m.prefill_test,
            "source": m.source}


def test_json(e: Estimate) -> dict[str, Any] | None:
    """The llama-bench conditions the speeds are for (n_prompt, n_gen, depth, flash_attn,
    n_ubatch)."""
    t = e.test
    if t is None:
        return None
    return {"n_prompt": t.n_prompt, "n_gen": t.n_gen, "depth": t.depth,
            "flash_attn": t.flash_attn, "n_ubatch": t.n_ubatch}


def highlight_json(row: Row | None) -> dict[str, Any] | None:
    """`{gpu, memory_gib, quant, decode_tokens_per_s, needs_gib}` for a headline card."""
    if row is None:
        return None
    return {
        "gpu": row.card.name,
        "slug": row.card.slug,
        "memory_gib": row.card.memory_gib,
        "quant": row.estimate.quant,
        "decode_tokens_per_s": row.tokens_per_s,
        "needs_gib": row.needs_gib,
        "fit": row.estimate.fit,
    }


def sig(value: float, lang: str = "en", figures: int = 3) -> str:
    """`value` to `figures` significant figures in the locale's style.

    For example "226", "94.9", "75", "6.25".
    """
    from tpscalc.i18n import format_number

    if value == 0:
        return "0"
    whole = len(str(int(abs(value)))) if abs(value) >= 1 else 0
    digits = max(0, figures - whole) if whole else figures
    rounded = round(value, digits)
    while digits > 0 and round(rounded, digits - 1) == rounded:
        digits -= 1
    return format_number(rounded, lang, digits)


def gib(value: float, lang: str = "en") -> str:
    """A memory figure in GiB with one decimal ("16.8")."""
    from tpscalc.i18n import format_number

    return format_number(value, lang, 1)


def params_text(n: float, lang: str = "en") -> str:
    """A parameter count as "15B", "15.5B", "1.2T" (the decimal mark of `lang`: "15,5B" es)."""
    from tpscalc.i18n import separators

    if n >= 1e12:
        text = f"{n / 1e12:.3g}T"
    elif n >= 1e9:
        text = f"{n / 1e9:.3g}B"
    else:
        text = f"{n / 1e6:.3g}M"
    return text.replace(".", separators(lang)[1])
