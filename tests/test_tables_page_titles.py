"""The tables page of an exam: a table's title stands on the page of its table, never
alone at a page's foot (an exam with an LSTM cell and additive alignment printed the
title of e^{-x} at the foot of page 1 and its table on page 2).  A table flows from page
to page (longtable) with its title in its first head, which longtable keeps with the
first row."""

from __future__ import annotations

from pdf_util import pdf_text, require_latex

SPEC = """title = "Recurrent quiz"
numbers = "hand"
name = "rec"
[[sections]]
kind = "lstm-cell"
[[sections]]
kind = "alignment"
score = "additive"
"""


def test_a_tables_title_is_on_the_page_of_its_table(tmp_path, runner, cli):
    require_latex()
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC, encoding="utf-8")
    r = runner.invoke(
        cli, ["build", "--spec", str(spec), "--variants", "2", "--format", "pdf,tex", "-o", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    tex = (tmp_path / "rec.tex").read_text(encoding="utf-8")
    assert tex.count(r"\begin{longtable}") == 2
    assert tex.count(r"\endfirsthead") == 2 and tex.count(r"{\normalsize\raggedright Values of") == 2  # titles in heads
    pages = pdf_text(tmp_path / "rec.pdf").split("\f")
    for title, first_value in (("tanh x", "0.0100"), ("e−x", "0.9900")):  # tanh 0.01, e^{-0.01}
        (page,) = [p for p in pages if f"Values of {title} for" in p]  # the tables page, not a sheet
        assert first_value in page.split(f"Values of {title} for")[1], (title, page[:300])
