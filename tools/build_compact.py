"""Write src/tpscalc/catalog/data/zz_catalog.pickle: the validated cards, models and quantizations
of cards.json, models.json and quants.json as their records (frozen dataclasses, pickle
protocol 5), and weights.json's sizes as the engine reads them, with the CRC-32 of the four
files. The store loads it without parsing 3 MB of
JSON, validating 1,700 records again or importing pydantic, and ignores it when the JSON has
changed since. Deterministic; a test rebuilds it and compares bytes.
Run: python tools/build_compact.py   (after tools/build_cards.py and tools/build_models.py)
"""
from __future__ import annotations

import pickle
import pickletools
import sys
from pathlib import Path

from tpscalc.catalog import quants, store

OUT = Path(__file__).resolve().parents[1] / "src/tpscalc/catalog/data" / store.COMPACT_FILE


def build() -> bytes:
    """The file's exact content."""
    data = {"generated_by": "tools/build_compact.py", "crc32": store.source_crcs(),
            "cards": store.validated_cards(), "models": store.validated_models(),
            "quants": {key: quants.validated(key) for key in ("ladder", "extra")},
            "weights": store.weights_sizes_of(store.weights_table())}
    return pickletools.optimize(pickle.dumps(data, protocol=5))


def main() -> int:
    content = build()
    OUT.write_bytes(content)
    print(f"wrote {OUT.name}: {len(content):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
