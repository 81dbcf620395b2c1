"""Model names as people type them, rewritten into the forms the catalog's names take.

A Hugging Face repository id ("unsloth/Qwen3-8B-GGUF"), a GGUF file name
("Qwen3-8B-UD-Q4_K_XL.gguf", "...-00001-of-00003.gguf"), an ollama tag ("llama3.1:8b",
"qwen3:30b-a3b") all name a model of the catalog with words the catalog's names lack: the
organization, the packaging (GGUF, MLX, AWQ, 4bit), the file's quantization. `plain_name` drops
what never changes which model it is; `name_variants` adds the rewrites that may ("Meta-"
before "Llama", "-Instruct", a release date "-2507" that the catalog writes "(Jul 2025)").
"""
from __future__ import annotations

import re

# A file's quantization or packaging, one "-" or "_" separated word at the end of a name.
_PACKAGING = re.compile(
    r"(?i)^(?:gguf|ggml|mlx|awq|gptq|exl[23]|hqq|bnb|nf4|fp8|fp16|bf16|f16|f32|int[48]"
    r"|w[48]a(?:8|16)|nvfp4|mxfp4(?:_moe)?|\d+(?:\.\d+)?-?bits?|\d+bpw|i1|imat(?:rix)?|ud|dwq"
    r"|i?q\d+(?:_[a-z0-9]+)*|tq\d_\d|quantized|dynamic|safetensors|hf|mtp)$")
# bartowski's file and repository names put the organization before the model with a "_":
# "google_gemma-3-1b-it-Q4_K_M.gguf", "nvidia_Nemotron-Cascade-2-30B-A3B-GGUF".
_ORG_PREFIX = re.compile(r"^([A-Za-z][A-Za-z-]*)_(?=[A-Za-z][^_]*-)")  # a dashed model name
_SHARD = re.compile(r"(?i)-\d{5}-of-\d{5}$")
_SEPARATORS = re.compile(r"[-_.]")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# A release date at the end of a name: "-2507" (year, month) or "-0528" (month, day).
_DATE = re.compile(r"[-_ ](\d{2})(\d{2})$")
TUNED = re.compile(r"(?i)[-_ ](?:instruct|it|chat|hf)(?=$|[-_ ])")


def _without_packaging(name: str) -> str:
    """`name` without its trailing packaging and quantization words ("Qwen3-8B-GGUF",
    "Qwen3-8B-UD-Q4_K_XL", "Qwen3-8B-MLX-4bit" -> "Qwen3-8B")."""
    while True:
        parts = re.split(r"([-_. ])", name)
        # the last word, and for "Q4_K_M" its "_"-joined pieces together
        for start in range(len(parts) - 1, 0, -2):
            tail = "".join(parts[start:])
            if _PACKAGING.match(tail):
                name = "".join(parts[:start - 1])
                break
        else:
            return name


def plain_name(text: str) -> str:
    """`text` without what never changes the model: the organization of a repository id, a
    ".gguf" file's shard and quantization, the packaging words, an ollama tag's ":" and
    ":latest" ("qwen3:30b-a3b" -> "qwen3 30b-a3b")."""
    name = text.strip()
    if name.lower().endswith(".gguf"):
        name = _SHARD.sub("", name[:-5])
    name = _ORG_PREFIX.sub("", name.rsplit("/", 1)[-1])
    if ":" in name:
        model, _, tag = name.partition(":")
        name = model if tag.lower() in ("", "latest") else f"{model} {tag}"
    plain = _without_packaging(name)
    return plain if plain else name


def _date_variant(name: str) -> str | None:
    """"Qwen3-235B-A22B-2507" -> "Qwen3-235B-A22B Jul 2025"; "DeepSeek-R1-0528" ->
    "DeepSeek-R1 May" (the catalog writes a release "(Jul 2025)")."""
    found = _DATE.search(name)
    if found is None:
        return None
    first, second = int(found.group(1)), int(found.group(2))
    head = name[:found.start()]
    if 23 <= first <= 29 and 1 <= second <= 12:  # YYMM, as Qwen dates its releases
        return f"{head} {_MONTHS[second - 1]} 20{first}"
    if 1 <= first <= 12 and 1 <= second <= 31:  # MMDD, as DeepSeek does
        return f"{head} {_MONTHS[first - 1]}"
    return None


def _rewrites(name: str) -> list[str]:
    out = []
    if re.match(r"(?i)meta[-_ ]llama", name):
        out.append(name[5:])
    return out


def name_variants(text: str) -> list[str]:
    """The forms of `text` to look up, most faithful first: its plain name, then with "Meta-"
    dropped, a date as the catalog writes it, "-Instruct"/"-it"/"-Chat" dropped, in
    combination."""
    base = plain_name(text)
    variants = [base]
    for step in (_rewrites, lambda n: [v for v in (_date_variant(n),) if v],
                 lambda n: [TUNED.sub("", n, count=1)] if TUNED.search(n) else []):
        variants += [new for v in list(variants) for new in step(v)]
    return list(dict.fromkeys(v for v in variants if v.strip()))


def repo_keys(text: str) -> list[str]:
    """The keys to look `text` up under in the index of repository ids (lower case): as typed,
    and without its packaging and file quantization ("Jackrong/Qwopus3.5-27B-v3-GGUF" ->
    "jackrong/qwopus3.5-27b-v3")."""
    name = text.strip()
    org, _, repo = name.rpartition("/")
    if repo.lower().endswith(".gguf"):
        repo = _SHARD.sub("", repo[:-5])
    bare = _without_packaging(repo) or repo
    keys = [name, f"{org}/{repo}" if org else repo, f"{org}/{bare}" if org else bare]
    prefixed = _ORG_PREFIX.match(bare)
    if prefixed:  # "google_gemma-3-1b-it" -> "google/gemma-3-1b-it"
        keys.append(f"{prefixed.group(1)}/{bare[prefixed.end():]}")
    return list(dict.fromkeys(k.lower() for k in keys))
