"""``--compact`` study sheets (issue 19 §6): a study sheet of two small kinds
fits on one page (sheet and key), in two columns with smaller type and
matrices, and every worked line of the key is kept."""

from __future__ import annotations

import re

import pytest

from common import one_line_error
from pdf_util import page_count, require_latex

PAIR = ["self-attention-basic", "next-token"]


def _displays(tex: str) -> list[str]:
    """The worked lines and matrices a key prints (its displayed maths), in order."""
    body = tex[tex.index(r"\begin{document}") :]
    return re.findall(r"^\\\[ (.*) \\\]$", body, re.M)


def test_two_small_kinds_fit_one_page_with_compact(tmp_path, runner, cli):
    require_latex()
    r = runner.invoke(cli, ["build", *PAIR, "--compact", "--format", "pdf", "-o", str(tmp_path / "c")])
    assert r.exit_code == 0, r.output
    assert page_count(tmp_path / "c" / "worksheet.pdf") == 1
    assert page_count(tmp_path / "c" / "worksheet-key.pdf") == 1
    r = runner.invoke(cli, ["build", *PAIR, "--format", "pdf", "-o", str(tmp_path / "n")])
    assert r.exit_code == 0, r.output
    assert page_count(tmp_path / "n" / "worksheet-key.pdf") > 1  # what --compact saves


def test_the_compact_key_of_two_small_kinds_has_room_to_spare(tmp_path, runner, cli):
    """One page with 1.5 cm to spare: the test above does not break on the next line
    a kind adds (the conventions and the rounding line are set in the body's size)."""
    import shutil
    import subprocess

    require_latex()
    r = runner.invoke(cli, ["build", *PAIR, "--compact", "--format", "tex", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    tex = (tmp_path / "worksheet-key.tex").read_text(encoding="utf-8")
    assert r"\renewcommand{\frontsize}{\footnotesize}" in tex and r"{\frontsize\textbf{Conventions.}" in tex
    last = "\n" + r"\variantmark{1}{last}"
    assert tex.count(last) == 1
    (tmp_path / "more.tex").write_text(tex.replace(last, "\n" + r"\vspace*{1.5cm}" + last), encoding="utf-8")
    subprocess.run(
        [shutil.which("pdflatex"), "-interaction=nonstopmode", "more.tex"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert page_count(tmp_path / "more.pdf") == 1


def test_compact_keeps_every_worked_line_and_sets_two_columns_of_smaller_type(tmp_path, runner, cli):
    for flag, folder in (("--compact", "c"), ("--no-compact", "n")):
        r = runner.invoke(cli, ["build", *PAIR, flag, "--format", "tex", "-o", str(tmp_path / folder)])
        assert r.exit_code == 0, r.output
    compact = (tmp_path / "c" / "worksheet-key.tex").read_text(encoding="utf-8")
    normal = (tmp_path / "n" / "worksheet-key.tex").read_text(encoding="utf-8")
    assert _displays(compact) == _displays(normal) and len(_displays(compact)) > 20
    assert r"\documentclass[10pt,a4paper,twocolumn]{article}" in compact
    assert r"\documentclass[11pt,a4paper]{article}" in normal and "twocolumn" not in normal
    # smaller matrices: rows of fractions no taller than they need, a small gap between them
    assert r"\renewcommand{\fracrows}{\renewcommand{\arraystretch}{1.15}\setlength{\extrarowheight}{3pt}}" in compact
    assert r"\footnotesize" in compact
    sheet = (tmp_path / "c" / "worksheet.tex").read_text(encoding="utf-8")
    assert r"\ifdim\gridcell>1.4cm" in sheet  # smaller answer cells
    assert r"\begin{minipage}[t]" not in sheet.split(r"\begin{document}")[1]  # no heading beside a grid


def test_a_spec_can_ask_for_compact_and_says_what_is_wrong(tmp_path, runner, cli):
    spec = tmp_path / "study.toml"
    spec.write_text('compact = true\n[[sections]]\nkind = "feed-forward"\n', encoding="utf-8")
    r = runner.invoke(cli, ["build", "--spec", str(spec), "--format", "tex", "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "twocolumn" in (tmp_path / "o" / "worksheet-key.tex").read_text(encoding="utf-8")
    r = runner.invoke(cli, ["build", "--spec", str(spec), "--no-compact", "--format", "tex", "-o", str(tmp_path / "p")])
    assert "twocolumn" not in (tmp_path / "p" / "worksheet-key.tex").read_text(encoding="utf-8")
    spec.write_text('compact = "yes"\n[[sections]]\nkind = "feed-forward"\n', encoding="utf-8")
    line = one_line_error(runner.invoke(cli, ["build", "--spec", str(spec), "-o", str(tmp_path / "q")]))
    assert "compact: must be true or false" in line and "line 1" in line


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_compact_changes_only_tex_and_pdf(tmp_path, runner, cli, fmt):
    outs = []
    for flag in ("--compact", "--no-compact"):
        folder = tmp_path / flag.strip("-")
        assert runner.invoke(cli, ["build", *PAIR, flag, "--format", fmt, "-o", str(folder)]).exit_code == 0
        outs.append(sorted((p.name, p.read_bytes()) for p in folder.iterdir()))
    assert outs[0] == outs[1]
