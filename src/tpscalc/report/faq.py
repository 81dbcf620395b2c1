"""Texts of the model report computed from its figures: explanations, the six-step guide, the FAQ.

Every sentence goes through gettext with a plain English msgid and named `{placeholders}`
filled by str.format, so the .po catalogs translate whole sentences.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tpscalc.estimate.calibration_store import calibration
from tpscalc.estimate.runtime import LLAMA_CPP
from tpscalc.i18n import format_number, format_release, translator
from tpscalc.report import provenance
from tpscalc.report.common import FIT_WORDS, READING_SPEED_TOKENS_PER_S, gib, params_text, sig
from tpscalc.report.model_types import Row
from tpscalc.report.record import flop_text, number_field, text_field
from tpscalc.report.runtime_faq import runtime_faq
from tpscalc.report.types import Text

if TYPE_CHECKING:  # the model page's types (the card page does not import this module)
    from tpscalc.estimate.calibration import Band
    from tpscalc.report.model_types import ModelSummary


def _text(title: str, body: str) -> Text:
    return Text(title, body)


def organizations(s: ModelSummary) -> str:
    """The model's organization(s), comma-separated ("?" when unknown)."""
    return ", ".join(s.model.organization) or text_field(s.model, "organization") or "?"


def release(s: ModelSummary) -> str:
    """The model's publication month in the report's language."""
    return format_release(s.model.publication_date, "month", s.request.lang)


def _row_fields(row: Row, lang: str) -> dict[str, str]:
    """Placeholders describing one card's result."""
    tr = translator(lang)
    return {"gpu": row.card.name, "memory": format_number(row.card.memory_gib, lang, 0),
            "quant": row.estimate.quant or "—", "needs": gib(row.needs_gib, lang),
            "tps": sig(row.tokens_per_s, lang), "fit": tr.gettext(FIT_WORDS[row.estimate.fit])}


def explanations(s: ModelSummary) -> tuple[Text, ...]:
    """Dense versus MoE, where the memory figures come from, and what moves with context."""
    tr, lang, m = translator(s.request.lang), s.request.lang, s.model
    arch = m.architecture
    out = []
    if m.is_moe:
        out.append(_text(tr.gettext("Mixture of experts"), tr.gettext(
            "{model} is a mixture of experts: all {total} parameters must be in memory, but only "
            "about {active} are read per generated token, so it runs faster than its size "
            "suggests and the speed order follows bandwidth less closely.").format(
            model=m.name, total=params_text(m.parameters_total, s.request.lang),
            active=params_text(m.parameters_active, s.request.lang))))
    else:
        out.append(_text(tr.gettext("Dense model"), tr.gettext(
            "{model} is dense: every one of its {total} parameters is read for every generated "
            "token, which is why the speed order follows memory bandwidth so closely.").format(
            model=m.name, total=params_text(m.parameters_total, s.request.lang))))
    if arch is not None and arch.source:
        out.append(_text(tr.gettext("Where the memory figures come from"), tr.gettext(
            "Memory is computed from the model's architecture ({source}): {layers} layers, "
            "{kv_heads} key/value heads of {head_dim} dimensions, a vocabulary of {vocab} "
            "tokens.").format(source=arch.source, layers=arch.num_layers,
                              kv_heads=arch.num_kv_heads, head_dim=arch.head_dim,
                              vocab=format_number(arch.vocab_size, lang)))
                   )
    else:
        out.append(_text(tr.gettext("Where the memory figures come from"), tr.gettext(
            "Its architecture is not in our database, so memory is approximated from the "
            "parameter count and flagged as such; expect the real figure to differ, more so at "
            "long context.")))
    if s.kv_points:
        parts = [tr.gettext("{kv} GiB at {context} tokens").format(
            kv=gib(p.memory.kv_cache_gib, lang), context=format_number(p.context, lang))
            for p in s.kv_points]
        out.append(_text(tr.gettext("What moves with context"), tr.gettext(
            "The weights stay the same size whatever the conversation; the KV cache grows with "
            "it. At {quant}, the KV cache takes {points}.").format(
            quant=s.kv_points[0].quant, points="; ".join(parts))))
    return tuple(out)


def guide(s: ModelSummary) -> tuple[Text, ...]:
    """The six steps to choosing a card, with this model's figures."""
    tr, lang, name = translator(s.request.lang), s.request.lang, s.model.name
    small, fast = s.smallest, s.fastest
    needs = gib(small.needs_gib, lang) if small else "—"
    quant = (small.estimate.quant or "—") if small else "—"
    steps = [
        (
            tr.gettext("Start from the memory column"),
            tr.gettext(
                "{model} needs about {needs} GiB at {quant} on the smallest card that runs it. "
                "That figure, not a card's headline performance, decides whether it runs."
            ).format(model=name, needs=needs, quant=quant),
        ),
        (
            tr.gettext("Set the context length you will work at"),
            tr.gettext(
                "The conversation takes memory too and grows as it goes; at a long context a card "
                "that handles short questions easily may no longer hold {model}."
            ).format(model=name),
        ),
        (
            tr.gettext("Decide how much compression you accept"),
            tr.gettext(
                "Each card runs the least compressed copy it can hold, down to {quant} on the "
                "smallest card that fits. A minimum quality removes cards that only manage by "
                "squeezing harder than you want."
            ).format(quant=quant),
        ),
        (
            tr.gettext("Sort by speed"),
            tr.gettext(
                "Tokens per second follow memory bandwidth rather than core counts, so the order "
                "is not a gaming ranking. The top card is {gpu}, at {tps} tok/s."
            ).format(
                gpu=fast.card.name if fast else "—",
                tps=sig(fast.tokens_per_s, lang) if fast else "—",
            ),
        ),
        (
            tr.gettext("Look at the margin, not just the fit"),
            tr.gettext(
                "Tight means it loads and runs with no room to raise the context later; "
                "comfortable means you can. That difference matters more than a few tokens per "
                "second."
            ),
        ),
        (
            tr.gettext("Open the card you chose"),
            tr.gettext(
                "A card's own report lists every other model it can hold: the next question once "
                "you have settled on {model}."
            ).format(model=name),
        ),
    ]
    return tuple(_text(t, b) for t, b in steps)


def notes(s: ModelSummary) -> tuple[str, ...]:
    """Caveats printed under the table."""
    tr = translator(s.request.lang)
    out = [
        tr.gettext(
            "Speeds are estimates for a single request (one conversation at a time), computed from "
            "memory bandwidth, model size and quantization; real speed varies with the inference "
            "software and its version. Vendors' published figures measure many simultaneous "
            "requests and are much higher."
        )
    ]
    source = provenance.source_note(s.model, tr.gettext)
    if source is not None:
        out.append(source)
    if s.model.architecture is None:
        out.append(tr.gettext("Memory is approximated from the parameter count."))
    out.extend(provenance.approximation_reasons(s.model, tr.gettext))
    if not s.model.runs_in_llama_cpp:
        out.append(tr.gettext(
            "{model} is not an architecture llama.cpp runs (no GGUF file of it exists): it has "
            "no decode speed, and the cards are listed by the memory its weights would "
            "need.").format(model=s.model.name))
    elif not s.model.generates:
        out.append(tr.gettext(
            "{model} writes no text (an embedding, reranker, classifier or reading model): it "
            "has no decode speed, and the cards are listed by the memory it needs.").format(
                model=s.model.name))
    native = LLAMA_CPP.native_format(s.model)
    if native is not None and s.model.file_weights is None:
        out.append(tr.gettext(
            "{model} ships quantized: {quant} is its native format, offered first; below it "
            "only conversions that make the file smaller.").format(model=s.model.name,
                                                                  quant=native))
        why = provenance.native_reason(s.model, tr.gettext)
        if why is not None:  # what the model ships, as the catalog build found it
            out.append(tr.gettext("Why {quant}: {reason}.").format(quant=native, reason=why))
    out.append(tr.gettext("Memory in GiB (2^30 bytes), bandwidth in GB/s (10^9 bytes/s)."))
    return tuple(out)


def model_faq(s: ModelSummary) -> tuple[Text, ...]:
    """The FAQ with answers computed from this report's figures."""
    parts = (_faq_record(s), _faq_running(s), _faq_serving(s),
             runtime_faq(s.model.name, s.runtimes, s.request.lang), _faq_sizes(s),
             _faq_quant_16(s), _faq_identity(s))
    return tuple(item for part in parts for item in part)


SERVING_FAQ_USERS = 10  # "Which card serves 10 users of X at 20 tok/s each?"
SERVING_FAQ_TOK_S = 20.0


def _faq_serving(s: ModelSummary) -> list[Text]:
    """Which of the fastest and smallest cards serves ten users at 20 tok/s each
    (estimate/serving.py), each holding the report's context."""
    from dataclasses import replace

    from tpscalc.estimate.serving import users_at_estimate

    if not s.model.generates or not s.request.rig.is_default:
        return []
    tr, lang = translator(s.request.lang), s.request.lang
    query = s.request.query
    seen: dict[str, tuple[int, Row]] = {}
    sized = (best for _, best, _ in s.by_size if best is not None)  # 12, 16, 24 GB ... cards
    for row in (*s.fastest_ten, *s.smallest_cards, *sized):
        e = row.estimate
        if row.card.name in seen or not e.fits or e.decode is None:
            continue
        at = query if e.context == query.context else replace(query, context=e.context)
        seen[row.card.name] = (users_at_estimate(s.model, row.card, at, e,
                                                 SERVING_FAQ_TOK_S)[0], row)
    if not seen:
        return []
    question = tr.gettext("Which card serves {users} users of {model} at {speed} tok/s "
                          "each?").format(users=SERVING_FAQ_USERS, model=s.model.name,
                                          speed=format_number(SERVING_FAQ_TOK_S, lang))
    enough = [(r.card.memory_gib, n, r) for n, r in seen.values() if n >= SERVING_FAQ_USERS]
    context = format_number(query.context, lang)
    if enough:
        _, n, row = min(enough, key=lambda x: (x[0], -x[1]))
        body = tr.gettext(
            "Of the fastest, the smallest and the best card of each memory size that run it, the "
            "one with the least memory that serves {users} users at {speed} tok/s each, each "
            "with {context} tokens of context, is {gpu} ({memory} GiB, {quant}): up to {most} "
            "users at that speed (llama-server --parallel).")
    else:
        n, row = max(seen.values(), key=lambda x: (x[0], x[1].card.memory_gib))
        body = tr.gettext(
            "None of the fastest, the smallest and the best card of each memory size that run it "
            "serves {users} users at "
            "{speed} tok/s each with {context} tokens of context; the most is {most} on {gpu} "
            "({memory} GiB, {quant}). Fewer users, a shorter context or several cards help.")
    return [_text(question, body.format(
        users=SERVING_FAQ_USERS, speed=format_number(SERVING_FAQ_TOK_S, lang), context=context,
        gpu=row.card.name, memory=format_number(row.card.memory_gib, lang, 0),
        quant=row.estimate.quant or "—", most=format_number(n, lang)))]


def _q(s: ModelSummary, question: str) -> str:
    return translator(s.request.lang).gettext(question).format(model=s.model.name)


def _faq_record(s: ModelSummary) -> list[Text]:
    """Release, use, download, training compute."""
    tr, m = translator(s.request.lang), s.model
    domain = text_field(m, "domain") or "?"
    task = text_field(m, "task") or "?"
    if m.hf_repo:
        download = tr.gettext(
            "The weights are on Hugging Face: https://huggingface.co/{repo}. "
            "For llama.cpp, look for a GGUF conversion of that repository."
        ).format(repo=m.hf_repo)
    else:
        download = tr.gettext(
            "The weights are published, but we hold no repository link for "
            "them. This tool computes hardware needs; it hosts no model files."
        )
    flop = number_field(m, "training_compute_flop")
    compute = (
        tr.gettext(
            "Training took about {flop}. That measures what producing the model "
            "cost and says nothing about how fast it answers: inference speed "
            "comes from memory bandwidth."
        ).format(flop=flop_text(flop))
        if flop
        else tr.gettext("Epoch AI's record gives no training compute for it.") if m.in_epoch_data
        else tr.gettext("It is not yet in Epoch AI's data, which is where training compute "
                        "figures come from.")
    )
    return [
        _text(
            _q(s, "{model}: when was it released?"),
            tr.gettext(
                "It was published in {date}. Capability per parameter has improved a lot since, so "
                "a newer model of the same size is often the better use of the same hardware."
            ).format(date=release(s)),
        ),
        _text(
            _q(s, "{model}: what is it used for?"),
            tr.gettext(
                "It works in the domain of {domain} and is recorded as doing {task}."
            ).format(domain=domain, task=task),
        ),
        _text(_q(s, "{model}: where can I download it?"), download),
        _text(_q(s, "{model}: how much compute was used to train it?"), compute),
    ]


def _faq_running(s: ModelSummary) -> list[Text]:
    """Offload, two GPUs, quantization levels, accuracy, which GPU, how fast, how much VRAM."""
    tr, lang = translator(s.request.lang), s.request.lang
    miss = s.closest_miss
    ram_gib = s.request.rig.ram_gib
    offload = tr.gettext(
        "Partly. Layers that do not fit stay in system memory and run at a fraction of the "
        "speed, so a mostly offloaded model is rarely worth it. Every figure here assumes the "
        "whole model is on the card."
    ) if ram_gib is None else tr.gettext(
        "Yes, with system RAM: this page counts {ram} GiB of it. Where the card is too small, "
        "llama.cpp keeps the rest of the weights in RAM (mixture-of-experts expert tensors "
        "first), and the row says how much; those rows run at a fraction of the speed, set by "
        "the RAM's bandwidth."
    ).format(ram=format_number(ram_gib, lang))
    if miss is not None and miss.estimate.short_by_gib is not None:
        offload += " " + tr.gettext(
            "The closest miss is {gpu} ({memory} GiB), short by {short} GiB."
        ).format(
            gpu=miss.card.name,
            memory=format_number(miss.card.memory_gib, lang),
            short=gib(miss.estimate.short_by_gib, lang),
        )
    levels = len(s.quant_levels)
    out = [
        _text(_q(s, "{model}: can I run it if it does not fit my GPU?"), offload),
        _text(
            _q(s, "{model}: would two GPUs be faster?"),
            tr.gettext(
                "Two cards buy memory, not speed: llama.cpp splits the layers and each token still "
                "passes through them one card after the other. That only matters when one card "
                "cannot hold it; {count} of our cards can."
            ).format(count=s.cards_fit),
        ),
        _text(
            _q(s, "{model}: why does the quantization differ between cards?"),
            tr.ngettext(
                "A bigger card holds a more precise copy. The cards that run it use {n} "
                "quantization level ({levels}).",
                "A bigger card holds a more precise copy. The cards that run it use {n} "
                "quantization levels ({levels}).",
                levels,
            ).format(n=levels, levels=", ".join(s.quant_levels) or "—"),
        ),
        _text(_q(s, "{model}: how accurate are these speed estimates?"), _accuracy(s)),
    ]
    return out + _faq_which(s)


def _accuracy(s: ModelSummary) -> str:
    """The range of the fastest result, plus our measured error when calibration data has it."""
    tr, lang = translator(s.request.lang), s.request.lang
    text = tr.gettext(
        "They are estimates with real error bars, and any of them can land anywhere in its range "
        "depending on the runtime you use. The same model on the same card varies by thirty to "
        "fifty percent with the inference software and its version."
    )
    f = s.fastest
    if f is not None and f.estimate.decode is not None:
        d = f.estimate.decode
        text += " " + tr.gettext("The fastest result here: {low}–{high} tok/s on {gpu}.").format(
            low=sig(d.low, lang), high=sig(d.high, lang), gpu=f.card.name
        )
        if d.tokens_per_s > 0:
            # the range's own ratios: the band of measurements like this one (its card's class
            # and backend, a MoE's or a deep cache's, an unmeasured model's), not the level's
            text += " " + tr.gettext(
                "That is {low} to {high} times our estimate of {estimate} tok/s: the spread of "
                "measured speeds around our estimates in measurements like this one (its card's "
                "class and backend, the model's kind, the depth of its context)."
            ).format(
                low=format_number(d.low / d.tokens_per_s, lang, 2),
                high=format_number(d.high / d.tokens_per_s, lang, 2),
                estimate=sig(d.tokens_per_s, lang),
            )
    band = _calibration_band(f.estimate.decode.confidence) if (f and f.estimate.decode) else None
    if band is not None and band.n:
        text += " " + tr.gettext(
            "Across all {n} llama.cpp measurements our calibration holds at this confidence "
            "level, the measured speed fell between {low} and {high} times the estimate."
        ).format(
            n=band.n,
            low=format_number(band.low_ratio, lang, 2),
            high=format_number(band.high_ratio, lang, 2),
        )
    else:
        text += " " + tr.gettext("(No calibration figures are available in this build.)")
    return text


def _calibration_band(confidence: str) -> Band | None:
    """The decode band (measured ÷ estimate quantiles) at `confidence` (None if not calibrated)."""
    return calibration().decode_bands.get(confidence)


def _faq_which(s: ModelSummary) -> list[Text]:
    """Which GPU, how fast, how much VRAM."""
    tr, lang = translator(s.request.lang), s.request.lang
    small, fast = s.smallest, s.fastest
    if small is None or (fast is None and s.model.generates):  # no text written: no fastest
        nothing = tr.gettext(
            "None of our {total} cards holds it entirely, even at the most "
            "compressed level allowed."
        ).format(total=s.cards_total)
        return [
            _text(_q(s, q), nothing)
            for q in (
                "{model}: which GPU do I need to run it?",
                "{model}: how fast is it on a GPU?",
                "{model}: how much VRAM does it need?",
            )
        ]
    f = _row_fields(small, lang)
    return [
        _text(
            _q(s, "{model}: which GPU do I need to run it?"),
            (tr.gettext(
                "The smallest card in our catalog that holds it is {gpu}, with {memory} GiB. It "
                "runs the model at {quant} using about {needs} GiB and produces about {tps} tokens "
                "per second. Cards able to run it in all: {count}."
            ) if s.model.generates else tr.gettext(
                "The smallest card in our catalog that holds it is {gpu}, with {memory} GiB. It "
                "runs the model at {quant} using about {needs} GiB. Cards able to run it in all: "
                "{count}.")).format(count=s.cards_fit, **f),
        ),
        _text(
            _q(s, "{model}: how fast is it on a GPU?"),
            tr.gettext(
                "It depends on the card. The fastest we compute is {gpu}, at about {tps} tokens "
                "per second; the median over the cards that run it is {median}. Reading speed is "
                "about {reading} tokens per second, and {count} cards reach it."
            ).format(
                gpu=fast.card.name,
                tps=sig(fast.tokens_per_s, lang),
                median=sig(s.median_tokens_per_s or 0.0, lang),
                reading=format_number(READING_SPEED_TOKENS_PER_S, lang),
                count=s.reading_speed_cards,
            ) if fast is not None else tr.gettext(
                "{model} writes no text, so it has no generation speed: it reads its input "
                "(embeddings, scores or labels) at the prompt-processing speed the table gives."
            ).format(model=s.model.name),
        ),
        _text(
            _q(s, "{model}: how much VRAM does it need?"),
            tr.gettext(
                "About {needs} GiB at {quant}, on the smallest card that runs it, at a context of "
                "{context} tokens. Less compression needs more: the memory column is recomputed "
                "for each card, as each holds the least compressed copy it can."
            ).format(context=format_number(s.request.query.context, lang), **f),
        ),
    ]


def _faq_sizes(s: ModelSummary) -> list[Text]:
    """ "Can I run it on a 12 / 16 / 24 GB GPU?" with the best card of each size."""
    tr, lang = translator(s.request.lang), s.request.lang
    out = []
    for size, best, miss in s.by_size:
        question = tr.gettext("{model}: can I run it on a GPU with {size} GB?").format(
            model=s.model.name, size=size
        )
        if best is not None:
            answer = (tr.gettext(
                "Yes. The {gpu}, with {memory} GiB, runs it at {quant}, using about {needs} GiB "
                "and generating about {tps} tokens per second. The fit is {fit}."
            ) if s.model.generates else tr.gettext(
                "Yes. The {gpu}, with {memory} GiB, runs it at {quant}, using about {needs} GiB. "
                "The fit is {fit}.")).format(**_row_fields(best, lang))
        elif miss is not None and miss.estimate.short_by_gib is not None:
            answer = tr.gettext(
                "Not entirely. Even the best {size} GB card, the {gpu}, is short by {short} GiB; "
                "the rest would have to be offloaded to system memory."
            ).format(size=size, gpu=miss.card.name, short=gib(miss.estimate.short_by_gib, lang))
        else:
            answer = tr.gettext("We have no {size} GB card to compute it on.").format(size=size)
        out.append(_text(question, answer))
    return out


QUANT_FAQ_GIB = 16  # "which quantization should I use on a 16 GB card?"


def _faq_quant_16(s: ModelSummary) -> list[Text]:
    """ "Which quantization on a 16 GB card?": the best 16 GB card's quantization with its speed
    and quality, and what the next smaller one would give (decode follows the bytes read)."""
    from tpscalc.catalog.quants import get_quant, ladder_names
    from tpscalc.report.quality import kld_text, quality_json

    best = next((b for size, b, _ in s.by_size if size == QUANT_FAQ_GIB), None)
    if best is None or not s.model.generates or not best.estimate.quant:
        return []
    tr, lang, quant = translator(s.request.lang), s.request.lang, best.estimate.quant
    here = quality_json(s.model, quant)
    if here is None:
        return []
    fields = _row_fields(best, lang) | {"kld": kld_text(here["kld"], lang),
                                        "words": tr.gettext(here["words"]),
                                        "top1": sig(here["top1_agree_pct"], lang)}
    answer = tr.gettext(
        "On the {gpu}, {quant} fits and generates about {tps} tokens per second; its KL "
        "divergence from the 16-bit weights is about {kld} ({words}), and the top token agrees "
        "{top1} % of the time.").format(**fields)
    ladder = ladder_names()
    smaller = ladder[ladder.index(quant) + 1] if quant in ladder[:-1] else None
    there = quality_json(s.model, smaller) if smaller else None
    if smaller and there is not None:
        speedup = get_quant(quant).bits_per_weight / get_quant(smaller).bits_per_weight
        answer += " " + tr.gettext(
            "{smaller} would be about {speedup}× as fast (fewer bytes read per token) at a KLD "
            "of about {kld} ({words}).").format(
                smaller=smaller, speedup=sig(speedup, lang, 2), kld=kld_text(there["kld"], lang),
                words=tr.gettext(there["words"]))
    answer += " " + tr.gettext(
        "Ask for a speed with --min-tps and the highest quality that still reaches it is "
        "chosen.")
    question = tr.gettext("{model}: which quantization should I use on a {size} GB card?")
    return [_text(question.format(model=s.model.name, size=QUANT_FAQ_GIB), answer)]


def _faq_identity(s: ModelSummary) -> list[Text]:
    """Open source, parameters, who made it."""
    tr, m = translator(s.request.lang), s.model
    access = text_field(m, "model_accessibility") or tr.gettext("open weights")
    code = text_field(m, "training_code_accessibility")
    params = tr.gettext("It has {total} parameters.").format(
        total=params_text(m.parameters_total, s.request.lang))
    if m.parameters_active < m.parameters_total * 0.99:
        params += " " + tr.gettext("About {active} of them are active per token.").format(
            active=params_text(m.parameters_active, s.request.lang)
        )
    params += " " + tr.gettext(
        "The total decides how much memory it needs: about half a gigabyte per billion "
        "parameters at the 4-bit compression most people use."
    )
    where = tr.gettext("It was published by {org}.").format(org=organizations(s))
    country = text_field(m, "country_of_organization")
    kind = text_field(m, "organization_categorization")
    if country:
        where += " " + tr.gettext("Country: {country}.").format(country=country)
    if kind:
        where += " " + tr.gettext("Kind of organization: {kind}.").format(kind=kind)
    open_text = tr.gettext(
        "Its weights are published ({access}), so you can download it and run it on your own "
        "hardware. Open weights are not open source in the full sense: that says nothing "
        "about the training data or terms."
    ).format(access=access)
    if code:
        open_text += " " + tr.gettext("Training code: {code}.").format(code=code)
    return [
        _text(_q(s, "{model}: is it open source?"), open_text),
        _text(_q(s, "{model}: how many parameters does it have?"), params),
        _text(_q(s, "{model}: who made it?"), where),
    ]
