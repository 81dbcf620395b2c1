"""What the host's operating system leaves to a model, and what a CPU part too big for it costs.

Three facts of a rig that no card or CPU spec gives, each an input with a stated default:
- RAM headroom: the RAM the OS and other processes keep (a model's CPU part gets the rest);
- the share of a unified-memory chip's RAM its GPU may use, which each OS sets differently;
- the storage read rate: a CPU part larger than the usable RAM stays memory-mapped from the
  GGUF file (llama.cpp's default mmap) and the kernel re-reads the pages it evicted.
Pure: numbers in, numbers and the words that say which were used out.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tpscalc.estimate.elementwise import Num, where

if TYPE_CHECKING:
    from tpscalc.catalog.schema import Card

OSES = ("linux", "windows", "macos")
# RAM the OS and other processes keep, GiB, by OS (what a model's CPU part cannot have). Stated
# assumptions, each the sum of what the OS itself takes and about 1 GiB for the GPU driver's
# and runtime's host allocations and llama.cpp's own process; the kernel also sees a few
# hundred MiB less than the RAM installed (firmware and integrated-GPU reservations):
# - linux: a desktop session idles at 0.7-1 GB (Ubuntu/Kubuntu, measured:
#   https://daniel.smargarido.com/minimize_memory/_contents): 3 GiB in all; a headless
#   server keeps less (give it);
# - windows: Windows 11's own processes take 2-4 GB of an 8 GB machine
#   (https://windowsforum.com/threads/maximize-performance-understanding-ram-usage-in-windows-11.339807/):
#   5 GiB in all;
# - macos: a headless M2 Max idles at about 4 GB of 64 (https://github.com/jundot/omlx/issues/1533),
#   but a 16 GB M3 ran LLaMA-7B F16 (12.6 GiB) on its CPU at RAM speed
#   (XiongjieDai/GPU-Benchmarks-on-LLM-Inference, benchmarks/cpu_rows.py): macOS compresses and
#   pages out the rest, so 3 GiB; the GPU's share of a Mac's RAM is macOS's own limit (below).
RAM_HEADROOM_GIB = {"linux": 3.0, "windows": 5.0, "macos": 3.0}
# Reading the evicted pages of a memory-mapped GGUF back, GB/s: page faults read in the kernel's
# read-around chunks, far from a drive's sequential figure. An assumption: a laptop NVMe read
# through the page cache by 8 threads gave 1.65 GB/s (1.37 direct;
# https://github.com/JustVugg/colibri/issues/1173); a "1 GB/s" laptop NVMe took 20 s a token for a
# 20 GB model on 16 GB of RAM, every weight re-read each token
# (https://github.com/ggml-org/llama.cpp/pull/711).
DEFAULT_STORAGE_READ_GB_S = 1.5


def default_os(devices: Sequence[Card]) -> str:
    """The OS assumed when none is given: macOS with an Apple chip, else Linux (what the
    public llama.cpp runs the calibration uses were mostly made on, and the only OS of a
    DGX Spark or a Jetson)."""
    return "macos" if any(c.vendor == "Apple" for c in devices) else "linux"


def ram_headroom_gib(os_name: str, given: float | None = None) -> float:
    """The RAM the OS keeps, GiB: `given`, else the OS's default (RAM_HEADROOM_GIB)."""
    return RAM_HEADROOM_GIB[os_name] if given is None else given


def usable_ram_gib(ram_gib: float, headroom_gib: float) -> float:
    """System RAM a model's CPU part may take, GiB (never below 0)."""
    return max(0.0, ram_gib - headroom_gib)


# The GPU's share of a unified-memory chip's RAM by OS, where the OS decides it:
# - macOS: Metal's recommendedMaxWorkingSetSize, about 2/3 of the RAM up to 36 GB (5.3 GB of
#   8, https://github.com/SceneWorks/SceneWorks/pull/1552; 10.67 GB of 16,
#   https://github.com/exo-explore/exo/pull/1672) and 3/4 above
#   (https://github.com/gpustack/gpustack/issues/1375); `sudo sysctl iogpu.wired_limit_mb`
#   raises it, and macOS 26 gives 107.5 GiB of 128 (https://github.com/antirez/ds4/pull/893):
#   give that as gpu_memory;
# - Strix Halo on Windows: AMD Variable Graphics Memory gives the GPU at most 96 of 128 GB (3/4);
#   on Linux the GTT limit (amdgpu.gttsize, ttm.pages_limit) is raised to all but the OS's
#   share (RAM_HEADROOM_GIB), as LLM set-ups do (124 GiB GPU / 4 GiB OS,
#   https://whylucian.github.io/softab/docs/hardware-specs.html; AMD's
#   https://rocm.docs.amd.com/en/latest/how-to/system-optimization/strixhalo.html); a stock
#   kernel's GTT is about half the RAM: give gpu_memory then;
# - GB10 (DGX Spark, DGX OS only): the OS sees 121.69 GiB of the 128
#   (https://github.com/Syllo/nvtop/issues/449, and 121.69 in
#   https://github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks/issues/47); its desktop idles
#   at 8.0-8.7 GiB used (nvtop issue 449): 121.69 - 8 = 113.7 GiB for the GPU.
MACOS_SMALL_RAM_GIB = 36.0
MACOS_SHARE = (2 / 3, 0.75)  # up to MACOS_SMALL_RAM_GIB, above it
STRIX_HALO_WINDOWS_SHARE = 0.75
GB10_VISIBLE_GIB = 121.69
GB10_OS_IDLE_GIB = 8.0


def unified_gpu_gib(card: Card, os_name: str, headroom_gib: float | None = None) -> float | None:
    """GiB of a unified-memory chip's RAM its GPU may use under `os_name` (headroom_gib: the
    RAM the OS keeps, given; None: its default); None for a chip whose share the OS does not
    set here (the catalog's figure stands) or a discrete card."""
    if not card.unified_memory:
        return None
    ram = card.memory_gib
    if card.vendor == "Apple":  # macOS's wired limit, whatever else the RAM holds
        return ram * (MACOS_SHARE[0] if ram <= MACOS_SMALL_RAM_GIB else MACOS_SHARE[1])
    if card.generation == "Strix Halo":
        if os_name == "windows":
            return ram * STRIX_HALO_WINDOWS_SHARE
        return usable_ram_gib(ram, ram_headroom_gib(os_name, headroom_gib))
    if card.name == "GB10":
        keep = GB10_OS_IDLE_GIB if headroom_gib is None else headroom_gib
        return usable_ram_gib(min(ram, GB10_VISIBLE_GIB), keep)
    return None


def paged_bytes(dense_read: Num, dense_stored: Num, expert_read: Num, expert_stored: Num,
                resident_bytes: Num) -> Num:
    """Bytes a token reads from storage when a CPU part of dense_stored + expert_stored bytes
    has resident_bytes of RAM (0 when it fits); floats, or columns of rows (elementwise.py).

    The dense tensors are read whole, in the same order, every token: the page cache keeps them
    while they fit; a scan larger than the cache misses every page under LRU, so then every byte
    the token reads comes from storage (llama.cpp PR 711's 20 s a token). Experts are read as
    routed, each in about equal measure: with the RAM left after the dense part holding a share
    of them, that share of their reads hits and the rest misses.
    """
    held = (resident_bytes - dense_stored) / where(expert_stored > 0, expert_stored, 1.0)
    return where(dense_stored + expert_stored <= resident_bytes, 0.0,
                 where((dense_stored >= resident_bytes) | (expert_stored <= 0),
                       dense_read + expert_read, expert_read * (1.0 - held)))


# When a paging run is still an answer: its dense part stays resident (else every token re-reads
# the whole CPU part: 20 s a token in llama.cpp PR 711) and at least this share of the CPU part
# fits the RAM left to it. Beyond that the answer is "does not fit": a choice of presentation,
# not a fit to data (the speed the model gives there is minutes a paragraph).
MIN_RESIDENT_SHARE = 0.5


def pages(dense_stored: Num, expert_stored: Num, resident: Num) -> Num:
    """Whether a CPU part, too big for the RAM left to it (`resident`), still runs as a paging
    answer: only its experts page and at least MIN_RESIDENT_SHARE of it stays resident; on one
    row's floats or columns of rows (elementwise.py)."""
    stored = dense_stored + expert_stored
    return ((stored > resident) & (resident >= dense_stored)
            & (resident >= MIN_RESIDENT_SHARE * stored))


@dataclass(frozen=True)
class CpuPart:
    """What a placement leaves in system RAM, bytes: read per token and stored, dense tensors
    (attention, dense FFNs, the output, the CPU layers' KV cache) and expert tensors apart, and
    the RAM left to them (the token embeddings, hardly read, left out of both)."""

    dense_read: float
    expert_read: float
    dense_stored: float
    expert_stored: float
    resident: float

    @property
    def read(self) -> float:
        """Bytes a generated token reads from the CPU part."""
        return self.dense_read + self.expert_read

    def pages(self) -> bool:
        """Whether this CPU part, too big for its RAM, still runs as a paging answer
        (pages)."""
        paging: bool = pages(self.dense_stored, self.expert_stored, self.resident)
        return paging

    def paged_per_token(self) -> float:
        """Bytes a generated token re-reads from storage (paged_bytes)."""
        paged: float = paged_bytes(self.dense_read, self.dense_stored, self.expert_read,
                                   self.expert_stored, self.resident)
        return paged

    def paged_per_pass(self) -> float:
        """Bytes a prompt micro-batch re-reads from storage: a batch reads every expert."""
        paged: float = paged_bytes(self.dense_stored, self.dense_stored, self.expert_stored,
                                   self.expert_stored, self.resident)
        return paged
