"""Where a catalog model's architecture facts come from, and how sure they are.

Three grades, as the catalog check (tools/catalog_check.py) counts them:
- "sourced": every fact from a release's own files: a verbatim config.json (aiconfigurator's,
  tools/data/hf_configs, MLC-LLM's presets), an inference engine's model config (litgpt), or
  facts typed by hand from a config the hand-kept map cites;
- "derived": from llmfit's fields checked against the release's exact safetensors count, or
  inherited from the base model a fine-tune was made from;
- "approximated": a fact the source could not express (`Architecture.unexpressed`), or no
  architecture at all (memory from the parameter count; a mixture of experts then reads the
  active count llmfit or its name states).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tpscalc.catalog.schema import Model

Certainty = Literal["sourced", "derived", "approximated"]
# Architecture.source prefix → what the facts were read from.
BASIS = {"aiconfigurator": "config file", "hfconfig": "config file",
         "mlc": "config file (MLC-LLM preset)", "litgpt": "engine model code (litgpt config)",
         "hand": "config file, typed by hand (cited)", "llmfit": "llmfit fields",
         "config": "config file", "gguf": "GGUF file"}
DERIVED_SOURCES = frozenset({"llmfit"})
BASE_KEY = "architecture_basis"  # the record's "base:<model>" when inherited (the build's)


@dataclass(frozen=True)
class Sourcing:
    """A model's grade, what its facts came from, and why it is approximated (if it is)."""

    certainty: Certainty
    basis: str
    reasons: tuple[str, ...] = ()
    active_basis: str | None = None  # a stated active count's source (no architecture)


def sourcing(model: Model) -> Sourcing:
    """The grade and basis of `model`'s architecture facts."""
    arch = model.architecture
    if arch is None:
        why = ["no architecture: memory from the parameter count"]
        if not model.runs_in_llama_cpp:
            why.append(str(model.record.get("llama_cpp_reason") or "not run by llama.cpp"))
        return Sourcing("approximated", "parameter count", tuple(why),
                        model.record.get("parameters_active_source"))
    prefix = arch.source.split(":", 1)[0]
    basis = BASIS.get(prefix, prefix or "unknown")
    inherited = str(model.record.get(BASE_KEY) or "")
    if inherited.startswith("base:"):
        basis = f"base model {inherited[5:]} ({basis})"
    if arch.unexpressed:
        return Sourcing("approximated", basis, tuple(arch.unexpressed))
    if prefix in DERIVED_SOURCES or inherited.startswith("base:"):
        return Sourcing("derived", basis)
    return Sourcing("sourced", basis)
