"""The serving and speculative-decoding lines under `tpscalc estimate`'s table, in a language."""
from __future__ import annotations

from typing import Any


def serving_lines(r: dict[str, Any], lang: str) -> list[str]:
    """One line per serving figure of estimate `r` (its `serving` and `speculative` blocks)."""
    from tpscalc.i18n import format_number, translator
    from tpscalc.report.common import sig

    tr = translator(lang)
    out = []
    s = r.get("serving")
    if s:
        mem, d = s["memory"], s["decode"]
        n = format_number(s["parallel"], lang)
        total = format_number(mem["total_gib"], lang, 1)
        if s["parallel"] == 1 and s.get("users_at"):
            pass  # only the number of users was asked
        elif d is not None:
            text = tr.gettext("{n} users at once: {total} GiB with {kv} GiB of KV cache; "
                              "{aggregate} tok/s in all, {per_user} tok/s each ({low}–{high}); "
                              "first token {ttft} s; {command}")
            out.append(text.format(
                n=n, total=total, kv=format_number(mem["kv_cache_gib"], lang, 1),
                aggregate=sig(d["aggregate_tokens_per_s"], lang),
                per_user=sig(d["per_user_tokens_per_s"], lang), low=sig(d["per_user_low"], lang),
                high=sig(d["per_user_high"], lang),
                ttft=format_number(s["time_to_first_token_s"] or 0.0, lang, 2),
                command=s["command"]["llama_server"]))
        else:
            text = tr.gettext("{n} users at once do not fit: {total} GiB needed, {usable} GiB "
                              "usable")
            out.append(text.format(n=n, total=total,
                                   usable=format_number(mem["usable_gib"], lang, 1)))
        u = s.get("users_at")
        if u:
            text = (tr.gettext("Users at {target} tok/s each: {users} at {quant} (memory limits "
                               "more)")
                    if u["limited_by"] == "memory" else
                    tr.gettext("Users at {target} tok/s each: {users} at {quant} (speed limits "
                               "more)"))
            out.append(text.format(target=sig(u["target_tokens_per_s"], lang),
                                   users=format_number(u["users"] or 0, lang),
                                   quant=u["quant"] or "—"))
    sp = r.get("speculative")
    if sp:
        text = tr.gettext("{method}: {low}–{high}× the speed ({speed} tok/s), {extra} GiB more; "
                          "{command}")
        out.append(text.format(
            method=sp["method"], low=format_number(sp["speedup"]["low"], lang, 2),
            high=format_number(sp["speedup"]["high"], lang, 2),
            speed=sig(sp["decode_tokens_per_s"], lang),
            extra=format_number(sp["extra_memory_gib"], lang, 2),
            command=sp["command"]["llama_server"]))
    return out
