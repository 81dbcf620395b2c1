"""A rig's stages composed: the time of a token and of a prompt from its devices' shares, the
CPU's part and the hand-overs (rig_engine's formulas, its module docstring states them).

Each formula runs on one row's floats (rig_engine, a single answer: numpy is not loaded) and on
numpy columns of a report's rows (rig_batch): the same operations in the same order, so the
same floats (elementwise.py).
"""
from __future__ import annotations

from tpscalc.estimate.elementwise import Num, where
from tpscalc.estimate.types import Bound

# Fixed CPU cost of one token when some layers or experts run on the CPU (thread barriers per
# graph node; ggml-cpu.c): an assumption of 2 ms, the order of llama.cpp's CPU-only decode of a
# tiny model (~500 tok/s), not fitted.
CPU_TOKEN_US = 2000.0
# What a token's crossing from one device to the next costs, per boundary: the split's input
# (n_embd activations, a few kB) copied to the next device and the two streams synchronised,
# before that device's own graph runs. Each device's share of the work (its bytes, its layers'
# launches) is already in its own decode estimate, so a layer split costs the sum of the
# devices' shares plus this per hop, not a flat factor. Current builds keep a CUDA graph per
# split (llama.cpp #18934, January 2026: "a cuda graph per split"; #13815 on layer split), so
# no kernel is launched one by one: what remains is the copy's and the synchronisation's
# latency, assumed here at 30 µs (an event wait plus a peer copy of ~16 kB; not fitted). Builds
# before that turned CUDA graphs off when a graph was split: every layer then paid the no-graph
# launch cost the calibration fits for old builds (`era_terms["decode|cuda|0"]`, µs per layer),
# which is what the 2024 multi-GPU rows of all_sources_public.csv show
# (benchmarks/rig_accuracy.py replays them with it).
HOP_US = 30.0
# The link when none is given (--pcie): PCIe 4.0 ×16, 16 GT/s × 16 lanes × 128/130 = 31.5 GB/s
# (PCI-SIG), the catalog holding no card's own link; the copies of CPU weights
# in a partially offloaded prefill run at about 80 % of it.
DEFAULT_PCIE_GB_S = 31.5
PCIE_EFFICIENCY = 0.8
RIG_BAND = (0.6, 1.6)  # the range given around the RAM and CPU terms (not calibrated)


# decode_figures' bound: the GPUs' (theirs), the hand-overs, the RAM, storage, a CPU limit
HOST_BOUNDS: tuple[Bound, ...] = ("bandwidth", "overhead", "ram_bandwidth", "storage")


def decode_figures(gpu_s: Num, gpu_fast_s: Num, gpu_slow_s: Num, devices: Num, cpu_read: Num,
                   ram_rate_gb_s: Num, ram_other_bound: Num, paged: Num, storage_gb_s: Num,
                   ) -> tuple[Num, Num, Num, Num, Num, Num]:
    """A token's stages composed, on one row's floats or on columns of rows (elementwise.py):
    `gpu_s` (and its fast and slow ends) the devices' seconds summed, `devices` how many,
    `cpu_read` the bytes read from RAM at `ram_rate_gb_s` (`ram_other_bound`: a CPU limit, not
    the RAM, sets that rate), `paged` the bytes re-read from storage at `storage_gb_s`.

    (tokens/s, low, high, which term is largest: 0 the GPUs, 1 the overheads, 2 the RAM,
    3 storage, 4 the CPU's limit; the host's seconds; whether one device alone answers)."""
    on_cpu = cpu_read > 0
    ram = where(on_cpu, cpu_read / (ram_rate_gb_s * 1e9), 0.0)
    storage = where(on_cpu, paged / (storage_gb_s * 1e9), 0.0)
    split = (devices + on_cpu - 1) * HOP_US * 1e-6
    overhead = where(on_cpu, CPU_TOKEN_US * 1e-6, 0.0) + split
    # the terms in the order the bound is told apart (the first of equals): a CPU limit's
    # term comes last, after storage, the RAM's then 0
    third = where(ram_other_bound, 0.0, ram)
    last = where(ram_other_bound, ram, 0.0)
    seconds = gpu_s + overhead + third + storage + last  # adding the 0.0 changes no float
    largest, k = gpu_s, 0
    for i, term in enumerate((overhead, third, storage, last), start=1):
        k = where(term > largest, i, k)
        largest = where(term > largest, term, largest)
    # The range: the GPUs' own calibrated ranges (the same kernels as on one card), the RAM and
    # CPU terms (assumed, not calibrated) at the rig band; the hand-overs as assumed; paging
    # from as estimated (the fast end) to every CPU byte re-read each token (the slow end).
    host_s = seconds - gpu_s - split - storage
    host_s = where(host_s <= 1e-9 * seconds, 0.0, host_s)  # the sum's rounding is no host term
    worst = where(storage > 0, cpu_read / (storage_gb_s * 1e9), 0.0)
    return (1.0 / seconds, 1.0 / (gpu_slow_s + split + host_s / RIG_BAND[0] + worst),
            1.0 / (gpu_fast_s + split + host_s / RIG_BAND[1] + storage), k, host_s,
            (devices + on_cpu == 1) & (host_s <= 0))


def cpu_part_figures(n: Num, read: Num, output_read: Num, expert_read_per_layer: Num,
                     expert_bytes: Num, kv_read: Num, cpu_layers: Num, cpu_expert_layers: Num,
                     output_on_gpu: Num, cpu_weights: Num, cpu_kv: Num, embedding: Num,
                     ram: Num) -> tuple[Num, Num, Num, Num, Num]:
    """host.CpuPart's fields (dense and expert bytes read, dense and expert bytes stored, RAM
    left), bytes, from a placement's CPU part, on one row or columns of rows (elementwise.py)."""
    total = (cpu_layers * (read - output_read) / n
             + cpu_expert_layers * expert_read_per_layer
             + where(output_on_gpu, 0.0, output_read)
             + kv_read * cpu_layers / n)
    expert_layers = cpu_layers + cpu_expert_layers
    expert_read = expert_layers * expert_read_per_layer
    expert_stored = expert_layers * expert_bytes
    stored = cpu_weights + cpu_kv - embedding
    return (total - expert_read, expert_read, stored - expert_stored, expert_stored,
            ram - embedding)


def prefill_figures(prompt: Num, passes: Num, compute: Num, slow: Num, fast: Num, moved: Num,
                    link_gb_s: Num, paged: Num) -> tuple[Num, Num, Num, Num, Num, Num]:
    """A prompt's time composed, on one row's floats or columns of rows (elementwise.py): the
    devices' seconds (`compute`, its `slow` and `fast` ends), the copies of `moved` CPU weight
    bytes over the link each of `passes` micro-batches, and `paged` seconds of storage reads.

    (tokens/s, low, high, seconds, the bound: 0 the devices', 1 the link, 2 storage; the link's
    and storage's seconds)."""
    pcie = where(moved > 0, passes * moved / (link_gb_s * 1e9) + paged, 0.0)
    seconds = compute + pcie
    rest = pcie - paged
    k = where(paged > where(rest > compute, rest, compute), 2, where(pcie > compute, 1, 0))
    return (prompt / seconds, prompt / (slow + pcie / RIG_BAND[0]),
            prompt / (fast + pcie / RIG_BAND[1]), seconds, k, pcie)
