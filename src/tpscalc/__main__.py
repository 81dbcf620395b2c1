"""`python -m tpscalc`: the command-line interface."""
from __future__ import annotations

from tpscalc.cli import main

main()
