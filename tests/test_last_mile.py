"""Issue 29, the last mile of the printed pages.

Every decimal in one printed table has the same number of places: a list's
arguments and values; a grid table's values (4 places), its column heads and
its row heads.  A carried value that happens to end in 0 still prints its 4
places where a worked line reads it (``\\sqrt{1.2500 + 0}``, not ``\\sqrt{1.25 + 0}``
beside ``\\sqrt{6.8853 + 0}``)."""

from __future__ import annotations

import re

import pytest

from block_util import generator
from pdf_util import pdf_text, require_latex
from worksheet.kinds import chain, decoder_block, encoder_block, multi_head_attention
from worksheet.steps.standard_tables import SQRT_TOP, grid_aid, sqrt_aids

DECIMAL = re.compile(r"\d\.(\d+)")


def places_of(texts) -> set[int]:
    return {len(d) for t in texts for d in DECIMAL.findall(t)}


def places_in(aid) -> set[int]:
    return places_of([t for entry in aid.entries for t in entry])


@pytest.mark.parametrize("kind", [decoder_block, encoder_block], ids=lambda k: k.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 7, 11])
def test_every_decimal_of_a_table_has_the_same_places(kind, seed):
    _, p, _ = generator(kind)(seed)
    roots = [a for a in p.aids if a.grid and r"\sqrt{x}" in a.title]
    assert len(roots) == 2, "a hand block reads its square roots on the two standard tables"
    for aid in p.aids:
        if not aid.grid:
            assert len(places_in(aid)) <= 1, (aid.title, aid.entries)
            continue
        heads, *rows = aid.grid
        assert len(places_of(heads[1:])) == 1, (aid.title, heads)
        assert len(places_of(row[0] for row in rows)) <= 1, aid.title  # 0.0 ... 9.9, or 10 ... 99
        assert places_of(x for row in rows for x in row[1:]) == {4}, aid.title


def test_a_carried_value_ending_in_0_keeps_its_places():
    """Seed 1 of decoder-block carries 1.25 (1.2500) into a square root."""
    _, p, _ = generator(decoder_block)(1)
    lines = [w for s in p.steps if s.name.endswith("normalized") for w in map(str, s.work) if r"\sqrt" in w]
    assert any(r"\sqrt{1.2500 + 0}" in w for w in lines), lines
    assert not any(re.search(r"\\sqrt\{\d+\.\d{1,3} \+", w) for w in lines), lines


# -- issue 29: the blocks read the same standard tables in every variant


def standard_grids():
    return [grid_aid("exp", multi_head_attention.EXP_GRID), *sqrt_aids(SQRT_TOP)]


@pytest.mark.parametrize(
    ("kind", "seed"),
    # 101, 356, 548: draws whose chain first read past the tables (a variance of 100.2; the
    # decoder's second or third layer norm from 10 on), drawn again now
    [(encoder_block, 1), (encoder_block, 101), (decoder_block, 1), (decoder_block, 356), (decoder_block, 548)],
)
def test_a_hand_block_reads_the_same_standard_tables_for_every_seed(kind, seed):
    """The tables' ranges are the kind's, not the variant's: √x below 10 and from 10 to 99.9,
    and (the decoder's cross-attention of carried scores) e^{-x} up to 4.00; a draw whose
    chain would read past them is drawn again."""
    _, p, _ = generator(kind)(seed)
    grids = [a for a in p.aids if a.grid]
    want = standard_grids() if kind is decoder_block else list(sqrt_aids(SQRT_TOP))
    assert sorted(grids, key=lambda a: a.title) == sorted(want, key=lambda a: a.title)


def test_a_file_that_reads_further_gets_one_longer_table(monkeypatch):
    """Solved from a file (no redraw), decoder-block seed 548's numbers read √ of more than
    100 in a later layer norm: the block prints one longer table from 10 on, not a second."""
    monkeypatch.setattr(chain, "reads_standard_tables", lambda p: True)  # the draw as it was
    _, p, _ = generator(decoder_block)(548)
    roots = [a for a in p.aids if a.grid and r"\sqrt{x}" in a.title]
    assert [a.title.split(" for ")[0] for a in roots] == [
        r"Values of $\sqrt{x}$ below 10",
        r"Values of $\sqrt{x}$ from 10 on",
    ]
    assert len(roots[1].grid) > len(sqrt_aids(SQRT_TOP)[1].grid)


# -- issue 29: a one-row answer grid with no row labels has no row label column


def sheet_of(tmp_path, runner, cli, fmt: str) -> str:
    out = tmp_path / fmt
    r = runner.invoke(
        cli, ["build", "find-the-mistake", "softmax-scaling", "next-token", "--format", fmt, "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    return (out / f"worksheet.{fmt}").read_text(encoding="utf-8")


def test_a_softmax_read_on_the_grid_says_approx_and_keeps_the_exact_exponent():
    """Issue 29 item 3 on the standard grid: the sum of e^x read at rounded exponents
    (e^{-1.12} for e^{-1.1181}) is ≈, never =; a weight's first fraction has the
    exact exponent, the one the exact value after its '=' has."""
    from worksheet.build import build_document

    p = build_document(["decoder-block"], seed=1).problems[0]
    lines = [str(w) for s in p.steps if s.name == "cross.weights_1" for w in s.work]
    assert r"\approx e^{-1.12} + e^0 + e^{-3.7} \approx 0.3263 + 1 + 0.0247 = 1.3510" in lines[1], lines[1]
    assert r"= \frac{e^{-1.1181}}{\sum_k" in lines[2] and r"= \frac{e^{-1.1181}}{1 + e^{-1.1181}" in lines[2], lines[2]
    checked = 0
    for seed in range(1, 6):  # every weight: the first fraction's numerator is the exact one that follows
        q = build_document(["decoder-block"], seed=seed).problems[0]
        for w in (str(w) for s in q.steps if ".weights" in s.name for w in s.work):
            parts = w.split(r" = \frac{")
            if len(parts) < 3 or r"}{\sum_k" not in parts[1]:
                continue
            first, second = parts[1].split(r"}{\sum_k")[0], parts[2].split("}{")[0]
            if first != "e^0" and "frac" not in first:  # (e^0 = 1 is written 1 after the =; decimals only)
                assert first == second, w
                checked += 1
    assert checked > 5


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
