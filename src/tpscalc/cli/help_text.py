"""`tpscalc --help` without importing Typer, click or rich (~0.3 s of imports): the commands and
their one-line help, in Typer's order. A test checks this table against the Typer app, so the
two cannot drift."""
from __future__ import annotations

APP_HELP = "Which graphics card runs which open-weight language model, and how fast."
COMMANDS = (
    ("cards", "List the cards in the catalog (memory in GiB, bandwidth in GB/s)."),
    ("models", "List the open-weight language models in the catalog."),
    ("estimate", ("Memory (GiB), fit and speed (tok/s) of one model on one card, or of every row "
                 "of a CSV.")),
    ("here", "This machine: GPUs (memory in GiB), RAM, CPU, and the models its card runs."),
    ("model", ("Which cards run this model, at which quantization, in how much memory (GiB), how "
              "fast (tok/s).")),
    ("card", ("Which models this card runs, at which quantization, in how much memory (GiB), how "
             "fast (tok/s).")),
    ("serve", "Serve the web site and the JSON API (/api/v1/, /openapi.json, /healthz)."),
    ("export-site", ("Write every model and card page, in every language, as static files with "
                    "relative links.")),
)


def help_text() -> str:
    """The top-level help, plain text."""
    name_width = max(len(name) for name, _ in COMMANDS)
    lines = ["Usage: tpscalc [OPTIONS] COMMAND [ARGS]...", "", f"  {APP_HELP}", "",
             "Options:", "  --help  Show this message and exit.", "", "Commands:"]
    lines += [f"  {name.ljust(name_width)}  {text}" for name, text in COMMANDS]
    lines += ["", "Each command's options: tpscalc COMMAND --help"]
    return "\n".join(lines) + "\n"
