"""The fast command path (cli/fast.py) answers exactly as the Typer commands do: the same
output, the same one-line errors, the same exit codes; what it does not understand it leaves
to Typer; and the options it knows are the Typer commands' own."""
from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from tpscalc.cli import fast
from tpscalc.cli.main import app

SAME = [
    ["model", "StarCoder 2 15B", "--search", "rtx 40", "--json"],
    ["model", "Llama 3.1-8B", "--context", "16384", "--max-memory", "16", "--brief"],
    ["model", "--json", "--context=8192", "Qwen3 32B", "--search", "radeon", "--all"],
    ["card", "4090", "--search", "qwen3", "--sort", "speed", "--json"],
    ["card", "RTX 3060 12 GB", "--search", "llama 3", "--lang", "es"],
    ["estimate", "--model", "starcoder2-15b", "--gpu", "M2 Max 38-core", "--json"],
    ["estimate", "--model", "Llama 3.1-8B", "--card", "4090", "--context", "65536",
     "--kv-type", "q8_0", "--no-flash-attn", "--n-prompt", "512"],
    ["estimate", "--model", "Llama 3-8B", "--gpu", "4090", "--quant", "Q4_K_M", "--gpus", "2"],
    # bad input: one line on stderr, exit 2, the same message as before
    ["model", "StarCoder 2 15B", "--min-quality", "Q9"],
    ["model", "StarCoder 2 15B", "--context", "abc"],
    ["model", "StarCoder 2 15B", "--context", ""],
    ["model", "No Such Model At All"],
    ["card", "--search", "qwen"],
    ["card", "4090", "--sort", "weird"],
    ["card", "4090", "--gpus", "99"],
    ["estimate", "--model", "Llama 3-8B"],
    ["estimate", "--model", "Llama 3-8B", "--gpu", "4090", "--quant", "Q9_Z"],
    ["estimate", "--model", "Llama 3-8B", "--gpu", "4090", "--tensor-split", "a,b"],
    ["estimate", "--model", "Llama 3-8B", "--gpu", "No Such Card 9000"],
]

TYPER_ONLY = [
    ["model", "--help"],
    ["model", "StarCoder 2 15B", "--context", "-5"],
    ["model", "StarCoder 2 15B", "--json", "--json"],
    ["model", "StarCoder 2 15B", "extra"],
    ["model", "StarCoder 2 15B", "--nope"],
    ["model", "StarCoder 2 15B", "--json=1"],
    ["model", "--", "StarCoder 2 15B"],
    ["model", "StarCoder 2 15B", "--context"],
    ["card", "4090", "--here"],
    ["estimate", "--model", "Llama 3-8B", "--card", "4090", "--gpu", "3090"],
    ["estimate", "--input", "rows.csv"],
    ["models"],
    [],
]


def _fast(argv: list[str]) -> tuple[int, bytes]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            assert fast.run(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, (out.getvalue() + err.getvalue()).encode()


def _typer(argv: list[str]) -> tuple[int, bytes]:
    res = CliRunner().invoke(app, argv, env={"COLUMNS": "200", "TERM": "dumb"})
    return res.exit_code, res.stdout_bytes + res.stderr_bytes


@pytest.mark.parametrize("argv", SAME, ids=" ".join)
def test_fast_path_answers_as_typer_does(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERM", "dumb")
    assert fast.parse(argv) is not None
    assert _fast(argv) == _typer(argv)


def test_bad_input_on_the_fast_path_is_one_line_and_exit_2() -> None:
    code, text = _fast(["model", "StarCoder 2 15B", "--min-quality", "Q9"])
    assert code == 2 and text.decode().count("\n") == 1 and text.startswith(b"error: ")


@pytest.mark.parametrize("argv", TYPER_ONLY, ids=" ".join)
def test_what_the_fast_path_does_not_know_goes_to_typer(argv: list[str]) -> None:
    assert fast.parse(argv) is None
    assert fast.run(argv) is False


def _typer_options(name: str) -> dict[str, Any]:
    """Option text → click parameter of the Typer command `name` (Typer vendors click)."""
    sub = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    out = {}
    for param in sub.params:
        for opt in [*param.opts, *param.secondary_opts]:
            out[opt] = param
    return out


@pytest.mark.parametrize("name", sorted(fast.COMMANDS))
def test_fast_options_are_the_typer_commands_own(name: str) -> None:
    spec = fast.COMMANDS[name]
    options = _typer_options(name)
    for flag in spec.flags:
        assert options[flag].param_type_name == "option" and options[flag].is_flag, flag
    for value in spec.values:
        assert options[value].param_type_name == "option" and not options[value].is_flag, value
    from tpscalc.report.request import PARAM

    for param in spec.params:
        assert PARAM[param].option in options, param
    arguments = [p for p in options.values() if p.param_type_name == "argument"]
    assert [a.name for a in arguments][:1] == ([spec.positional] if spec.positional else [])


def test_the_fast_path_imports_no_typer_pydantic_web_or_gguf() -> None:
    code = ("import sys, io, contextlib\n"
            "from tpscalc.cli.fast import run\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert run(['model', 'StarCoder 2 15B', '--json'])\n"
            "print(sorted(m for m in ('typer', 'click', 'rich', 'gguf', 'fastapi', 'jinja2')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_the_console_command_prints_everything_before_its_quick_exit(tmp_path) -> None:
    """The fast path ends with os._exit after flushing: the whole report reaches a file, exit 0;
    bad input still ends with one line and exit 2."""
    target = tmp_path / "out.json"
    with target.open("w") as fh:
        proc = subprocess.run([sys.executable, "-m", "tpscalc", "card", "4090", "--json"],
                              stdout=fh, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False)
    assert proc.returncode == 0 and proc.stderr == ""
    expected = _typer(["card", "4090", "--json"])
    assert target.read_bytes() == expected[1] and expected[0] == 0
    bad = subprocess.run([sys.executable, "-m", "tpscalc", "card", "4090", "--sort", "weird"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1


def test_the_plain_help_lists_typers_commands_and_their_help() -> None:
    import typer

    from tpscalc.cli.help_text import APP_HELP, COMMANDS
    from tpscalc.cli.typer_app import app

    group = typer.main.get_command(app)
    names = [c.name or c.callback.__name__.replace("_", "-")  # type: ignore[union-attr]
             for c in app.registered_commands]
    typer_commands = [(name, " ".join(group.commands[name].help.split("\n\n")[0].split()))
                      for name in names]  # type: ignore[attr-defined]
    assert list(COMMANDS) == typer_commands
    assert app.info.help == APP_HELP


def test_help_answers_without_typer() -> None:
    import subprocess
    import sys

    code = ("import sys; sys.argv = ['tpscalc', '--help']\n"
            "import os; os._exit = lambda n: (print(sorted(m for m in ('typer', 'click', 'rich')"
            " if m in sys.modules)), sys.exit(n))\n"
            "from tpscalc.cli.main import main; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "Usage: tpscalc" in done.stdout and "export-site" in done.stdout
    assert done.stdout.rstrip().endswith("[]")
