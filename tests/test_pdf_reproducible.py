"""Issue 10, point 8: the same command and seed give a byte-identical PDF
(fixed /CreationDate, /ModDate and trailer /ID: SOURCE_DATE_EPOCH and
FORCE_SOURCE_DATE=1 in the environment of LaTeX, see pdf.latex_env).
Point 9: ``worksheet solve --format pdf`` writes a PDF only to a file, never
binary to stdout, and its help says so."""

from __future__ import annotations

import re

from test_pdf import require_latex

from worksheet.build import build_document
from worksheet.render import get
from worksheet.render import pdf as pdfmod


def build_pdf(runner, cli, folder, *args):
    res = runner.invoke(cli, ["build", "attention", "--seed", "5", "--format", "pdf", "-o", str(folder), *args])
    assert res.exit_code == 0, res.output
    return (folder / "worksheet.pdf").read_bytes(), (folder / "worksheet-key.pdf").read_bytes()


def test_same_command_and_seed_give_byte_identical_pdfs(runner, cli, tmp_path, monkeypatch):
    require_latex()
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first = build_pdf(runner, cli, tmp_path / "a")
    second = build_pdf(runner, cli, tmp_path / "b")
    assert first == second


def test_variants_pdf_is_byte_identical_too(runner, cli, tmp_path, monkeypatch):
    require_latex()
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert build_pdf(runner, cli, tmp_path / "a", "--variants", "2") == build_pdf(
        runner, cli, tmp_path / "b", "--variants", "2"
    )


def test_pdf_dates_are_fixed_not_the_time_of_the_build(monkeypatch):
    require_latex()
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    pdf = pdfmod.compile_tex(get("tex").render(build_document(["softmax-scaling"]), key=False)).pdf
    assert re.search(rb"/CreationDate \(D:19700101000000Z\)", pdf)
    ids = re.search(rb"/ID \[<([0-9A-F]+)> <([0-9A-F]+)>\]", pdf)
    assert ids is not None


def test_a_caller_given_source_date_epoch_is_used(monkeypatch):
    require_latex()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1772582400")  # 2026-03-04 00:00 UTC
    pdf = pdfmod.compile_tex("\\documentclass{article}\\begin{document}x\\end{document}\n").pdf
    assert b"/CreationDate (D:20260304000000Z)" in pdf


def test_a_source_date_epoch_that_is_not_a_number_falls_back_to_zero(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    assert pdfmod.latex_env()["SOURCE_DATE_EPOCH"] == "0"
    assert pdfmod.latex_env()["FORCE_SOURCE_DATE"] == "1"


# ---------------------------------------------------------------- solve --format pdf (point 9)


def test_solve_refuses_to_write_pdf_to_stdout(runner, cli):
    from common import one_line_error

    res = runner.invoke(cli, ["solve", "--example", "scaling", "--format", "pdf"])
    line = one_line_error(res)
    assert "-o FILE.pdf" in line
    assert res.stdout_bytes == b""


def test_solve_writes_a_pdf_to_a_file(runner, cli, tmp_path):
    require_latex()
    out = tmp_path / "s.pdf"
    res = runner.invoke(cli, ["solve", "--example", "scaling", "--format", "pdf", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes().startswith(b"%PDF")


def test_solve_help_lists_the_formats_it_writes(runner, cli):
    res = runner.invoke(cli, ["solve", "--help"])
    helptext = " ".join(res.output.split())
    assert "md, tex, json, html or pdf (pdf only to a file: -o FILE.pdf)" in helptext


def test_solve_writes_html_to_stdout_as_its_help_says(runner, cli):
    res = runner.invoke(cli, ["solve", "--example", "scaling", "--format", "html"])
    assert res.exit_code == 0 and res.stdout.lstrip().lower().startswith("<!doctype html")
