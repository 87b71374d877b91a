"""Read compiled PDFs in tests: LaTeX and poppler's pdfinfo and pdftotext skip the
test when missing, unless WORKSHEET_REQUIRE_LATEX=1 (as .ci/run sets), in which
case they fail it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from latex_util import REQUIRE
from worksheet.render import pdf as pdfmod


def require_latex():
    if pdfmod.engine() is None:
        if REQUIRE:
            pytest.fail("LaTeX (latexmk/pdflatex) is missing but WORKSHEET_REQUIRE_LATEX=1")
        pytest.skip("LaTeX is not installed")


def require_poppler(tool: str) -> str:
    exe = shutil.which(tool)
    if exe is None:
        if REQUIRE:
            pytest.fail(f"{tool} (poppler-utils) is missing but WORKSHEET_REQUIRE_LATEX=1")
        pytest.skip(f"{tool} is not installed")
    return exe


def page_count(path: Path) -> int:
    """The page count pdfinfo reports."""
    out = subprocess.run([require_poppler("pdfinfo"), str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def pdf_text(path: Path) -> str:
    """The PDF's text as laid out (pdftotext -layout)."""
    return subprocess.run(
        [require_poppler("pdftotext"), "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def pdf_lines(path: Path) -> list[str]:
    """The PDF's text lines, as laid out (pdftotext -layout), stripped, non-empty."""
    return [line.strip() for line in pdf_text(path).splitlines() if line.strip()]
