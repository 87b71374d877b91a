"""A key's last page never holds only the tail of its last step (issue 29 §5: no page
break inside one entry's derivation): the document's last table of decimals stays with
the matrix above it, so the multi-head key's page 6 is not just O's decimals and a note."""

from __future__ import annotations

from worksheet.build import build_document, render_document

from pdf_util import page_count, pdf_text, require_latex


def test_the_last_table_of_decimals_is_kept_with_its_matrix():
    tex = render_document(build_document(["multi-head-attention"], seed=1), ["tex"])["worksheet-key.tex"]
    last = tex.rindex(r"\captioned{")
    assert tex[:last].rstrip().endswith(r"\par\nobreak\vskip-\parskip")  # no \workbreak before it
    assert tex.count(r"\par\nobreak\vskip-\parskip" + "\n" + r"\captioned{") == 1  # only the last one


def test_the_multi_head_keys_last_page_starts_with_the_output_matrix(tmp_path, runner, cli):
    require_latex()
    r = runner.invoke(cli, ["build", "multi-head-attention", "--seed", "1", "--format", "pdf", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    key = tmp_path / "worksheet-key.pdf"
    pages = pdf_text(key).split("\f")
    last = pages[page_count(key) - 1]
    assert "O =" in last or "O=" in last, last[:400]
