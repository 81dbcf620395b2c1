"""Write src/tpscalc/catalog/data/hf_aliases.json: every repository id of llmfit's list
(data/sources/llmfit_hf_models_v1.1.17.json, 16.8k Hugging Face repositories) and every
catalog model's own `hf_repo`, mapped to the catalog model it is ("alias") or whose
architecture it has ("fine-tune"), with llmfit's parameter count and context length where they
are the repository's own. Repositories with no such model are left out.

How a repository finds its model, first that holds:
1. it is a catalog model's `hf_repo`;
2. its name, without organization, packaging and quantization words (catalog/names.py),
   resolves among the catalog's names (catalog/lookup.py, as a user's query), and llmfit's
   config fields (layers, width, KV heads, experts) do not contradict that model's;
3. llmfit's config fields equal one catalog model's architecture (the same `architecture`
   family where both are known): the one whose name shares the most words with the
   repository's, then the nearest parameter count;
4. without config fields: a catalog model of the same llmfit architecture family with the
   parameter count the name gives ("27B"), within 20 %, most words shared;
5. a family the catalog holds (so one llama.cpp runs), no model of that shape: llmfit's config
   fields as a config.json ("architecture": the config reader, sources/hf_config.py, sizes it),
   else its parameter count alone ("parameters": sized as the catalog sizes a model it knows by
   its count only). The family's closest catalog model is named beside it;
6. any other family: the parameter count alone, as "unknown-family" (the answer says that
   neither the catalog nor llama.cpp's converter is known to hold that architecture).
The parameter count is kept only for a repository that is not a re-packaging (GGUF, AWQ, 4bit:
llmfit counts packed tensors there) and the context only where llmfit read a config.
Deterministic. Run: python tools/build_hf_aliases.py   (after tools/build_compact.py)
"""
from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from tpscalc.catalog import store
from tpscalc.catalog.hf_index import CONFIG_KEYS, KINDS
from tpscalc.catalog.lookup import NameNotFoundError, resolve, size_of
from tpscalc.catalog.names import TUNED, name_variants, plain_name
from tpscalc.catalog.schema import Model
from tpscalc.catalog.slug import compact, tokens

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "data/sources/llmfit_hf_models_v1.1.17.json"
OUT = ROOT / "src/tpscalc/catalog/data/hf_aliases.json"
FAMILY_SUFFIXES = ("_text", "_unified", "forcausallm")
NAME_SIZE_TOLERANCE = 0.2
# Families the catalog holds no model of that llama.cpp's convert_hf_to_gguf.py converts (its
# @ModelBase.register lines: SmolLM3ForCausalLM, AfmoeForCausalLM, T5ForConditionalGeneration,
# Rwkv7ForCausalLM, FalconH1ForCausalLM, GraniteMoeForCausalLM, GraniteMoeHybridForCausalLM,
# SeedOssForCausalLM; https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py).
LLAMA_CPP_FAMILIES = frozenset({"smollm3", "afmoe", "t5", "rwkv7", "falcon_h1", "granitemoe",
                                "granitemoehybrid", "seed_oss"})
# llmfit families that are another's layers plus a head llama.cpp leaves out: Qwen3.5 with its
# multi-token-prediction layer
FAMILY_OF = {"qwen3_5_mtp": "qwen3_5"}


def family(arch: str | None) -> str | None:
    """llmfit's architecture (a config's model_type) without its "_text" style suffixes."""
    if not arch or arch == "unknown":
        return None
    name = arch.lower()
    for suffix in FAMILY_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def signature(layers: Any, hidden: Any, kv_heads: Any, moe: bool) -> tuple[int, int, int, bool]:
    return (int(layers), int(hidden), int(kv_heads), moe)


def model_signature(model: Model) -> tuple[int, int, int, bool] | None:
    a = model.architecture
    if a is None:
        return None
    return signature(a.num_layers, a.hidden_size, a.num_kv_heads, bool(a.num_experts))


def row_signature(row: dict[str, Any]) -> tuple[int, int, int, bool] | None:
    fields = [row.get(k) for k in ("num_hidden_layers", "hidden_size", "num_key_value_heads")]
    if any(not isinstance(f, int) or f <= 0 for f in fields):
        return None
    return signature(*fields, bool(row.get("is_moe") or row.get("num_experts")))


def words(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


def parameters_of(row: dict[str, Any], repackaged: bool) -> float | None:
    raw = row.get("parameters_raw")
    if repackaged or not isinstance(raw, (int, float)) or raw < 1e6:
        return None
    return float(f"{raw:.4g}")


class Catalog:
    """The catalog's models as the matching reads them."""

    def __init__(self, models: tuple[Model, ...], rows: list[dict[str, Any]]) -> None:
        self.models = models
        by_repo = {r["name"].lower(): r for r in rows}
        self.by_hf_repo = {m.hf_repo.lower(): m for m in models if m.hf_repo}
        self.family: dict[str, str] = {}
        for m in models:
            arch_source = m.architecture.source if m.architecture else ""
            repos = [m.hf_repo or "", arch_source.removeprefix("llmfit:")]
            fam = next((family(by_repo[r.lower()]["architecture"]) for r in repos
                        if r and r.lower() in by_repo), None)
            config = (m.architecture.hf_config or {}) if m.architecture else {}
            fam = fam or family(config.get("model_type"))
            if fam:
                self.family[m.slug] = fam
        self.by_signature: dict[tuple[int, int, int, bool], list[Model]] = defaultdict(list)
        for m in models:
            sig = model_signature(m)
            if sig is not None:
                self.by_signature[sig].append(m)
        self.by_family: dict[str, list[Model]] = defaultdict(list)
        for m in models:
            if m.slug in self.family:
                self.by_family[self.family[m.slug]].append(m)
        self.position = {m.slug: i for i, m in enumerate(models)}
        self.named: dict[str, tuple[Model, bool] | None] = {}
        self.words = {m.slug: words(m.name) | words((m.hf_repo or "").rsplit("/", 1)[-1])
                      for m in models}

    def by_name(self, name: str) -> tuple[Model, bool] | None:
        """The model `name` resolves to among the catalog's names, and whether a word of a
        tuned release ("-Instruct", "-it", "-Chat") was dropped to find it."""
        if name not in self.named:  # many repositories share a name (quantizers' copies)
            self.named[name] = self._by_name(name)
        return self.named[name]

    def _by_name(self, name: str) -> tuple[Model, bool] | None:
        for variant in name_variants(name):
            try:
                model = resolve(variant, self.models, "model", suggest=False)
            except NameNotFoundError:
                continue
            return model, bool(TUNED.search(name)) and not TUNED.search(variant)
        return None

    def best(self, candidates: list[Model], name: str, params: float | None) -> Model:
        """The candidate to name as the base: a decoder (not Qwen3-Embedding-8B for a Qwen3-8B
        tune); sharing a word with `name`, fewest of its words missing from `name` (Llama 3-70B,
        not Llama-3-Taiwan-70B, for Smaug-Llama-3-70B), most words shared; the nearest
        parameter count; catalog order."""
        mine = words(name)

        def rank(m: Model) -> tuple[int, int, int, int, float, int]:
            nearness = abs(math.log(params / m.parameters)) if params else 0.0
            decoder = m.architecture is None or m.architecture.kind == "decoder"
            shared = len(mine & self.words[m.slug])
            return (0 if decoder and "embedding" not in m.name.lower() else 1,
                    0 if shared else 1, len(words(m.name) - mine) if shared else 0, -shared,
                    nearness, self.position[m.slug])

        return min(candidates, key=rank)


def match(row: dict[str, Any], cat: Catalog) -> tuple[Model | None, str] | None:
    """The catalog model of llmfit row `row` and the kind of the match, or None."""
    repo = row["name"]
    own = cat.by_hf_repo.get(repo.lower())
    if own is not None:
        return own, "alias"
    plain = plain_name(repo)
    fam, sig = family(row.get("architecture")), row_signature(row)
    named = cat.by_name(plain)
    if named is not None and (sig is None or model_signature(named[0]) in (None, sig)):
        # every word of the name is in the model's (catalog/lookup.py), unless "-Instruct" was
        # dropped to find it: then it is a tuned model of that one
        same = compact(plain) == compact((named[0].hf_repo or "").rsplit("/", 1)[-1])
        return named[0], "fine-tune" if named[1] and not same else "alias"
    repackaged = compact(plain) != compact(repo.rsplit("/", 1)[-1])
    params = parameters_of(row, repackaged)
    if sig is not None:
        candidates = cat.by_signature.get(sig, [])
        same_family = [m for m in candidates if fam and cat.family.get(m.slug) == fam]
        # a model of unknown family only when it shares a word of its name (not a number):
        # LFM2-1.2B has the shape of a 1B Llama and is not one
        mine = {w for w in words(plain) if len(w) > 2 and not w[0].isdigit()}
        unknown = [m for m in candidates if cat.family.get(m.slug) is None
                   and mine & cat.words[m.slug]]
        pool = same_family or unknown
        if pool:
            return cat.best(pool, plain, params), "fine-tune"
    size = size_of(plain)
    wanted = None
    if size is not None:
        number, unit = float(size[:-1]), size[-1]
        wanted = number * {"b": 1e9, "m": 1e6, "k": 1e3}[unit]
    wanted = wanted or params
    if fam and wanted:
        near = [m for m in cat.by_family.get(fam, [])
                if abs(m.parameters / wanted - 1) <= NAME_SIZE_TOLERANCE]
        if near:
            return cat.best(near, plain, wanted), "fine-tune"
    fam = FAMILY_OF.get(fam or "", fam)
    family_models = cat.by_family.get(fam or "", [])
    if not family_models and fam not in LLAMA_CPP_FAMILIES:
        # a family neither the catalog nor llama.cpp's converter holds: its count alone, said
        return (None, "unknown-family") if wanted else None
    like = cat.best(family_models, plain, wanted) if family_models else None
    if sig is not None and config_of(row) is not None:
        return like, "architecture"
    if wanted:
        return like, "parameters"
    return None


def config_of(row: dict[str, Any]) -> dict[str, Any] | None:
    """A config.json dict from llmfit's fields (sources/hf_config.py reads it), or None when
    they are incomplete. For a dense model llmfit's moe_intermediate_size is its FFN width."""
    keys = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
            "vocab_size", "moe_intermediate_size")
    if any(not isinstance(row.get(k), int) or row[k] <= 0 for k in keys):
        return None
    cfg: dict[str, Any] = {k: row[k] for k in keys if k != "moe_intermediate_size"}
    cfg["model_type"] = row["architecture"]
    if isinstance(row.get("head_dim"), int) and row["head_dim"] > 0:
        cfg["head_dim"] = row["head_dim"]
    if isinstance(row.get("context_length"), int) and row["context_length"] > 0:
        cfg["max_position_embeddings"] = row["context_length"]
    if row.get("is_moe"):
        if not (isinstance(row.get("num_experts"), int) and isinstance(row.get("active_experts"),
                                                                          int)):
            return None
        cfg.update(num_experts=row["num_experts"], num_experts_per_tok=row["active_experts"],
                   moe_intermediate_size=row["moe_intermediate_size"],
                   intermediate_size=row["moe_intermediate_size"])
        if isinstance(row.get("shared_expert_intermediate_size"), int):
            cfg["shared_expert_intermediate_size"] = row["shared_expert_intermediate_size"]
    else:
        cfg["intermediate_size"] = row["moe_intermediate_size"]
    return cfg


def readable(cfg: dict[str, Any], repo: str) -> bool:
    """The config reader turns `cfg` into a model (it knows the family's layer structure)."""
    from tpscalc.sources.hf_config import model_from_config
    from tpscalc.sources.types import SourceError

    try:
        model_from_config(cfg, f"llmfit {repo}", label=repo)
    except (SourceError, ValueError):
        return False
    return True


def build() -> dict[str, Any]:
    rows = json.loads(SOURCE.read_text(encoding="utf-8"))
    models = store.models()
    cat = Catalog(models, rows)
    out: list[tuple[tuple[int, int, int], list[Any]]] = []
    slugs: dict[str, int] = {}
    seen: set[str] = set()
    listed = {r["name"].lower() for r in rows}
    own_rows = [{"name": m.hf_repo} for m in models
                if m.hf_repo and m.hf_repo.lower() not in listed]
    for order, row in enumerate([*own_rows, *rows]):
        key = row["name"].lower()
        if key in seen:
            continue
        seen.add(key)
        found = match(row, cat)
        if found is None:
            continue
        model, kind = found
        repackaged = compact(plain_name(row["name"])) != compact(row["name"].rsplit("/", 1)[-1])
        params = parameters_of(row, repackaged) if kind != "alias" else None
        context = row.get("context_length") if row_signature(row) and kind != "alias" else None
        entry: list[Any] = [row["name"], 0, KINDS.index(kind), params, context]
        if kind == "architecture":
            cfg = config_of(row)
            if cfg is not None and readable(cfg, row["name"]):
                entry.append([cfg.get(k) for k in CONFIG_KEYS])
            else:  # a layer structure the config reader does not know: the count alone
                kind = "parameters"
                entry[2] = KINDS.index(kind)
        if kind in ("parameters", "unknown-family"):
            size = size_of(plain_name(row["name"]))
            count = (float(size[:-1]) * {"b": 1e9, "m": 1e6, "k": 1e3}[size[-1]] if size
                     else params)
            if not count:
                continue
            entry[3] = float(f"{count:.4g}")
        entry[1] = -1 if model is None else slugs.setdefault(model.slug, len(slugs))
        own = model is not None and model.hf_repo is not None and model.hf_repo.lower() == key
        rank = (0 if own else 1 + KINDS.index(kind), -int(row.get("hf_downloads") or 0), order)
        out.append((rank, entry))
    out.sort(key=lambda t: t[0])
    return {"source": "data/sources/llmfit_hf_models_v1.1.17.json and models.json's hf_repo "
                      "(tools/build_hf_aliases.py)", "config_keys": list(CONFIG_KEYS),
            # the catalog it was built from: a test asks for a rebuild when models.json changes
            "models_crc32": store.source_crcs()["models.json"],
            "models": list(slugs), "repos": [r for _, r in out]}


def main() -> int:
    data = build()
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    OUT.write_text(text.replace('],["', '],\n["') + "\n", encoding="utf-8")
    print(f"{OUT.name}: {len(data['repos'])} repositories onto {len(data['models'])} models, "
          f"{OUT.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
