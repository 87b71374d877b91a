"""The tables page: an exam's variants print their standard grid tables once, at the
front, in every format that prints a sheet; one sheet prints them at its end; a
problem that reads one says where it is.  (docs/tables.md)"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from worksheet.build import build_document, build_variants, render_documents
from pdf_util import require_latex
from worksheet.cli import main

GRID = r"Values of $\tanh x$ for $x = 0.00, 0.01"


def _files(docs, fmt):
    out = render_documents(docs, [fmt], name="t", compile_pdf=False)
    return out.files["t.tex" if fmt == "pdf" else f"t.{fmt}"], out.files[f"t-key.{'tex' if fmt == 'pdf' else fmt}"]


@pytest.mark.parametrize("fmt", ["md", "tex", "html"])
def test_an_exams_variants_print_the_grid_tables_once_at_the_front(fmt):
    docs = build_variants(["lstm-cell", "gru-cell:steps=2"], 3, seed=5)
    for text in _files(docs, fmt):
        row = {"tex": "0.0 & {} & ", "html": "<th>0.0</th><td>{}</td>", "md": "| 0.0 | {} |"}[fmt]
        assert text.count(row.format("0.0000")) == 1 and text.count(row.format("0.5000")) == 1  # tanh, sigma: once
        first_variant = min(text.find(m) for m in ("v01", "Variant v01") if text.find(m) >= 0)
        assert text.find("Tables") < first_variant  # the tables page comes first
        assert text.count("on the tables page") == 3 * 3  # lstm: tanh; gru (2 steps): sigma and tanh; 3 variants


def test_one_sheet_prints_its_grid_tables_at_its_end_and_short_tables_with_the_problem():
    doc = build_document(["attention", "lstm-cell"], seed=2)
    sheet, _ = _files([doc], "md")
    assert sheet.index("## Tables") > sheet.index("Problem 2")
    assert sheet.count("| 0.0 | 0.0000 |") == 1  # the tanh table, once
    exp_line = next(line for line in sheet.splitlines() if line.startswith("Values of $e^x$"))
    assert sheet.index(exp_line) < sheet.index("Problem 2")  # the short e^x table stays with attention


def test_a_built_exam_pdf_has_its_tables_page_first(tmp_path):
    require_latex()
    result = CliRunner().invoke(
        main, ["build", "lstm-cell", "--variants", "2", "--seed", "3", "--format", "md,pdf", "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    csv = (tmp_path / "worksheet-variants.csv").read_text(encoding="utf-8")
    assert re.search(r"^v01,\d+,2[,-]", csv, re.M)  # variant 1 starts after the tables page


@pytest.mark.parametrize("fmt", ["md", "tex", "html", "text"])
def test_the_tables_page_is_rendered_once_and_as_the_template_renders_it(fmt):
    """tables_page renders tables.<ext>.j2 once for the same standard tables: a second
    sheet with the same tables gets the very same text, which is what rendering the
    template itself gives; a value a template passes that cannot be a key still renders."""
    from worksheet.render import get
    from worksheet.solution.document import standard_tables

    r = get(fmt)
    a, b = (standard_tables([build_document(["lstm-cell"], seed=s)]) for s in (1, 2))
    assert a and all(x is y for x, y in zip(a, b))  # the same table objects on every sheet
    names = {"compact": False} if fmt == "tex" else {}
    first = r.tables_page(a, **names)
    assert r.tables_page(b, **names) is first
    assert str(first) == r._load(f"tables.{r.ext}.j2").render(tables=a, **names)
    assert "tanh" in str(first)
    assert str(r.tables_page(a, **names, extra=["not", "hashable"])) == str(first)
