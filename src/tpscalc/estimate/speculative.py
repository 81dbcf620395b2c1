"""Speculative decoding: a draft model (llama-server -md) or the model's own multi-token-
prediction (MTP) layers propose `d` tokens, the model verifies them in one batched step.

Per step, with per-token acceptance α, the tokens kept are E = (1 − α^(d+1)) / (1 − α) (the
accepted run plus the model's own token; Leviathan et al. 2023, https://arxiv.org/abs/2211.17192).
The step costs d draft tokens plus one verify pass of d + 1 tokens of one sequence (weights and
KV read once, d + 1 tokens of matrix work: batched.py's terms), so
    speed-up = E / (verify(d + 1) / t_1 + d × t_draft / t_1).
α comes from published runs (ACCEPTANCE below, each cited) as a low, typical and high value; the
range of the speed-up is theirs. Pure: the terms come in, ratios and bytes go out.
"""
from __future__ import annotations

from dataclasses import dataclass

from tpscalc.catalog.frozen import FrozenValue
from tpscalc.estimate.batched import DecodeParts


@dataclass(frozen=True, eq=False, repr=False)  # eq, hash, repr: FrozenValue
class Acceptance(FrozenValue):
    """Per-token draft acceptance α seen in published runs: low, typical, high; their sources."""

    low: float
    typical: float
    high: float
    draft_tokens: int  # d, the draft length the command sets
    sources: tuple[str, ...]


ACCEPTANCE = {
    # Qwen3.6-27B MTP under llama.cpp (PR #22673's --spec-type mtp): 0.787 accepted (210 / 267
    # drafted, 1x RTX 3090, https://github.com/noonghunna/club-3090/issues/85); 0.56 at n-max 2
    # (RTX 4090, +60 %) and 0.718 at n-max 3 (2x RTX 5090, 1.79x), same-family 27B MTP GGUFs
    # (https://github.com/sudoingX/qwen38-mtp/pull/5, /pull/73).
    "mtp": Acceptance(0.56, 0.70, 0.79, 2, (
        "https://github.com/ggml-org/llama.cpp/pull/22673",
        "https://github.com/noonghunna/club-3090/issues/85",
        "https://github.com/sudoingX/qwen38-mtp/pull/5",
        "https://github.com/sudoingX/qwen38-mtp/pull/73")),
    # A small model of the same family as draft: 0.34 (Qwen2.5-Coder-32B with a 3B draft,
    # --draft-max 16, https://github.com/ggml-org/llama.cpp/pull/10455) to 0.72 (Llama 3.1 8B
    # with Llama 3.2 1B, https://github.com/ggml-org/llama.cpp/issues/5877).
    "draft": Acceptance(0.34, 0.55, 0.72, 4, (
        "https://github.com/ggml-org/llama.cpp/pull/10455",
        "https://github.com/ggml-org/llama.cpp/issues/5877")),
}

# Models whose release carries MTP layers, by Hugging Face repository prefix (lower case): the
# config's mtp_num_hidden_layers (Qwen3.5/3.6) or num_nextn_predict_layers (DeepSeek-V3,
# GLM-4.5, MiMo) is 1 in each (their config.json files on the Hub).
MTP_REPOS = ("qwen/qwen3.5-", "qwen/qwen3.6-", "deepseek-ai/deepseek-v3", "deepseek-ai/deepseek-v4",
             "deepseek-ai/deepseek-r1", "zai-org/glm-4.5", "zai-org/glm-4.6", "zai-org/glm-4.7",
             "zai-org/glm-5", "thudm/glm-4.5", "xiaomimimo/mimo")
MTP_NAMES = ("qwen3.5", "qwen3.6", "deepseek-v3", "deepseek-v4", "deepseek-r1", "glm-4.5",
             "glm-4.6", "glm-4.7", "glm-5", "mimo")
# llama.cpp refuses a draft whose vocabulary differs from the model's by more than this many
# tokens (SPEC_VOCAB_MAX_SIZE_DIFFERENCE, common/speculative.cpp)
VOCAB_MAX_SIZE_DIFFERENCE = 128


def has_mtp(hf_repo: str | None, name: str) -> bool:
    """True when the model's release ships MTP layers (MTP_REPOS, else MTP_NAMES)."""
    repo = (hf_repo or "").lower()
    if repo:
        return repo.startswith(MTP_REPOS)
    return name.lower().replace(" ", "-").startswith(MTP_NAMES)


def expected_tokens(alpha: float, draft_tokens: int) -> float:
    """Tokens one verify step keeps with acceptance `alpha` and `draft_tokens` drafted."""
    if alpha >= 1.0:
        return draft_tokens + 1.0
    return (1.0 - alpha ** (draft_tokens + 1)) / (1.0 - alpha)


def verify_ratio(parts: DecodeParts, tokens: int) -> float:
    """Time of one pass of `tokens` tokens of one sequence ÷ one token's (weights and KV read
    once; matrix work and attention per token)."""
    weights = parts.weights_s + parts.dequant_s
    t = (parts.overhead_s + max(weights, tokens * parts.gemm_s) + parts.kv_s
         + tokens * parts.attention_s)
    return t / parts.single_s


def speedup(parts: DecodeParts, draft_ratio: float, alpha: float, draft_tokens: int) -> float:
    """Decode speed with speculation ÷ without; `draft_ratio`: one draft token's time ÷ the
    model's."""
    cost = verify_ratio(parts, draft_tokens + 1) + draft_tokens * draft_ratio
    return expected_tokens(alpha, draft_tokens) / cost


def speedup_range(parts: DecodeParts, draft_ratio: float, acc: Acceptance
                  ) -> tuple[float, float, float]:
    """(low, typical, high) speed-up at the published acceptance rates."""
    low, typical, high = (speedup(parts, draft_ratio, a, acc.draft_tokens)
                          for a in (acc.low, acc.typical, acc.high))
    return low, typical, high


def mtp_draft_ratio(n_layers: int, head_bytes: float, read_bytes: float) -> float:
    """One MTP token's time ÷ the model's: one more decoder layer and the output head (the
    MTP module shares the model's embedding and head), ~ (read / layers + head) / read."""
    if read_bytes <= 0 or n_layers <= 0:
        return 0.0
    return (read_bytes / n_layers + head_bytes) / read_bytes
