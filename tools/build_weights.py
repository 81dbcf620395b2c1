"""Precompute GGUF weight bytes for every catalog model at every ladder quantization (and F16).

`estimate.weights.weights_bytes` walks every tensor (1-3 ms a call); the card page evaluates
835 models × 14 types at once, so the engine reads this table instead and falls back to the
formula for anything not in it. Output: src/tpscalc/catalog/data/weights.json, deterministic.
Run: python tools/build_weights.py   (after tools/build_models.py)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from tpscalc.catalog import store
from tpscalc.catalog.quants import quantizations
from tpscalc.estimate.weights import resident_weights_bytes, weights_read_per_token_bytes

OUT = Path(__file__).resolve().parents[1] / "src/tpscalc/catalog/data/weights.json"
# F16, and the native formats models ship in (estimate/runtime.py): a model offered in its
# native format is sized at it on every page, so it is read from the table too.
EXTRA_TYPES = ("F16", "MXFP4_MOE", "Q4_0", "TQ2_0")


def table_types() -> list[str]:
    """The file types the table holds: the ladder, least compressed first, then EXTRA_TYPES."""
    return [q.name for q in quantizations()] + list(EXTRA_TYPES)


def model_rows(types: list[str]) -> dict[str, list[list[int]]]:
    """slug → [[weights bytes held in memory, weight bytes read per token], ...] in `types`
    order (held: the file less the tables llama.cpp reads row by row from it)."""
    out: dict[str, list[list[int]]] = {}
    for model in store.models():
        arch = model.architecture
        if arch is None:
            continue
        out[model.slug] = [[resident_weights_bytes(arch, t),
                            round(weights_read_per_token_bytes(arch, t))]
                           for t in types]
    return out


def build() -> dict[str, object]:
    """The whole table as written to weights.json."""
    types = table_types()
    return {"generated_by": "tools/build_weights.py", "types": types,
            "columns": ["weights_bytes", "read_per_token_bytes"], "models": model_rows(types)}


def main() -> int:
    table = build()
    OUT.write_text(json.dumps(table, separators=(",", ":"), sort_keys=True) + "\n",
                   encoding="utf-8")
    print(f"wrote {OUT.name}: {len(table['models'])} models × {len(table['types'])} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
