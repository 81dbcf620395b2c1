"""`tpscalc estimate` on rigs: 2x NAME, A + B, none, RAM, placements, and the bad input."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tpscalc", "estimate", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_two_cards_and_ram_give_a_placement_and_a_command() -> None:
    done = _run("--model", "Llama 3.3 70B", "--gpu", "2x RTX 3090", "--ram", "64",
                "--ram-bandwidth", "96", "--quant", "Q4_K_M", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    placement = data["placement"]
    assert [d["name"] for d in placement["devices"]] == ["GeForce RTX 3090"] * 2
    assert set(placement["devices"][0]) == {"name", "layers", "weights_gib", "kv_cache_gib",
                                            "buffers_gib", "total_gib"}
    assert set(placement["cpu"]) == {"layers", "expert_layers", "weights_gib"}
    a, b = placement["tensor_split"]
    assert data["command"]["llama_server"] == (
        f"-m Llama-3.3-70B-Q4_K_M.gguf -c 4096 -ngl 81 -ts {a},{b} -fa on")
    assert data["command"]["ollama"] == {"num_ctx": 4096, "num_gpu": 81}
    assert data["fit"] in ("comfortable", "tight") and data["offload_share"] == 0.0


def test_cpu_only() -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "32", "--ram-bandwidth",
                "96", "--quant", "Q4_K_M", "--json")
    data = json.loads(done.stdout)
    assert data["fit"] == "cpu" and "-ngl 0" in data["command"]["llama_server"]


def test_input_rows_with_rigs(tmp_path: Path) -> None:
    path = tmp_path / "rigs.csv"
    path.write_text("model,gpu,quant,n_gpu_layers,ram_gib,ram_bandwidth_gb_s\n"
                    "Llama 3.3 70B,2x RTX 3090,Q4_K_M,60,64,96\n"
                    "Llama 3.1-8B,RTX 3090 + RTX 3060 12 GB,Q4_K_M,,,\n")
    done = _run("--input", str(path), "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows[0]["placement"]["n_gpu_layers"] == 60 and rows[0]["fit"] == "offload"
    assert len(rows[1]["placement"]["devices"]) == 2 and rows[1]["decode"] is not None


@pytest.mark.parametrize("args", [
    ("--gpu", "3x RTX 9999", "--ram", "64"),
    ("--gpu", "RTX 4090", "--ram", "0"),
    ("--gpu", "RTX 4090", "--ram", "-8"),
    ("--gpu", "RTX 4090", "--n-gpu-layers", "-1"),
    ("--gpu", "2x RTX 3090", "--tensor-split", "1,2,3"),
    ("--gpu", "none"),
])
def test_bad_rigs_end_with_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    done = _run("--model", "Llama 3.3 70B", *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_estimate_here_without_a_gpu_answers_for_the_cpu(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On a machine with no GPU (like CI), `--here` estimates on its CPU and RAM."""
    import json

    from typer.testing import CliRunner

    from tpscalc import api
    from tpscalc.cli.main import app
    from tpscalc.estimate.query import Rig
    from tpscalc.machine.detect import Machine
    from tpscalc.machine.types import SystemInfo

    system = SystemInfo(32.0, 30.0, 51.2, "test CPU", 8, "Linux")
    machine = Machine((), system, 51.2, Rig((), ram_gib=32.0, ram_bandwidth_gb_s=51.2), ())
    monkeypatch.setattr(api, "detect_machine", lambda: machine)
    result = CliRunner().invoke(app, ["estimate", "--model", "Llama 3.1-8B", "--here", "--json",
                                      "--quant", "Q4_K_M"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["fit"] == "cpu" and data["decode"]["tokens_per_s"] > 0
    assert "-ngl 0" in data["command"]["llama_server"]


def test_ram_type_and_pcie_options() -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "32", "--ram-type",
                "DDR5-6000", "--ram-channels", "2", "--pcie", "4x16", "--quant", "Q4_K_M",
                "--json")
    assert done.returncode == 0, done.stderr
    by_rate = _run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "32",
                   "--ram-bandwidth", "96", "--quant", "Q4_K_M", "--json")
    assert json.loads(done.stdout)["decode"] == json.loads(by_rate.stdout)["decode"]
    for bad in (["--ram-type", "DDR9-1"], ["--pcie", "4x3"],
                ["--ram-type", "DDR5-6000", "--ram-channels", "0"]):
        failed = _run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "32", *bad)
        assert failed.returncode == 2 and len(failed.stderr.strip().splitlines()) == 1, bad


def test_system_ram_never_changes_an_answer_that_fits_the_card() -> None:
    """RAM is for what does not fit: a model the card holds gets the card page's answer (same
    quantization, speed and range) with --ram as without, and both carry the command."""
    args = ("--model", "Qwen3.6-35B-A3B", "--gpu", "RTX 4090", "--json")
    alone = json.loads(_run(*args).stdout)
    with_ram = json.loads(_run(*args, "--ram", "64").stdout)
    assert alone["fit"] in ("comfortable", "tight")
    for key in ("quant", "fit", "decode", "prefill", "memory", "placement", "command"):
        assert with_ram[key] == alone[key], key
    layers = alone["placement"]["n_gpu_layers"]
    assert alone["offload_share"] == 0.0 and alone["placement"]["cpu"]["layers"] == 0
    assert f"-ngl {layers} " in alone["command"]["llama_server"]
    assert alone["command"]["ollama"]["num_gpu"] == layers


def test_a_piped_table_keeps_its_cells_whole() -> None:
    done = _run("--model", "Qwen3.6-35B-A3B", "--gpu", "RTX 4090")
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout and "Qwen3.6-35B-A3B" in done.stdout
    assert "GeForce RTX 4090" in done.stdout


def test_cpu_names_the_host_cpu_and_its_memory() -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "64", "--cpu", "7700X",
                "--ram-type", "DDR5-6000", "--quant", "Q4_K_M", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    # one CCD reads 32 B × 2 GHz = 64 GB/s, less than two channels of DDR5-6000 (96 GB/s)
    assert data["gpu"] == "CPU only (Ryzen 7 7700X)" and data["fit"] == "cpu"
    assert data["decode"]["bound"] == "cpu_fabric" and 5 <= data["decode"]["tokens_per_s"] <= 25


def test_unknown_cpu_is_one_line_and_exit_2() -> None:
    done = _run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "64", "--cpu",
                "Ryzen 9 7955")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = (done.stderr + done.stdout).strip().splitlines()
    assert len(lines) == 1 and "unknown CPU 'Ryzen 9 7955'; closest:" in lines[0]


def test_input_rows_take_a_cpu_column(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("model,gpu,quant,ram_gib,cpu\n"
                    "Llama 3.1-8B,none,Q4_K_M,64,Ryzen 9 7950X\n"
                    "Llama 3.1-8B,none,Q4_K_M,64,Ryzen 9 7955\n", encoding="utf-8")
    done = _run("--input", str(rows), "--json")
    first, second = json.loads(done.stdout)
    assert first["gpu"] == "CPU only (Ryzen 9 7950X)" and first["error"] is None
    assert second["error"].startswith("unknown CPU")


def test_here_without_a_gpu_prints_the_machine_and_no_traceback(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`tpscalc here` on a machine with no GPU (like CI) describes it and says how to ask; it
    had no card to build a report for and failed with an IndexError."""
    from typer.testing import CliRunner

    from tpscalc import api
    from tpscalc.cli.main import app
    from tpscalc.estimate.query import Rig
    from tpscalc.machine.detect import Machine
    from tpscalc.machine.types import SystemInfo

    system = SystemInfo(32.0, 30.0, 51.2, "test CPU", 8, "Linux")
    note = "No GPU found: this machine is answered for CPU-only"
    machine = Machine((), system, 51.2, Rig((), ram_gib=32.0, ram_bandwidth_gb_s=51.2), (note,))
    monkeypatch.setattr(api, "detect_machine", lambda: machine)
    result = CliRunner().invoke(app, ["here"])
    assert result.exit_code == 0, result.output
    assert "CPU: test CPU (8 cores)" in result.output and "CPU-only" in result.output


@pytest.mark.parametrize("ngl", ["99", "999"])
def test_ngl_beyond_the_layers_means_all_of_them(ngl: str) -> None:
    """llama.cpp's -ngl 99 / 999 put every layer and the output on the GPU: the same answer as
    -ngl 33 for a 32-layer model, not a refusal."""
    args = ("--model", "Llama 3-8B", "--gpu", "RTX 3090", "--ram", "32", "--quant", "Q4_K_M",
            "--json")
    given, exact = _run(*args, "--n-gpu-layers", ngl), _run(*args, "--n-gpu-layers", "33")
    assert given.returncode == 0, given.stderr
    a, b = json.loads(given.stdout), json.loads(exact.stdout)
    assert a["placement"]["n_gpu_layers"] == 33 and a["fit"] == b["fit"]
    assert a["decode"]["tokens_per_s"] == b["decode"]["tokens_per_s"]


MUST_SHOW = ("--model", "Qwen3-30B-A3B", "--gpu", "GeForce GTX 1650 SUPER", "--ram", "16",
             "--n-cpu-moe", "48", "--json")


def test_experts_beyond_the_ram_left_by_the_os_page() -> None:
    """Issue 24: 16 GiB of RAM less the OS's headroom cannot hold 48 layers of Qwen3-30B-A3B's
    experts; the answer says it pages, what it assumed, and a storage-bound speed far below
    the plain offload's (the same rig with RAM to spare)."""
    done = _run(*MUST_SHOW)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["fit"] == "paging" and data["decode"]["bound"] == "storage"
    hostinfo = data["host"]
    assert hostinfo["os"] == "linux" and hostinfo["os_assumed"] is True
    assert hostinfo["usable_ram_gib"] == 16 - hostinfo["ram_headroom_gib"]
    paging = hostinfo["paging"]
    assert paging["cpu_part_gib"] > paging["resident_gib"] == hostinfo["usable_ram_gib"]
    assert paging["storage_read_assumed"] is True and "pages" in paging["note"]
    roomy = json.loads(_run(*MUST_SHOW[:5], "64", *MUST_SHOW[6:], "--quant",
                            data["quant"]).stdout)
    assert roomy["fit"] == "offload" and roomy["host"]["paging"] is None
    assert data["decode"]["tokens_per_s"] < 0.6 * roomy["decode"]["tokens_per_s"]
    assert data["decode"]["low"] < 0.2 * roomy["decode"]["tokens_per_s"]


def test_a_paging_answer_names_what_runs_without_paging() -> None:
    """Qwen3-30B-A3B at the quality floor (IQ4_XS) pages on a 16 GiB CPU-only machine; the answer
    keeps it, and names the more compressed format the RAM holds, with its (faster) speed."""
    rig = ("--model", "Qwen3-30B-A3B", "--gpu", "none", "--cpu", "Ryzen 5 3500", "--ram", "16")
    data = json.loads(_run(*rig, "--json").stdout)
    assert data["fit"] == "paging" and data["quant"] == "IQ4_XS"
    ways = {w["change"]: w for w in data["to_fit"]}
    way = ways["quant"]
    assert way["fit"] == "cpu" and way["quant"] != "IQ4_XS"
    assert way["decode_tokens_per_s"] > 1.5 * data["decode"]["tokens_per_s"]
    alone = json.loads(_run(*rig, "--quant", way["quant"], "--json").stdout)
    assert alone["fit"] == "cpu" and alone["host"]["paging"] is None
    table = _run(*rig)
    assert table.returncode == 0, table.stderr
    assert "pages from storage on CPU only (Ryzen 5 3500). What would run without paging:" in (
        table.stdout)
    assert f"with {way['quant']} (--min-quality IQ2_XXS)" in table.stdout
    spanish = _run(*rig, "--lang", "es").stdout
    assert "Lo que funcionaría sin paginar" in spanish


def test_os_headroom_and_storage_read_are_inputs() -> None:
    base = json.loads(_run(*MUST_SHOW).stdout)
    win = json.loads(_run(*MUST_SHOW, "--os", "windows").stdout)
    fast = json.loads(_run(*MUST_SHOW, "--storage-read", "6").stdout)
    lean = json.loads(_run(*MUST_SHOW, "--ram-headroom", "0.5").stdout)
    assert win["host"]["ram_headroom_gib"] > base["host"]["ram_headroom_gib"]
    assert win["decode"]["tokens_per_s"] < base["decode"]["tokens_per_s"]
    assert fast["host"]["paging"]["storage_read_gb_s"] == 6
    assert fast["decode"]["tokens_per_s"] > base["decode"]["tokens_per_s"]
    assert lean["fit"] == "offload" and lean["host"]["os_assumed"] is True


@pytest.mark.parametrize("args", [("--os", "beos"), ("--ram-headroom", "-1"),
                                  ("--storage-read", "0"), ("--gpu-memory", "0")])
def test_bad_host_options_end_with_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    done = _run(*MUST_SHOW, *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len((done.stderr + done.stdout).strip().splitlines()) == 1


def test_unified_memory_limit_is_an_input_with_a_per_os_default() -> None:
    """Strix Halo: 125 GiB for the GPU on Linux (the GTT limit raised), 96 on Windows (Variable
    Graphics Memory), and what --gpu-memory says; the answer states the share used."""
    args = ("--model", "Qwen3-235B-A22B", "--gpu", "Ryzen AI Max+ 395", "--quant", "Q3_K_M",
            "--json")
    linux, windows = (json.loads(_run(*args, "--os", o).stdout) for o in ("linux", "windows"))
    given = json.loads(_run(*args, "--gpu-memory", "110").stdout)
    assert linux["host"]["gpu_memory_gib"] == [125.0] and linux["fits"] is True
    assert windows["host"]["gpu_memory_gib"] == [96.0] and windows["fits"] is False
    assert given["host"]["gpu_memory_gib"] == [110.0]


@pytest.mark.parametrize(("cpu", "bandwidth"), [("Ryzen 7 7840HS", 120.0),
                                                 ("Ryzen 5 3500", 51.2)])
def test_common_cpus_are_known_by_name(cpu: str, bandwidth: float) -> None:
    """Issue 24: "Ryzen 7 7840HS" and "Ryzen 5 3500" were refused; now their memory sets the RAM
    bandwidth (LPDDR5X-7500 and DDR4-3200, two 64-bit channels each): twice the RAM rate,
    faster decode on the CPU alone."""
    done = _run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "32", "--cpu", cpu,
                "--quant", "Q4_K_M", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["gpu"] == f"CPU only ({cpu})" and data["fit"] == "cpu"
    given = json.loads(_run("--model", "Llama 3.1-8B", "--gpu", "none", "--ram", "32", "--cpu",
                            cpu, "--quant", "Q4_K_M", "--ram-bandwidth", str(bandwidth),
                            "--json").stdout)
    assert given["decode"]["tokens_per_s"] == data["decode"]["tokens_per_s"]


def test_input_rows_take_the_host_columns(tmp_path: Path) -> None:
    path = tmp_path / "host.csv"
    path.write_text("model,gpu,quant,ram_gib,n_cpu_moe,os,ram_headroom_gib,storage_read_gb_s\n"
                    "Qwen3-30B-A3B,GeForce GTX 1650 SUPER,Q4_K_S,16,48,windows,,\n"
                    "Qwen3-30B-A3B,GeForce GTX 1650 SUPER,Q4_K_S,16,48,,0.5,\n"
                    "Qwen3-30B-A3B,GeForce GTX 1650 SUPER,Q4_K_S,16,48,,,4\n")
    done = _run("--input", str(path), "--json")
    assert done.returncode == 0, done.stderr
    win, lean, fast = json.loads(done.stdout)
    assert win["host"]["os"] == "windows" and win["fit"] == "paging"
    assert lean["host"]["ram_headroom_gib"] == 0.5 and lean["fit"] == "offload"
    assert fast["host"]["paging"]["storage_read_gb_s"] == 4
