"""Issue 29, the last mile of the printed pages.

Every decimal in one printed table has the same number of places: a block's table of square roots lists carried values (4 places) as arguments; one that
happens to end in 0 still prints its 4 places (``\\sqrt{2.6530}``, not ``\\sqrt{2.653}``
beside ``\\sqrt{6.8838}``), as do the sums such as 1.25 (``\\sqrt{1.2500}``)."""

from __future__ import annotations

import re

import pytest

from block_util import generator
from pdf_util import pdf_text, require_latex
from worksheet.kinds import decoder_block, encoder_block
from worksheet.kinds.layer_norm import SQRT_AID

DECIMAL = re.compile(r"\d\.(\d+)")


def places_in(aid) -> set[int]:
    texts = [t for entry in aid.entries for t in entry] + [t for row in aid.grid for t in row]
    return {len(d) for t in texts for d in DECIMAL.findall(t)}


@pytest.mark.parametrize("kind", [decoder_block, encoder_block], ids=lambda k: k.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 7, 11])
def test_every_decimal_of_a_table_has_the_same_places(kind, seed):
    _, p, _ = generator(kind)(seed)
    roots = [a for a in p.aids if a.title == SQRT_AID]
    assert roots, "a hand block divides by square roots it reads from a table"
    for aid in p.aids:
        assert len(places_in(aid)) <= 1, (aid.title, aid.entries)
    assert places_in(roots[0]) == {4}


def test_a_carried_value_ending_in_0_keeps_its_places():
    """Seed 1 of decoder-block carries 2.653 (2.6530) and 1.25 into the √ table."""
    _, p, _ = generator(decoder_block)(1)
    (aid,) = [a for a in p.aids if a.title == SQRT_AID]
    args = [x for x, _ in aid.entries]
    assert r"\sqrt{2.6530}" in args and r"\sqrt{1.2500}" in args
    assert not any(re.search(r"\{\d+\.\d{1,3}\}", x) for x in args)


# -- issue 29: a one-row answer grid with no row labels has no row label column


def sheet_of(tmp_path, runner, cli, fmt: str) -> str:
    out = tmp_path / fmt
    r = runner.invoke(
        cli, ["build", "find-the-mistake", "softmax-scaling", "next-token", "--format", fmt, "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    return (out / f"worksheet.{fmt}").read_text(encoding="utf-8")


def test_latex_one_row_grids_have_no_row_label_column(tmp_path, runner, cli):
    tex = sheet_of(tmp_path, runner, cli, "tex")
    grids = re.findall(r"\\begin\{tabular\}\{(l?\|\*\{\d+\}\{p\{\\gridcell\}\|\})\}\n(.*?)\\end\{tabular\}", tex, re.S)
    assert grids
    for spec, body in grids:
        rows = [r for r in body.split("\n") if r.startswith(r"\answerbox")]
        if len(rows) == 1:  # these kinds label no single row: a. and b., softmax-scaling, next-token
            assert spec.startswith("|"), spec
            assert not re.match(r"\\answerbox\s*\d", rows[0]), rows[0]
            k = int(re.search(r"\*\{(\d+)\}", spec)[1])
            assert rows[0].count("&") == k - 1  # as many cells as columns, none for a label
            head = body.split("\n")[0]
            assert head.startswith(r"\cline{1-") or head.count("&") == k - 1, head


def test_latex_grids_with_several_rows_keep_their_labels():
    from worksheet.render.base import Table
    from worksheet.render.latex import LatexRenderer

    two = LatexRenderer().empty_grid(Table([["", ""], ["", ""]]))
    assert r"{l|*{2}" in two and r"\answerbox 1 &" in two and r"\answerbox 2 &" in two and r"\cline{2-3}" in two
    named = LatexRenderer().empty_grid(Table([["", ""]], rows=["Je"]))
    assert r"{l|*{2}" in named and r"\answerbox Je &" in named
    one = LatexRenderer().empty_grid(Table([["", ""]]))
    assert r"{|*{2}" in one and one.count("&") == 1 and r"\cline{1-2}" in one


def test_html_one_row_grids_have_no_row_label_column(tmp_path, runner, cli):
    html = sheet_of(tmp_path, runner, cli, "html")
    grids = re.findall(r'<table class="grid">(.*?)</table>', html)
    assert grids
    for g in grids:
        body = re.findall(r"<tr>(.*?)</tr>", g.split("<tbody>")[1])
        if len(body) == 1:
            assert "<th>" not in body[0], g  # no row label
            assert "<th>1</th>" not in g and "<th></th>" not in g, g  # nor a head for it or a lone "1"


# -- issue 29: find-the-mistake's corrections may break across the page, after a. and b.


def test_ruled_lines_may_break_leaving_two_on_each_side():
    from worksheet.render.latex import LatexRenderer
    from worksheet.solution.problem import Problem

    p = Problem("k", "T", {})
    breaks = {
        n: LatexRenderer.write_breaks(p.add_written(f"w{n}", title="t", answer="a", lines=n)) for n in range(1, 9)
    }
    assert breaks == {1: [], 2: [], 3: [], 4: [2], 5: [2, 3], 6: [2, 3, 4], 7: [2, 3, 4, 5], 8: [2, 3, 4, 5, 6]}
    # what a breakable step keeps with its heading: 2 lines, not all of them
    assert float(LatexRenderer.room(p.steps[5], key=False)) < float(LatexRenderer.room(p.steps[2], key=False))


def test_find_the_mistake_fills_page_1_with_a_b_and_the_start_of_c(tmp_path, runner, cli):
    require_latex()
    r = runner.invoke(cli, ["build", "find-the-mistake", "--format", "pdf,tex", "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    tex = (tmp_path / "worksheet.tex").read_text(encoding="utf-8")
    lines = tex.split(r"\stephead{c. The corrected steps}")[1].split(r"\variantmark")[0].split()[1:]
    assert lines == [r"\writeline"] * 2 + [r"\writebreak", r"\writeline"] * 3 + [r"\writeline", r"\par"]
    first, *rest = pdf_text(tmp_path / "worksheet.pdf").split("\f")
    for heading in ("a. The first wrong step", "b. The mistake", "c. The corrected steps"):
        assert heading in first, heading  # not all three on page 2 under an empty third of page 1
