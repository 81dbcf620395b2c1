"""The hot commands without Typer: `tpscalc model NAME`, `card NAME` and `estimate --model M
--card C`, parsed by a small parser built from the same request table (`report.request.PARAMS`)
that the Typer options come from.

Only plain, unambiguous command lines take this path. Anything else (--help, --gguf, --here,
--input, an option given twice, an unknown option, a value that starts with "-", "--") returns
False and Typer parses the line, so every error message and exit code stays Typer's own. A
test runs both paths on the same command lines and compares their output byte for byte.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.report.request import (
    CARD_RIG_REPORT_PARAMS,
    ESTIMATE_CLI_PARAMS,
    MODEL_RIG_REPORT_PARAMS,
    PARAM,
    RequestError,
    parse_request,
)


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class FastCommand(FrozenValue):
    """One command as the fast path knows it: its request fields (the Typer command's too), its
    own flags and value options (keyword name per option), and its positional argument."""

    params: tuple[str, ...]
    flags: dict[str, str]
    values: dict[str, str]
    positional: str | None


# The commands' own options that the fast path takes; a test checks each against the Typer
# command's (same option, same kind), so the two cannot drift.
COMMANDS: dict[str, FastCommand] = {
    "model": FastCommand(MODEL_RIG_REPORT_PARAMS,
                         {"--brief": "brief", "--json": "as_json", "--wide": "wide"}, {}, "name"),
    "card": FastCommand(CARD_RIG_REPORT_PARAMS,
                        {"--json": "as_json", "--wide": "wide"}, {}, "name"),
    "estimate": FastCommand(ESTIMATE_CLI_PARAMS, {"--json": "as_json"},
                            {"--model": "model", "--card": "card", "--gpu": "card",
                             "--quant": "quant"}, None),
}


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class Parsed(FrozenValue):
    """A command line the fast path understood: the command, its keywords, the request text."""

    command: str
    keywords: dict[str, Any]
    raw: dict[str, object]


def parse(argv: Sequence[str]) -> Parsed | None:
    """The command line as the Typer command would receive it, or None (leave it to Typer)."""
    if not argv or argv[0] not in COMMANDS:
        return None
    spec = COMMANDS[argv[0]]
    kinds = {PARAM[n].option: n for n in spec.params}
    negations = {"--no-" + PARAM[n].option[2:]: n for n in spec.params
                 if PARAM[n].kind == "flag_on"}
    raw: dict[str, object] = {n: (False if PARAM[n].kind == "flag" else None)
                              for n in spec.params}
    keywords: dict[str, Any] = {kw: False for kw in spec.flags.values()}
    keywords.update({kw: None for kw in spec.values.values()})
    if spec.positional:
        keywords[spec.positional] = None
    seen: set[str] = set()
    args = list(argv[1:])
    while args:
        token = args.pop(0)
        if not token.startswith("-"):
            if spec.positional is None or spec.positional in seen:
                return None
            seen.add(spec.positional)
            keywords[spec.positional] = token
            continue
        option, eq, inline = token.partition("=")
        target = kinds.get(option) or negations.get(option) or spec.flags.get(option) \
            or spec.values.get(option)
        if target is None or target in seen or not option.startswith("--"):
            return None
        seen.add(target)
        is_flag = option in spec.flags or option in negations or (
            option in kinds and PARAM[target].kind in ("flag", "flag_on"))
        if is_flag:
            if eq:
                return None
            value: object = option not in negations
        elif eq:
            value = inline
        elif args and not args[0].startswith("-"):
            value = args.pop(0)
        else:
            return None
        if option in kinds or option in negations:
            raw[target] = value
        else:
            keywords[target] = value
    return Parsed(argv[0], keywords, raw)


def _runner(command: str) -> Callable[..., None]:
    if command == "estimate":
        from tpscalc.cli.estimate_run import run_estimate

        return run_estimate
    from tpscalc.cli.report_run import run_card, run_model

    return run_model if command == "model" else run_card


def run(argv: Sequence[str]) -> bool:
    """Run `argv` on the fast path; False when it is Typer's to parse (nothing done then)."""
    parsed = parse(argv)
    if parsed is None:
        return False
    from tpscalc.cli.output import fail

    try:
        request = parse_request(parsed.raw, COMMANDS[parsed.command].params)
    except RequestError as exc:
        fail(str(exc))
    _runner(parsed.command)(request=request, **parsed.keywords)
    return True
