"""--format pdf: LaTeX compiled in a temporary folder, only finished PDFs
written; clear errors when LaTeX fails or is missing; pages that fit.

Tests that need LaTeX skip when it is missing, and fail instead under
WORKSHEET_REQUIRE_LATEX=1 (as .ci/run sets)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from worksheet import kinds
from worksheet.build import build_document
from worksheet.render import get
from worksheet.render import pdf as pdfmod

# (test_injection, test_spec, test_variants and test_pdf_reproducible import these from here)
from pdf_util import page_count, pdf_text, require_latex, require_poppler  # noqa: F401

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def test_build_pdf_writes_only_the_finished_pdfs(runner, cli, tmp_path):
    require_latex()
    res = runner.invoke(cli, ["build", "--format", "pdf", "-o", str(tmp_path), "--seed", "3"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["worksheet-key.pdf", "worksheet.pdf"]
    for name in ("worksheet.pdf", "worksheet-key.pdf"):
        assert (tmp_path / name).read_bytes().startswith(b"%PDF")
    sheet = pdf_text(tmp_path / "worksheet.pdf")
    assert "Name:" in sheet and "Student ID:" in sheet
    assert "answer key" in pdf_text(tmp_path / "worksheet-key.pdf")


@pytest.mark.parametrize("key", [False, True], ids=["sheet", "key"])
def test_every_kind_at_default_size_fits_the_page(key):
    """No Overfull \\hbox wider than 10pt, for every kind at its default size."""
    require_latex()
    names = kinds.names()
    doc = build_document(names, seed=1)
    result = pdfmod.compile_tex(get("tex").render(doc, key=key), "all-kinds.tex")
    assert result.pdf.startswith(b"%PDF")
    assert all(w <= 10 for w in result.overfull), (names, result.overfull)


def test_wide_calculator_sizes_still_fit_the_page():
    require_latex()
    doc = build_document(["attention"], seed=2, options={"numbers": "calculator", "seq_len": 8, "d_model": 8, "d_k": 8})
    for key in (False, True):
        result = pdfmod.compile_tex(get("tex").render(doc, key=key), "wide.tex")
        assert all(w <= 10 for w in result.overfull), result.overfull


@pytest.mark.parametrize("paper, width", [("a4", 595), ("letter", 612)])
def test_paper_size_is_the_one_asked_for(runner, cli, tmp_path, paper, width):
    require_latex()
    res = runner.invoke(cli, ["build", "--format", "pdf", "--paper", paper, "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    exe = require_poppler("pdfinfo")
    info = subprocess.run([exe, str(tmp_path / "worksheet.pdf")], capture_output=True, text=True).stdout
    assert re.search(rf"Page size:\s+{width}(\.\d+)? x", info), info


def test_header_names_title_course_date_and_variant(tmp_path):
    require_latex()
    from worksheet.build import build_variants, write_documents

    docs = build_variants(["attention"], 2, seed=4, title="Midterm", course="CS 480", date="2026-03-04")
    write_documents(docs, ["pdf"], tmp_path)
    text = pdf_text(tmp_path / "worksheet.pdf")
    for word in ("Midterm", "CS 480", "2026-03-04", "Variant v01", "Variant v02", "Name:"):
        assert word in text


def test_latex_error_gives_the_first_error_line_and_keeps_the_log(runner, cli, tmp_path):
    require_latex()
    mine = tmp_path / "mytemplates"
    shutil.copytree(TEMPLATES, mine)
    doc = mine / "tex" / "document.tex.j2"
    doc.write_text(doc.read_text().replace(r"\begin{document}", "\\begin{document}\n\\nosuchmacro"))
    out = tmp_path / "out"
    res = runner.invoke(cli, ["build", "--format", "pdf", "--templates", str(mine), "-o", str(out)])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: LaTeX failed on worksheet")
    assert "! Undefined control sequence." in lines[0]
    log = re.search(r"log kept in (\S+\.log)", lines[0]).group(1)
    assert Path(log).exists() and "nosuchmacro" in Path(log).read_text()
    assert not list(out.glob("*.pdf"))
    assert "Traceback" not in res.output


def test_without_latex_the_tex_is_written_and_the_packages_named(runner, cli, tmp_path, monkeypatch):
    monkeypatch.setattr(pdfmod.shutil, "which", lambda name: None)
    res = runner.invoke(cli, ["build", "--format", "pdf,md", "-o", str(tmp_path)])
    assert res.exit_code == 2
    assert "texlive-latex-base" in res.output and "latexmk" in res.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["worksheet-key.md", "worksheet-key.tex", "worksheet.md", "worksheet.tex"]


def test_pdflatex_alone_is_enough(monkeypatch):
    require_latex()
    if shutil.which("pdflatex") is None:
        pytest.skip("only latexmk here")
    monkeypatch.setattr(pdfmod, "engine", lambda: ("pdflatex", shutil.which("pdflatex")))
    result = pdfmod.compile_tex(get("tex").render(build_document(["attention"]), key=True), "k.tex")
    assert result.pdf.startswith(b"%PDF") and result.pages == {1: (1, result.pages[1][1])}


def test_latex_runs_without_shell_escape(tmp_path):
    require_latex()
    marker = tmp_path / "pwned"
    source = (
        "\\documentclass{article}\\begin{document}\\immediate\\write18{touch " + str(marker) + "}x\\end{document}\n"
    )
    pdfmod.compile_tex(source, "escape.tex")
    assert not marker.exists()


def test_first_error_names_the_line():
    log = "junk\n! Undefined control sequence.\n<argument> x\nl.42 \\nosuch\n"
    assert pdfmod.first_error(log) == "! Undefined control sequence. (l.42)"


def test_pages_of_variants_are_read_from_the_marks_latex_writes():
    aux = (
        "\\variantpage{1}{first}{1}\n\\variantpage{1}{last}{3}\n\\variantpage{2}{first}{4}\n\\variantpage{2}{last}{6}\n"
    )
    assert pdfmod.read_pages(aux) == {1: (1, 3), 2: (4, 6)}


def test_existing_files_with_other_content_are_refused_before_latex_runs(runner, cli, tmp_path, monkeypatch):
    (tmp_path / "worksheet.tex").write_text("old")
    (tmp_path / "worksheet.pdf").write_bytes(b"old")
    monkeypatch.setattr(pdfmod, "compile_all", lambda *a, **k: pytest.fail("LaTeX ran"))
    res = runner.invoke(cli, ["build", "--format", "tex,pdf", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "worksheet.tex already exists with other content" in res.output
    assert (tmp_path / "worksheet.pdf").read_bytes() == b"old"
