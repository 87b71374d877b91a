"""Compile LaTeX in tests: skip when pdflatex is missing, unless
WORKSHEET_REQUIRE_LATEX=1 (as .ci/run sets), in which case fail."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REQUIRE = os.environ.get("WORKSHEET_REQUIRE_LATEX") == "1"


def require_pdflatex() -> str:
    exe = shutil.which("pdflatex")
    if exe is None:
        if REQUIRE:
            pytest.fail("pdflatex is missing but WORKSHEET_REQUIRE_LATEX=1")
        pytest.skip("pdflatex is not installed")
    return exe


def compile_tex(path: Path | str) -> str:
    """Compile ``path`` in its folder; return the log; fail on any LaTeX error."""
    exe = require_pdflatex()
    path = Path(path)
    proc = subprocess.run(
        [exe, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", path.name],
        cwd=path.parent,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
    )
    log = path.with_suffix(".log").read_text(errors="replace") if path.with_suffix(".log").exists() else proc.stdout
    if proc.returncode != 0:
        first = next((line for line in log.splitlines() if line.startswith("!")), "unknown error")
        pytest.fail(f"{path.name} does not compile: {first}")
    return log


def overfull_points(log: str) -> list[float]:
    """Widths of every ``Overfull \\hbox (Npt too wide)`` in a LaTeX log."""
    return [float(x) for x in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)]
