"""The command that realises an estimate in its runtime, with the settings it relies on.

Plain strings from the estimate's own figures (format, context, placement, tensor parallel):
what a user pastes to get the memory and speed the answer states.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tpscalc.catalog.schema import Model
from tpscalc.estimate.runtimes import (
    MLX_BITS,
    SGLANG_MEM_FRACTION,
    VLLM_GPU_MEMORY_UTILIZATION,
    get_runtime,
)
from tpscalc.estimate.types import Estimate, RunCommand

if TYPE_CHECKING:
    from tpscalc.estimate.placement import Placement


def gguf_file(e: Estimate) -> str:
    """The GGUF file name the llama.cpp-family commands load."""
    return "-".join(e.model.split()) + f"-{e.quant or 'Q4_K_M'}.gguf"


def _default_note(e: Estimate, more: str) -> tuple[tuple[str, str], ...]:
    """A settings entry saying that `e`'s format is its runtime's default download, and how to
    ask for another (`more`); () when it is not."""
    if e.quant is None or e.quant != get_runtime(e.runtime).default_format:
        return ()
    return (("format", f"{e.quant}, {e.runtime}'s default download; {more}"),)


def _gpu_layers(e: Estimate) -> int | None:
    p = e.placement
    return None if p is None else p.n_gpu_layers


def run_command(model: Model, e: Estimate, kv_type: str = "f16") -> RunCommand | None:
    """The command that realises `e` (None when nothing fits)."""
    if not e.fits or e.quant is None:
        return None
    build = _BUILDERS.get(e.runtime, _llama_cpp)
    return build(model, e, kv_type)


def llama_server_args(e: Estimate, file: str, p: Placement | None) -> list[str]:
    """llama-server's arguments for `e` loading `file`: the context, the placement's layers,
    tensor split and CPU experts (when placed), flash attention as the test asks."""
    args = ["-m", file, "-c", str(e.context)]
    if p is not None:
        args += ["-ngl", str(p.n_gpu_layers)]
        if len(p.devices) > 1:
            args += ["-ts", ",".join(str(n) for n in p.tensor_split)]
        if p.n_cpu_moe:
            args += ["--n-cpu-moe", str(p.n_cpu_moe)]
    if e.test is None or e.test.flash_attn:
        args += ["-fa", "on"]
    return args


def _llama_cpp(model: Model, e: Estimate, kv_type: str) -> RunCommand:
    args = ["llama-server", *llama_server_args(e, gguf_file(e), e.placement)]
    if kv_type != "f16":
        args += ["-ctk", kv_type, "-ctv", kv_type]
    return RunCommand("llama.cpp", " ".join(args))


def _tag(e: Estimate) -> str:
    return "-".join(e.model.lower().split()) + f":{(e.quant or 'q4_k_m').lower()}"


def _ollama(model: Model, e: Estimate, kv_type: str) -> RunCommand:
    """ollama: a Modelfile from the GGUF file with the context and GPU layers, served with
    flash attention, the KV type and one parallel slot (OLLAMA_NUM_PARALLEL multiplies the KV
    cache by the slots)."""
    tag = _tag(e)
    modelfile = [f"FROM ./{gguf_file(e)}", f"PARAMETER num_ctx {e.context}"]
    layers = _gpu_layers(e)
    if layers is not None:
        modelfile.append(f"PARAMETER num_gpu {layers}")
    flash = "1" if e.test is None or e.test.flash_attn else "0"
    env = (("OLLAMA_FLASH_ATTENTION", flash), ("OLLAMA_KV_CACHE_TYPE", kv_type),
           ("OLLAMA_NUM_PARALLEL", "1"), ("OLLAMA_CONTEXT_LENGTH", str(e.context)))
    serve = " ".join(f"{k}={v}" for k, v in env) + " ollama serve"
    return RunCommand("ollama", f"ollama create {tag} -f Modelfile && ollama run {tag}",
                      (*_default_note(e, "--quant Q8_0 (or --max-quality) for another file"),
                       ("serve", serve), ("Modelfile", "\n".join(modelfile))))


def _lmstudio(model: Model, e: Estimate, kv_type: str) -> RunCommand:
    p = e.placement
    share = "max"
    if p is not None and (p.cpu_layers or not p.output_on_gpu):
        share = f"{p.n_gpu_layers / (p.n_layers + 1):.2f}"
    key = "-".join(e.model.lower().split())
    return RunCommand("lmstudio", f"lms load {key} --gpu {share} --context-length {e.context}",
                      (("file", gguf_file(e)),))


def _llamafile(model: Model, e: Estimate, kv_type: str) -> RunCommand:
    layers = _gpu_layers(e)
    ngl = f" -ngl {layers}" if layers is not None else ""
    return RunCommand("llamafile", f"llamafile --server -m {gguf_file(e)} -c {e.context}{ngl}")


def _repo(model: Model) -> str:
    return model.hf_repo or "<hf-repo of " + model.name + ">"


def _mlx(model: Model, e: Estimate, kv_type: str) -> RunCommand:
    """mlx-lm: mlx-community's conversion (the repository's name with the bits), and the
    convert command that makes it from the original weights (group size 64)."""
    repo = _repo(model)
    base = repo.rsplit("/", 1)[-1]
    quant = e.quant or "MLX-4bit"
    bits = quant.removeprefix("MLX-").removesuffix("bit")
    if quant == "BF16":
        converted, convert = f"mlx-community/{base}-bf16", f"mlx_lm.convert --hf-path {repo}"
    else:
        converted = f"mlx-community/{base}-{bits}bit"
        convert = f"mlx_lm.convert --hf-path {repo} -q --q-bits {bits} --q-group-size 64"
    return RunCommand("mlx", f"mlx_lm.generate --model {converted} --max-kv-size {e.context} "
                      '--prompt "..."',
                      (*_default_note(e, "--quant mlx-6bit or mlx-8bit for more bits"),
                       ("convert", convert), ("bits_per_weight", f"{MLX_BITS[quant]:g}")))


def _quant_flags(e: Estimate) -> str:
    return {"FP8": " --quantization fp8"}.get(e.quant or "", "")


def _server_repo(model: Model, e: Estimate) -> str:
    repo = _repo(model)
    if e.quant in ("INT4", "NVFP4"):  # a checkpoint released in that format
        return f"<{e.quant} ({'AWQ/GPTQ' if e.quant == 'INT4' else 'NVFP4'}) checkpoint of {repo}>"
    return repo


def _vllm(model: Model, e: Estimate, kv_type: str) -> RunCommand:
    kv = " --kv-cache-dtype fp8" if kv_type != "f16" else ""
    return RunCommand(
        "vllm", f"vllm serve {_server_repo(model, e)} --tensor-parallel-size "
        f"{e.tensor_parallel} --max-model-len {e.context} --gpu-memory-utilization "
        f"{VLLM_GPU_MEMORY_UTILIZATION:g}{_quant_flags(e)}{kv}")


def _sglang(model: Model, e: Estimate, kv_type: str) -> RunCommand:
    kv = " --kv-cache-dtype fp8_e5m2" if kv_type != "f16" else ""
    return RunCommand(
        "sglang", f"python -m sglang.launch_server --model-path {_server_repo(model, e)} "
        f"--tp {e.tensor_parallel} --context-length {e.context} --mem-fraction-static "
        f"{SGLANG_MEM_FRACTION:g}{_quant_flags(e)}{kv}")


_BUILDERS = {"llama.cpp": _llama_cpp, "ollama": _ollama, "lmstudio": _lmstudio,
             "llamafile": _llamafile, "mlx": _mlx, "vllm": _vllm, "sglang": _sglang}
