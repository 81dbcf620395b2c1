"""Write the GGML tensor types' block sizes (values per block, bytes per block) from the gguf
package into src/tpscalc/catalog/data/ggml_types.json, so the estimate reads them from the
catalog at run time instead of importing gguf (and numpy with it) on every CLI start.
Deterministic; a test rebuilds it and compares. Run: python tools/build_ggml_types.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src/tpscalc/catalog/data/ggml_types.json"


def build() -> dict[str, object]:
    """The table as written: ggml type name → [block values, block bytes]."""
    from gguf.constants import GGML_QUANT_SIZES

    return {"generated_by": "tools/build_ggml_types.py (gguf.constants.GGML_QUANT_SIZES)",
            "types": {t.name: list(v) for t, v in sorted(GGML_QUANT_SIZES.items(),
                                                          key=lambda kv: kv[0].value)}}


def text() -> str:
    """The file's exact content."""
    return json.dumps(build(), separators=(",", ":"), sort_keys=True) + "\n"


def main() -> int:
    OUT.write_text(text(), encoding="utf-8")
    print(f"wrote {OUT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
