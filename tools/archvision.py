"""The image encoder of a vision-language model from its HF config.json `vision_config`
(Qwen2-VL, Qwen2.5-VL, Qwen3-VL layouts; other families: None, so their parameter count states
the language model alone)."""
from __future__ import annotations

from typing import Any

from tpscalc.catalog.schema import VisionEncoder
from tpscalc.estimate.vision import vision_parameters

# HF model_type → the encoder layout (transformers modeling_qwen2_vl.py: LayerNorm, QuickGELU
# MLP of embed_dim × mlp_ratio; modeling_qwen2_5_vl.py: RMSNorm, SwiGLU MLP with biases;
# modeling_qwen3_vl.py: LayerNorm, GELU MLP, biased patch conv, learned positions, DeepStack).
QWEN_VL_TYPES = frozenset({"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"})


def vision_from_hf_config(cfg: dict[str, Any]) -> VisionEncoder | None:
    """The VisionEncoder with its parameter count, or None for a layout not modelled."""
    mt = str(cfg.get("model_type") or "")
    vc = cfg.get("vision_config")
    if mt not in QWEN_VL_TYPES or not isinstance(vc, dict):
        return None
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    if mt == "qwen2_vl":  # vision_config.hidden_size is the language model's width there
        h = int(vc["embed_dim"])
        ff, out = int(h * float(vc.get("mlp_ratio", 4))), int(vc["hidden_size"])
    else:
        h, ff = int(vc["hidden_size"]), int(vc["intermediate_size"])
        out = int(vc.get("out_hidden_size") or text["hidden_size"])
    qwen3 = mt.startswith("qwen3")
    v = VisionEncoder.model_validate({
        "num_layers": int(vc["depth"]), "hidden_size": h, "intermediate_size": ff,
        "num_heads": int(vc["num_heads"]), "patch_size": int(vc.get("patch_size") or 14),
        "temporal_patch_size": int(vc.get("temporal_patch_size") or 2),
        "spatial_merge_size": int(vc.get("spatial_merge_size") or 2), "out_hidden_size": out,
        "ffn_gated": mt == "qwen2_5_vl", "layer_norm": mt != "qwen2_5_vl", "patch_bias": qwen3,
        "position_embeddings": int(vc.get("num_position_embeddings") or 0) if qwen3 else 0,
        "extra_mergers": len(vc.get("deepstack_visual_indexes") or ()) if qwen3 else 0})
    return v.model_copy(update={"params_total": vision_parameters(v)})
