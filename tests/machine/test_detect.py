"""`tpscalc here`: each detector against recordings of real machines, matching, the no-GPU case."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from tpscalc.cli.main import app
from tpscalc.machine import detect
from tpscalc.machine.apple import detect_apple
from tpscalc.machine.detect import DEFAULT_RAM_BANDWIDTH_GB_S, machine_json
from tpscalc.machine.match import match_card
from tpscalc.machine.nvidia import detect_nvidia
from tpscalc.machine.sysfs import detect_sysfs
from tpscalc.machine.system import dmi_bandwidth_gb_s
from tpscalc.machine.types import GIB, DetectedGpu

DATA = Path(__file__).parent / "data"
NVML = json.loads((DATA / "nvml.json").read_text())["machines"]
EMPTY_ROOT = DATA / "no-such-root"
RAM = SimpleNamespace(total=64 * GIB, available=40 * GIB)


class RecordedNvml:
    """NVML's answers for one recorded machine."""

    def __init__(self, devices: list[dict[str, Any]]) -> None:
        self.devices = devices

    def device_count(self) -> int:
        return len(self.devices)

    def name(self, index: int) -> str:
        return str(self.devices[index]["name"])

    def memory_bytes(self, index: int) -> tuple[int, int]:
        return self.devices[index]["total"], self.devices[index]["free"]

    def pcie(self, index: int) -> tuple[int, int] | None:
        link = self.devices[index]["pcie"]
        return (link[0], link[1]) if link else None


class RecordedPsutil:
    """psutil's two answers the detector uses."""

    @staticmethod
    def virtual_memory() -> SimpleNamespace:
        return RAM

    @staticmethod
    def cpu_count(logical: bool = True) -> int:
        return 16


def recorded_commands(answers: dict[str, str]) -> Any:
    """A command runner answering from `answers` (keyed by the joined argv), else None."""
    def run(argv: Sequence[str]) -> str | None:
        return answers.get(" ".join(argv))
    return run


NO_COMMANDS = recorded_commands({})
APPLE = {"system_profiler SPDisplaysDataType": (DATA / "system_profiler_m2max.txt").read_text(),
         "sysctl -n hw.memsize": "68719476736\n", "sysctl -n iogpu.wired_limit_mb": "0\n"}


def _detect(nvml: str | None = None, root: Path = EMPTY_ROOT,
            commands: dict[str, str] | None = None) -> Any:
    return detect(nvml=RecordedNvml(NVML[nvml]) if nvml else None, sysfs_root=root,
                  run=recorded_commands(commands or {}), psutil_module=RecordedPsutil)


@pytest.mark.parametrize("machine, card, memory_gib, pcie", [
    ("rtx4090", "GeForce RTX 4090", 23.99, "PCIe 4.0 x16"),
    ("h100x2", "H100 SXM5 80 GB", 79.65, None),  # "HBM3" tells the SXM5 from the PCIe card
    ("h200", "H200 SXM 141 GB", 140.4, "PCIe 5.0 x16"),
])
def test_nvml_recordings_match_catalog_cards(machine: str, card: str, memory_gib: float,
                                             pcie: str | None) -> None:
    m = _detect(nvml=machine)
    data = machine_json(m)
    assert [g["card"] for g in data["gpus"]] == [card] * len(NVML[machine])
    assert data["gpus"][0]["memory_gib"] == pytest.approx(memory_gib, abs=0.01)
    assert data["gpus"][0]["pcie"] == pcie and data["gpus"][0]["backend"] == "cuda"
    assert m.rig is not None and m.rig.devices[0].name == card
    assert m.rig.ram_gib == 64


def test_two_gpus_say_the_estimates_use_the_first() -> None:
    assert any("Several GPUs" in n for n in _detect(nvml="h100x2").notes)


def test_amd_sysfs_recording_keeps_the_detected_memory_of_unmatched_gpus() -> None:
    gpus = detect_sysfs(DATA / "sysfs_rx7900xtx")
    assert [(g.vendor, g.backend) for g in gpus] == [("AMD", "rocm")] * 2
    assert gpus[0].memory_gib == pytest.approx(25753026560 / GIB)
    assert gpus[0].free_gib == pytest.approx((25753026560 - 536870912) / GIB)
    assert gpus[0].pcie == "PCIe 4.0 x16"
    m = _detect(root=DATA / "sysfs_rx7900xtx")
    # named by PCI id only: no card to estimate with, so the rig is the CPU and its RAM
    assert m.rig is not None and m.rig.devices == ()
    first = machine_json(m)["gpus"][0]
    assert (first["name"], first["card"], first["memory_gib"]) == ("AMD GPU 0x744c", None, 23.98)
    assert "AMD GPU 0x744c (24.0 GiB) is not matched" in m.notes[0]


def test_apple_recording_matches_the_core_count_and_the_memory() -> None:
    m = _detect(commands=APPLE)
    assert m.rig is not None
    card = m.rig.devices[0]
    assert card.name == "Apple M2 Max (38-core GPU)"
    assert card.memory_gib == 64  # this Mac's memory, not the catalog's largest option
    assert m.ram_bandwidth_gb_s == card.bandwidth_gb_s  # unified memory


def test_apple_wired_limit_sets_the_usable_share() -> None:
    gpu = detect_apple(recorded_commands({**APPLE, "sysctl -n iogpu.wired_limit_mb": "49152\n"}))
    assert gpu[0].usable_fraction == pytest.approx(48 / 64)


def test_no_gpu_answers_for_cpu_only() -> None:
    data = machine_json(_detect())
    assert data["gpus"] == [] and data["rig"]["devices"] == []
    assert data["rig"]["ram_gib"] == 64  # estimates run on the CPU with this RAM
    assert data["ram_gib"] == 64 and data["ram_available_gib"] == 40
    assert any("CPU-only" in n for n in data["notes"])
    assert data["ram_bandwidth_gb_s"] == DEFAULT_RAM_BANDWIDTH_GB_S
    assert any("assumed" in n for n in data["notes"])


def test_here_json_on_this_machine() -> None:
    result = CliRunner().invoke(app, ["here", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {"gpus", "ram_gib", "ram_available_gib", "ram_bandwidth_gb_s", "cpu",
                         "os", "notes"}
    assert data["ram_gib"] > 0
    if not data["gpus"]:  # CI and this project's build machines have none
        assert any("CPU-only" in n for n in data["notes"])


# `dmidecode -t memory` as it prints two populated DDR5-4800 slots and an empty one.
DMI = """Handle 0x0040, DMI type 17, 92 bytes
Memory Device
\tSize: 32 GB
\tSpeed: 5600 MT/s
\tConfigured Memory Speed: 4800 MT/s

Handle 0x0041, DMI type 17, 92 bytes
Memory Device
\tSize: No Module Installed
\tSpeed: Unknown

Handle 0x0042, DMI type 17, 92 bytes
Memory Device
\tSize: 32 GB
\tSpeed: 5600 MT/s
\tConfigured Memory Speed: 4800 MT/s
"""


def test_dmi_bandwidth_is_speed_times_eight_bytes_per_populated_channel() -> None:
    assert dmi_bandwidth_gb_s(DMI) == pytest.approx(2 * 4800 * 8 / 1000)
    assert dmi_bandwidth_gb_s(None) is None


@pytest.mark.parametrize("name, vendor, memory_gib, expected", [
    ("NVIDIA GeForce RTX 3060", "NVIDIA", 11.76, "GeForce RTX 3060 12 GB"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA", 79.15, "A100 SXM4 80 GB"),
    ("AMD Radeon RX 7900 XTX", "AMD", 23.98, "Radeon RX 7900 XTX"),
    ("NVIDIA Graphics Device", "NVIDIA", 8.0, None),
])
def test_driver_names_match_catalog_spellings(name: str, vendor: str, memory_gib: float,
                                              expected: str | None) -> None:
    from tpscalc.catalog import store

    gpu = DetectedGpu(name, vendor, memory_gib, None, "cuda")
    card, _ = match_card(gpu, store.cards())
    assert (card.name if card else None) == expected


def test_nvidia_detector_without_nvml_finds_nothing() -> None:
    assert detect_nvidia(None) == []


def test_card_here_without_a_gpu_ends_with_one_line() -> None:
    result = CliRunner().invoke(app, ["card", "--here"])
    if result.exit_code == 0:  # a machine with a matched GPU answers instead
        return
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "estimate --model M --here" in result.output  # which answers for the CPU


@pytest.mark.parametrize(("brand", "name"), [
    ("AMD Ryzen 9 7950X 16-Core Processor", "Ryzen 9 7950X"),
    ("13th Gen Intel(R) Core(TM) i9-13900K", "Core i9-13900K"),
    ("Intel(R) Xeon(R) w9-3495X CPU @ 1.90GHz", "Xeon w9-3495X"),
    ("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", "Ryzen AI Max+ 395"),
    ("Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz", None),  # not in the table: unknown, no guess
])
def test_the_os_cpu_brand_finds_the_cpu_table_entry(brand: str, name: str | None) -> None:
    from tpscalc.machine.detect import table_cpu

    cpu = table_cpu(brand)
    assert (cpu.name if cpu is not None else None) == name


CPUINFO = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\ncpu MHz\t\t: 2100.000\n" \
          "flags\t\t: fpu sse2 avx2 avx512f\n"


def test_a_cpu_outside_the_table_is_bounded_by_the_cores_found(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(CPUINFO)

    class TwoCores(RecordedPsutil):
        @staticmethod
        def cpu_count(logical: bool = True) -> int:
            return 2

    m = detect(nvml=None, sysfs_root=tmp_path, run=NO_COMMANDS, psutil_module=TwoCores)
    assert m.rig is not None and m.rig.cpu is not None
    assert (m.rig.cpu.p_cores, m.rig.cpu.p_clock_ghz, m.rig.cpu.simd) == (2, 2.1, "AVX-512")
    assert any("2 cores found" in n for n in m.notes)
    from tpscalc import api
    from tpscalc.estimate.cpu_speed import CPU_FIT

    out = api.evaluate("Llama 3.1-8B", m.rig, quant="IQ4_XS")
    assert out["decode"]["bound"] == "cpu_compute"
    # two cores at the fitted per-core rate read the weights at most this fast
    cap = 2 * CPU_FIT.core_gb_s_quantized * 1e9 / (out["memory"]["weights_gib"] * GIB)
    assert out["decode"]["tokens_per_s"] <= cap * 1.01


@pytest.mark.parametrize("is_root, says", [(True, "dmidecode gave no memory speed"),
                                           (False, "without root")])
def test_the_dmi_note_says_why_for_root_and_others(is_root: bool, says: str) -> None:
    m = detect(nvml=None, sysfs_root=EMPTY_ROOT, run=NO_COMMANDS, psutil_module=RecordedPsutil,
               is_root=is_root)
    dmi = [n for n in m.notes if "RAM bandwidth unknown" in n]
    assert len(dmi) == 1 and says in dmi[0]


def test_here_plans_with_the_ram_the_os_and_programs_hold_now() -> None:
    """The recorded machine has 64 GiB with 40 available: the rig keeps the 24 in use as its
    RAM headroom (a measurement, said in a note) and the OS this process runs on."""
    m = _detect()
    assert m.rig is not None and m.rig.ram_headroom_gib == 24 and m.rig.usable_ram_gib == 40
    assert any("RAM headroom 24.0 GiB" in n for n in m.notes)
    assert m.rig.os in (None, "linux", "windows", "macos")
