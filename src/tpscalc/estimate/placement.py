"""Where llama.cpp puts a model on a rig: layers across GPUs, experts and layers in system RAM.

Follows llama.cpp's `--fit` (common/fit.cpp) and its layer split (-sm layer):
- each device keeps a margin of 1,024 MiB free (fit.cpp's default `--fit-target`);
- the repeating layers are split across the GPUs in proportion to each one's free memory
  (`-ts`), the last layers on the last device (layers are filled back to front);
- the output layer goes on a GPU first (llama.cpp offloads it as layer n_layers + 1); the
  token embeddings stay in system RAM (llama.cpp never offloads `token_embd`);
- for a mixture-of-experts model the expert tensors (ffn_*_exps) of the first layers move to
  the CPU first (`--n-cpu-moe K`), before whole layers leave the GPUs;
- a layer's KV cache lives with the layer;
- each GPU holds its own compute buffer.
A placement the user gives (n_gpu_layers, n_cpu_moe, tensor_split) is taken as given.
Pure: bytes in, a frozen `Placement` out.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

GIB = 2**30
MARGIN_BYTES = 1024 * 2**20  # llama.cpp common/fit.cpp: 1,024 MiB left free on each device


@dataclass(frozen=True)
class ModelLayout:
    """A model's weights by where llama.cpp can put them, bytes (stored, not read per token)."""

    n_layers: int
    layer_bytes: float  # one repeating layer's weights, expert tensors included
    expert_bytes: float  # of which the expert tensors (ffn_*_exps); 0 for a dense model
    kv_per_layer_bytes: float  # one layer's KV cache at the context
    output_bytes: float  # output head (and its norm)
    embedding_bytes: float  # token embeddings (always in system RAM)
    # What a partial offload adds to the first GPU's compute buffer (llama.cpp copies a
    # CPU-resident weight there for a large batch; memory.offload_buffer_bytes)
    offload_buffer_bytes: float = 0.0
    # With tied embeddings the output head is token_embd itself: llama.cpp loads a copy of it
    # with the output layer when that is on a GPU (the original stays in RAM). 0 when untied.
    output_copy_bytes: float = 0.0

    @property
    def gpu_output_bytes(self) -> float:
        """What the output layer takes on the GPU that holds it."""
        return self.output_bytes + self.output_copy_bytes


@dataclass(frozen=True)
class DeviceSlot:
    """One GPU: its name, memory llama.cpp may allocate and its compute buffer, bytes."""

    name: str
    usable_bytes: float
    buffer_bytes: float  # compute buffer + backend overhead on this device


@dataclass(frozen=True)
class UserPlacement:
    """A placement the user gives (llama.cpp -ngl, --n-cpu-moe, -ts); None: let --fit choose."""

    n_gpu_layers: int | None = None  # repeating layers on GPUs (+1 in -ngl for the output)
    n_cpu_moe: int | None = None
    tensor_split: tuple[float, ...] | None = None


@dataclass(frozen=True)
class DevicePlacement:
    """What one GPU holds, bytes."""

    name: str
    layers: int
    weights_bytes: float
    kv_bytes: float
    buffer_bytes: float
    usable_bytes: float
    # memory left free: --fit's 1,024 MiB; 0 for a placement the user gave (llama.cpp loads it
    # as asked and fails only when the device is full)
    margin_bytes: float = MARGIN_BYTES

    @property
    def total_bytes(self) -> float:
        """Everything on the device."""
        return self.weights_bytes + self.kv_bytes + self.buffer_bytes

    @property
    def fits(self) -> bool:
        """Total plus the margin within the usable memory."""
        return self.total_bytes + self.margin_bytes <= self.usable_bytes + 1e-6


@dataclass(frozen=True)
class Placement:
    """A model placed on a rig; the CPU part is what lives in system RAM."""

    devices: tuple[DevicePlacement, ...]
    cpu_layers: int  # whole repeating layers in RAM
    cpu_expert_layers: int  # GPU layers whose experts are in RAM (--n-cpu-moe)
    cpu_weights_bytes: float  # embeddings, CPU layers, experts of the --n-cpu-moe layers
    cpu_kv_bytes: float
    output_on_gpu: bool
    n_layers: int
    fits: bool  # every device within its memory and the CPU part within the RAM
    embedding_bytes: float = 0.0  # the token embeddings, in cpu_weights_bytes

    def renamed(self, names: Sequence[str]) -> Placement:
        """The same placement on devices named `names` (one per device, in order)."""
        return Placement(tuple([DevicePlacement(name, d.layers, d.weights_bytes, d.kv_bytes,
                                                d.buffer_bytes, d.usable_bytes, d.margin_bytes)
                                for name, d in zip(names, self.devices, strict=True)]),
                         self.cpu_layers, self.cpu_expert_layers, self.cpu_weights_bytes,
                         self.cpu_kv_bytes, self.output_on_gpu, self.n_layers, self.fits,
                         self.embedding_bytes)

    @property
    def n_gpu_layers(self) -> int:
        """llama.cpp's -ngl: GPU layers, plus one for the output layer when it is on a GPU."""
        return sum(d.layers for d in self.devices) + (1 if self.output_on_gpu else 0)

    @property
    def n_cpu_moe(self) -> int:
        """llama.cpp's --n-cpu-moe: the first K layers keep their experts in RAM."""
        return self.cpu_layers + self.cpu_expert_layers if self.cpu_expert_layers else 0

    @property
    def tensor_split(self) -> tuple[int, ...]:
        """llama.cpp's -ts: layers per device."""
        return tuple(d.layers for d in self.devices)

    def offload_share(self, total_weights_bytes: float) -> float:
        """Share of the weights in system RAM (1 on the CPU alone); token embeddings left out on
        a GPU rig (llama.cpp always keeps them there)."""
        if not self.devices:
            return 1.0
        if total_weights_bytes <= 0:
            return 0.0
        cpu = self.cpu_weights_bytes - self.embedding_bytes
        return max(0.0, min(1.0, cpu / total_weights_bytes))


def _proportional(total: int, weights: Sequence[float]) -> list[int]:
    """`total` layers split by `weights` as llama.cpp does (llama-model.cpp): with the
    cumulative shares s, layer i goes to the first device whose s exceeds i / total.

    Counted per device rather than per layer: the layers before boundary b are the i with
    i / total < b, i.e. the first ceil(b × total) (checked against the exact comparison)."""
    s = 0.0
    for w in weights:  # in order, as placement_batch adds them (sum() compensates on 3.12+)
        s += w
    counts = [0] * len(weights)
    if total <= 0 or s <= 0:
        return counts
    acc, before = 0.0, 0
    for j, w in enumerate(weights[:-1]):
        acc += w
        b = acc / s
        c = min(total, max(before, math.ceil(b * total)))
        while c > before and not (c - 1) / total < b:
            c -= 1
        while c < total and c / total < b:
            c += 1
        counts[j] = c - before
        before = c
    counts[-1] = total - before
    return counts


def device_weights_bytes(m: ModelLayout, first: int, end: int, experts_on_cpu: int) -> float:
    """Weights of layers first..end-1 on a GPU, bytes: those below `experts_on_cpu` without
    their experts. One product per kind, so that placement_batch gets the same float."""
    light = max(0, min(experts_on_cpu, end) - first)
    return light * (m.layer_bytes - m.expert_bytes) + (end - first - light) * m.layer_bytes


def _assign(m: ModelLayout, slots: Sequence[DeviceSlot], gpu_layers: int, experts_on_cpu: int,
            split: Sequence[float] | None, fill: bool,
            margin: float = MARGIN_BYTES) -> list[int] | None:
    """Layers per device for the last `gpu_layers` layers, back to front; None if they do not fit.

    split: the proportions (default: free memory). fill: a device that cannot hold its share
    passes the rest to the device before it (--fit); without it the split is as given.
    margin: memory each device keeps free.
    """
    counts = _counts(m, tuple((s.usable_bytes, s.buffer_bytes) for s in slots), gpu_layers,
                     experts_on_cpu, None if split is None else tuple(split), fill, margin)
    return None if counts is None else list(counts)


@functools.lru_cache(maxsize=65536)
def _counts(m: ModelLayout, memory: tuple[tuple[float, float], ...], gpu_layers: int,
            experts_on_cpu: int, split: tuple[float, ...] | None, fill: bool,
            margin: float) -> tuple[int, ...] | None:
    """`_assign` on the devices' (usable, buffer) bytes: cached, since a report places the same
    model on many cards of the same memory."""
    free = [max(0.0, usable - buffer - margin) for usable, buffer in memory]
    free[-1] -= m.gpu_output_bytes
    target = _proportional(gpu_layers, split if split is not None else free)
    counts = [0] * len(memory)
    top, lowest = m.n_layers - 1, m.n_layers - gpu_layers  # the next layer to place, the last
    full = m.layer_bytes + m.kv_per_layer_bytes  # a layer at index >= experts_on_cpu
    light = full - m.expert_bytes  # a layer whose experts stay on the CPU
    carry = 0
    for d in range(len(memory) - 1, -1, -1):
        want = target[d] + carry
        room = free[d] if fill else math.inf
        # Back to front: first the layers that keep their experts, then the lighter ones.
        wanted_heavy = min(want, max(0, top - max(experts_on_cpu, lowest) + 1))
        heavy = _take(wanted_heavy, full, room)
        taken = heavy
        if heavy == wanted_heavy:
            rest = min(want - heavy, max(0, top - heavy - lowest + 1))
            taken += _take(rest, light, room - heavy * full)
        counts[d] = taken
        top -= taken
        carry = want - taken if fill else 0
    return tuple(counts) if sum(counts) == gpu_layers else None


def _take(wanted: int, cost: float, room: float) -> int:
    """How many of `wanted` layers of `cost` bytes each fit in `room` bytes."""
    if wanted <= 0 or room == math.inf or cost <= 0:
        return max(0, wanted)
    if room < cost:
        return 0
    t = min(wanted, int(room // cost))
    while t > 0 and t * cost > room:
        t -= 1
    return t


def _build(m: ModelLayout, slots: Sequence[DeviceSlot], counts: Sequence[int],
           experts_on_cpu: int, output_on_gpu: bool, ram_bytes: float | None,
           margin: float = MARGIN_BYTES) -> Placement:
    devices = []
    layer = m.n_layers
    for d in range(len(slots) - 1, -1, -1):
        first = layer - counts[d]
        weights = device_weights_bytes(m, first, layer, experts_on_cpu)
        if d == len(slots) - 1 and output_on_gpu:
            weights += m.gpu_output_bytes
        devices.append(DevicePlacement(slots[d].name, counts[d], weights,
                                       counts[d] * m.kv_per_layer_bytes, slots[d].buffer_bytes,
                                       slots[d].usable_bytes, margin))
        layer = first
    devices.reverse()
    cpu_layers = m.n_layers - sum(counts)
    expert_layers = max(0, min(experts_on_cpu, m.n_layers) - cpu_layers)
    cpu_weights = (m.embedding_bytes + cpu_layers * m.layer_bytes
                   + expert_layers * m.expert_bytes
                   + (0.0 if output_on_gpu else m.output_bytes))
    cpu_kv = cpu_layers * m.kv_per_layer_bytes
    ram_ok = ram_bytes is None or cpu_weights + cpu_kv <= ram_bytes
    fits = ram_ok and all(d.fits for d in devices)
    return Placement(tuple(devices), cpu_layers, expert_layers, cpu_weights, cpu_kv,
                     output_on_gpu, m.n_layers, fits, m.embedding_bytes)


def place(m: ModelLayout, slots: Sequence[DeviceSlot], ram_bytes: float | None,
          user: UserPlacement | None = None) -> Placement:
    """Where llama.cpp puts `m` on `slots` (GPUs, in order) and `ram_bytes` of system RAM.

    ram_bytes: None when the RAM is not known (nothing may move to it but the embeddings).
    Without a user placement: everything on the GPUs if it fits; else (MoE) the fewest
    --n-cpu-moe layers that make it fit; else the most GPU layers that fit.
    """
    user = user or UserPlacement()
    if not slots:  # CPU only
        return _build(m, slots, [], 0, False, ram_bytes)
    if user.n_gpu_layers is not None or user.n_cpu_moe is not None:
        return _given(m, slots, ram_bytes, user)
    split = user.tensor_split
    offload_allowed = ram_bytes is not None
    n = m.n_layers
    counts = _assign(m, slots, n, 0, split, True)
    if counts is not None or not offload_allowed:
        return _build(m, slots, counts or _best_effort(m, slots, n, split), 0, True, ram_bytes)
    slots = _offloading(m, slots)
    if m.expert_bytes > 0:
        k = _fewest(1, n, lambda k: _assign(m, slots, n, k, split, True) is not None)
        if k is not None:
            return _build(m, slots, _assign(m, slots, n, k, split, True) or [], k, True,
                          ram_bytes)
    experts = n if m.expert_bytes > 0 else 0
    # The most GPU layers that fit: the fewest CPU layers c, with g = n - c.
    c = _fewest(1, n, lambda c: _assign(m, slots, n - c, experts, split, True) is not None)
    if c is not None:
        return _build(m, slots, _assign(m, slots, n - c, experts, split, True) or [], experts,
                      True, ram_bytes)
    return _build(m, slots, [0] * len(slots), experts, False, ram_bytes)


def _offloading(m: ModelLayout, slots: Sequence[DeviceSlot]) -> list[DeviceSlot]:
    """`slots` with the first GPU's compute buffer grown by the partial-offload copy (the
    device that runs the CPU layers' large batches)."""
    out = list(slots)
    if out and m.offload_buffer_bytes > 0:
        first = out[0]
        out[0] = DeviceSlot(first.name, first.usable_bytes,
                            first.buffer_bytes + m.offload_buffer_bytes)
    return out


def _fewest(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The smallest k in lo..hi with ok(k), None if none; by bisection, since moving more to
    the CPU (more --n-cpu-moe layers, fewer GPU layers) never makes a placement stop fitting."""
    if not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _best_effort(m: ModelLayout, slots: Sequence[DeviceSlot], g: int,
                 split: Sequence[float] | None) -> list[int]:
    """All `g` layers split as asked, whether or not they fit (the placement says it does not)."""
    counts = _assign(m, slots, g, 0, split, False)
    return counts if counts is not None else [g] + [0] * (len(slots) - 1)


def _given(m: ModelLayout, slots: Sequence[DeviceSlot], ram_bytes: float | None,
           user: UserPlacement) -> Placement:
    """The user's -ngl / --n-cpu-moe / -ts, as given (the output layer on a GPU when -ngl
    exceeds the repeating layers, as llama.cpp counts it)."""
    ngl = m.n_layers + 1 if user.n_gpu_layers is None else user.n_gpu_layers
    g = min(ngl, m.n_layers)
    experts = min(user.n_cpu_moe or 0, m.n_layers) if m.expert_bytes > 0 else 0
    split = user.tensor_split
    if g < m.n_layers or experts > 0:
        slots = _offloading(m, slots)
    counts = _assign(m, slots, g, experts, split, split is None, margin=0.0)
    if counts is None:
        counts = _best_effort(m, slots, g, split)
    return _build(m, slots, counts, experts, ngl > m.n_layers, ram_bytes, margin=0.0)
