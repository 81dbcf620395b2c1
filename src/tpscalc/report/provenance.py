"""Where a model's facts come from, and why its estimates may be approximated.

A model released after Epoch AI's last record (`Model.in_epoch_data` False) has no Epoch
record: its page says so and links its Hugging Face page instead. An architecture whose source
could not express some facts of its family (`Architecture.unexpressed`) gives estimates
flagged approximated; each missing fact has one sentence saying what it does to the figures.
"""
from __future__ import annotations

from collections.abc import Callable

from tpscalc.catalog.schema import Model


def N_(message: str) -> str:
    """Mark `message` for extraction; it is translated where it is shown."""
    return message


NOT_IN_EPOCH = N_("Not yet in Epoch AI's data")
# Architecture.unexpressed facts → what leaving them out does to the estimate.
REASONS: dict[str, str] = {
    "linear_attention_layers": N_(
        "its sources do not state which layers use linear attention (Gated DeltaNet, Mamba or "
        "short convolutions, which keep no growing cache), so every layer is counted with a "
        "full KV cache: the KV cache is overstated"),
    "sliding_window": N_(
        "its sources do not state its sliding-window layer pattern, so every layer is counted "
        "with a full KV cache: the KV cache is overstated at long context"),
    "kv_lora_rank": N_(
        "its sources do not state its compressed (latent) attention sizes, so the KV cache is "
        "counted as plain attention: it is overstated"),
    "num_shared_experts": N_(
        "its sources do not state its shared experts, so the weights may be understated"),
    "first_dense_layers": N_(
        "its sources do not state its leading dense layers, so the weights may be off"),
    "compressed_attention": N_(
        "its compressed attention (a sliding window plus keys compressed 4× and 128× in "
        "alternate layers) is not modelled: only the 128-token window is counted, so the KV "
        "cache is understated at long context"),
    "attention_layout": N_(
        "its architecture family is not modelled here: every layer is counted as plain "
        "attention, so the KV cache may be off"),
}


def source_note(model: Model, gettext: Callable[[str], str]) -> str | None:
    """"Not yet in Epoch AI's data: …" with the Hugging Face link, for a model Epoch lacks."""
    if model.in_epoch_data:
        return None
    return gettext("{label}: {model} was released after Epoch AI's last record; its facts come "
                   "from its Hugging Face page, {url}").format(
                       label=gettext(NOT_IN_EPOCH), model=model.name,
                       url=model.hf_url or "?")


def approximation_reasons(model: Model, gettext: Callable[[str], str]) -> tuple[str, ...]:
    """Why estimates of `model` are approximated, one sentence per missing fact."""
    arch = model.architecture
    if arch is None or model.file_weights is not None:
        return ()
    return tuple(gettext("Memory is approximated: {reason}.").format(
        reason=gettext(REASONS[f])) for f in arch.unexpressed if f in REASONS)


# Model.record["native_format_basis"] (tools/recent_models.py) → why that format, with the
# repository that shows it ({repo}) and the file type ({quant}).
NATIVE_BASES: dict[str, str] = {
    "qat_q4_0": N_("{repo} is trained for Q4_0 (quantization-aware training), so {quant} keeps "
                   "its quality"),
    "ternary": N_("{repo} ships ternary (1.58-bit) weights, which {quant} holds without loss "
                  "(TQ1_0 is smaller and slower)"),
    "fp4_experts": N_("{repo} ships FP4 experts and FP8 elsewhere; llama.cpp's nearest file type "
                      "is {quant} (MXFP4 experts, Q8_0 elsewhere)"),
    "fp8_config": N_("{repo} ships FP8 weights; llama.cpp has no FP8 file type, and its nearest "
                     "is {quant}"),
    "fp8_repo": N_("the lab publishes it in FP8 ({repo}); llama.cpp has no FP8 file type, and "
                   "its nearest is {quant}"),
    "int4_config": N_("{repo} ships its experts in INT4 (groups of 32 with one scale, "
                      "quantization-aware trained), which {quant} blocks hold exactly; the "
                      "other tensors, a few percent of the weights, are sized at {quant} too"),
}


def native_reason(model: Model, gettext: Callable[[str], str]) -> str | None:
    """Why the catalog build chose the model's native format, in the report's language."""
    basis = model.record.get("native_format_basis")
    if basis not in NATIVE_BASES or model.native_format is None:
        return None
    return gettext(NATIVE_BASES[str(basis)]).format(
        repo=model.record.get("native_format_repo") or model.hf_repo or "?",
        quant=model.native_format)
