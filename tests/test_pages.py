"""Printed pages: how much paper a sheet takes, that every size compiles,
written steps, and the typography of titles, aids and points.

Tests that need LaTeX skip when it is missing, and fail instead under
WORKSHEET_REQUIRE_LATEX=1 (as .ci/run sets); the same for poppler's
pdfinfo and pdftotext."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from worksheet import kinds
from worksheet.build import build_document
from worksheet.solution.document import Document
from worksheet.solution.problem import Problem, matrix
from worksheet.render import get
from worksheet.render import pdf as pdfmod
from worksheet.render.base import BLOCK, MAX_COLS, Table, col_blocks

from pdf_util import page_count, pdf_lines, pdf_text, require_latex

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# issue 9, point 8: student sheets at default sizes, hand mode
PAGE_TARGETS = {
    "softmax-scaling": 1,
    "self-attention-basic": 1,
    "positional-encoding": 1,
    "layer-norm": 1,
    "feed-forward": 1,
    "next-token": 1,
    "alignment": 1,
    "attention": 2,
    "cross-attention": 2,
    "multi-head-attention": 3,
}
MIDTERM_PAGES = 8  # per student


def compile_to(tmp_path: Path, source: str, name: str) -> tuple[Path, pdfmod.Compiled]:
    result = pdfmod.compile_tex(source, f"{name}.tex")
    path = tmp_path / f"{name}.pdf"
    path.write_bytes(result.pdf)
    return path, result


# -- point 8: paper -----------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(PAGE_TARGETS))
def test_student_sheet_at_default_size_fits_its_page_target(tmp_path, kind):
    """Seeds 1-3 of one kind in one file: each document starts on a new page
    and records its first and last page (\\variantmark), and pdfinfo's total
    must be their sum."""
    require_latex()
    docs = [build_document([kind], seed=seed) for seed in (1, 2, 3)]
    path, result = compile_to(tmp_path, get("tex").render_many(docs, key=False), kind)
    counts = {i: last - first + 1 for i, (first, last) in result.pages.items()}
    assert sorted(counts) == [1, 2, 3]
    assert page_count(path) == sum(counts.values())
    assert all(n <= PAGE_TARGETS[kind] for n in counts.values()), (kind, counts)


def test_midterm_is_at_most_eight_pages_per_student(runner, cli, tmp_path):
    require_latex()
    res = runner.invoke(
        cli, ["build", "--spec", str(EXAMPLES / "midterm.toml"), "--format", "pdf", "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    with open(tmp_path / "midterm-variants.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    spans = [tuple(map(int, r["pages"].split("-"))) for r in rows]
    assert page_count(tmp_path / "midterm.pdf") == spans[-1][1]
    assert all(last - first + 1 <= MIDTERM_PAGES for first, last in spans), spans


def test_the_midterm_page_target_is_met_with_four_wide_heads():
    """The midterm's multi-head problem has a per-head d_k of 4 (issue 9 §7), so
    test_midterm_is_at_most_eight_pages_per_student measures that case."""
    from worksheet.build.spec import load_spec

    mha = [s for s in load_spec(EXAMPLES / "midterm.toml").sections if s.kind == "multi-head-attention"]
    assert mha and all(s.params.get("d_k") == 4 for s in mha)


def test_a_lone_step_has_its_heading_beside_its_grid_and_paired_steps_above():
    """Attention's Q grid leaves room for its heading at its left; layer
    norm's mean and variance (one column each) stand side by side."""
    tex = get("tex").render(build_document(["attention", "layer-norm"], seed=1), key=False)
    body = tex.split(r"\begin{document}")[1]
    assert re.search(r"\\stepside\{1\. Queries\}\{Q\}", body)
    assert re.search(r"\\begin\{minipage\}\[b\][^\n]*\n\\stephead\{2\. Mean", body)


def test_answer_grid_prints_column_labels_but_no_plain_column_numbers():
    r = get("tex")
    plain = r.empty_grid(Table([["", ""]], ("a",), None))
    labelled = r.empty_grid(Table([["", ""]], ("a",), ("x", "y")))
    assert "& 1 & 2" not in plain and r"\cline{2-3}" in plain
    assert "& x & y" in labelled


def test_no_sheet_page_ends_with_a_step_heading(tmp_path):
    """A step's heading and its grid are one box on the sheet: the last line
    of a page is never a heading "N. Title (name)" whose grid went over."""
    require_latex()
    doc = build_document(["attention", "multi-head-attention", "encoder-block"], seed=2)
    path, _ = compile_to(tmp_path, get("tex").render(doc, key=False), "heads")
    heading = re.compile(r"^\d+\. .*\([\w.]+\)")
    pages = pdf_text(path).split("\f")
    for n, page in enumerate(pages, 1):
        lines = [x.strip() for x in page.splitlines() if x.strip() and not x.strip().startswith("page")]
        if lines:
            assert not heading.match(lines[-1]), (n, lines[-1])


@pytest.mark.parametrize(
    "kinds_, options",
    [
        (["encoder-block"], {}),
        (["multi-head-attention"], {"d_k": 4}),
        (["attention", "cross-attention"], {}),
    ],
    ids=["encoder-block", "mha-d_k-4", "attention+cross"],
)
def test_no_sheet_page_holds_a_lone_grid(tmp_path, kinds_, options):
    """Every page of a sheet holds a problem's heading or at least two
    steps (a step's "(name)" follows its title), seeds 1-3.  The tables at the
    front of the variants (the blocks' square roots) are pages of no sheet."""
    require_latex()
    docs = [build_document(kinds_, seed=seed, options=options) for seed in (1, 2, 3)]
    path, result = compile_to(tmp_path, get("tex").render_many(docs, key=False), "lone")
    pages = pdf_text(path).split("\f")
    names = {s.name for d in docs for p in d.problems for s in p.steps}
    sheets = {n for first, last in result.pages.values() for n in range(first, last + 1)}
    for n, page in enumerate(pages[: page_count(path)], 1):
        if n not in sheets:
            assert "Values of" in page[:200] and "Problem" not in page, (n, page[:80])  # the front tables
            continue
        steps = sum(page.count(f"({name})") for name in names)
        assert "Problem" in page or steps >= 2, (n, steps)


# -- point 1: every size compiles ---------------------------------------------


@pytest.mark.parametrize("numbers", ["hand", "calculator"])
@pytest.mark.parametrize("key", [False, True], ids=["sheet", "key"])
def test_every_kind_compiles_in_both_number_modes_for_seeds_1_to_5(numbers, key):
    """Every kind on one sheet, seeds 1-5 as five documents of one file."""
    require_latex()
    docs = [build_document(kinds.names(), seed=seed, options={"numbers": numbers}) for seed in range(1, 6)]
    result = pdfmod.compile_tex(get("tex").render_many(docs, key=key), "every-kind.tex")
    assert result.pdf.startswith(b"%PDF")
    assert sorted(result.pages) == [1, 2, 3, 4, 5]
    assert all(w <= 10 for w in result.overfull), result.overfull


@pytest.mark.parametrize(
    "args", [["attention", "--d-k", "16"], ["feed-forward", "--d-model", "11"]], ids=["d_k-16", "d_model-11"]
)
def test_matrices_wider_than_ten_columns_compile(runner, cli, tmp_path, args):
    """amsmath's bmatrix stops at 10 columns ("Extra alignment tab")."""
    require_latex()
    res = runner.invoke(cli, ["build", *args, "--format", "pdf,tex", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "worksheet.pdf").exists() and (tmp_path / "worksheet-key.pdf").exists()
    assert "bmatrix" not in (tmp_path / "worksheet-key.tex").read_text()


def test_thinking_machines_prints_its_2_by_64_matrices_in_column_blocks(runner, cli, tmp_path):
    require_latex()
    res = runner.invoke(
        cli, ["solve", "--example", "thinking-machines", "--format", "tex", "-o", str(tmp_path / "tm.tex")]
    )
    assert res.exit_code == 0, res.output
    tex = (tmp_path / "tm.tex").read_text()
    # Q and K: 64 columns in 8 blocks, each headed by its column numbers
    assert tex.count(r"\scriptstyle 57 &") == 2
    res = runner.invoke(
        cli, ["solve", "--example", "thinking-machines", "--format", "pdf", "-o", str(tmp_path / "tm.pdf")]
    )
    assert res.exit_code == 0, res.output
    assert page_count(tmp_path / "tm.pdf") <= 3


def test_column_blocks_keep_up_to_ten_columns_whole_and_split_wider_into_eights():
    assert col_blocks(MAX_COLS) == [(0, MAX_COLS)]
    assert col_blocks(11) == [(0, 8), (8, 11)]
    blocks = col_blocks(64)
    assert len(blocks) == 8 and all(b - a == BLOCK for a, b in blocks)
    assert [j for a, b in blocks for j in range(a, b)] == list(range(64))


@pytest.mark.parametrize("fmt", ["tex", "html", "md"])
def test_a_wide_answer_grid_is_split_into_numbered_blocks(fmt):
    r = get(fmt)
    grid = r.empty_grid(Table([[""] * 16 for _ in range(2)], ("a", "b"), None))
    heads = {"tex": r"& 9 & 10", "html": "<th>9</th><th>10</th>", "md": "| 9 | 10 |"}[fmt]
    assert str(grid).count(heads) == 1
    assert {"tex": r"\setgridcell{8}", "html": '<table class="grid">', "md": "| 1 | 2 |"}[fmt] in str(grid)


# -- point 5: written steps ------------------------------------------------

ANSWER = r"Divide by $\sqrt{d_k}$: the softmax is then about right, neither too peaked nor too flat."


def written_document() -> Document:
    p = Problem("softmax-scaling", "Why scale by $\\sqrt{d_k}$", {})
    p.add_input("scores", matrix([[1, 2]]))
    p.add_written("choice", title="Which would you use, and why?", answer=ANSWER, lines=4)
    return Document("Written", [p], seed=7)


def test_written_step_gets_ruled_lines_on_the_tex_sheet_and_the_answer_on_the_key(tmp_path):
    doc = written_document()
    sheet, key = get("tex").render(doc, key=False), get("tex").render(doc, key=True)
    body = sheet.split(r"\begin{document}")[1]
    assert body.count(r"\writeline") == 4
    assert "about right" not in sheet and r"\setgridcell" not in body
    assert r"Divide by $\sqrt{d_k}$: the softmax is then about right" in key
    require_latex()
    for name, source in (("sheet", sheet), ("key", key)):
        path, _ = compile_to(tmp_path, source, name)
        text = " ".join(pdf_lines(path))
        assert ("about right" in text) == (name == "key")
        assert "Which would you use, and why?" in text


def test_written_step_gets_ruled_lines_on_the_html_sheet_and_the_answer_on_the_key():
    doc = written_document()
    sheet, key = get("html").render(doc, key=False), get("html").render(doc, key=True)
    assert sheet.count('<div class="lines"><div></div><div></div><div></div><div></div></div>') == 1
    assert "about right" not in sheet and '<table class="grid">' not in sheet
    model = re.search(r'<p class="written">(.*?)</p>', key, re.S).group(1)
    assert "about right" in model and "<msqrt>" in model


def test_written_step_gets_ruled_lines_on_the_md_sheet_and_the_answer_on_the_key():
    doc = written_document()
    sheet, key = get("md").render(doc, key=False), get("md").render(doc, key=True)
    assert len(re.findall(r"^(\\_){20,}$", sheet, re.M)) == 4
    assert "about right" not in sheet
    assert "*Model answer.* " + ANSWER in key


# -- point 6: maths in titles, prompts and instructions --------------------


def test_titles_intros_and_instructions_typeset_their_maths():
    doc = written_document()
    doc.instructions = "Scale by $\\sqrt{d_k}$."
    doc.problems[0].intro = "Scores $s$ for $d_k = 64$."
    tex = get("tex").render(doc, key=False)
    assert r"Why scale by $\sqrt{d_k}$" in tex and r"Scale by $\sqrt{d_k}$." in tex
    assert r"\$" not in tex and r"\textbackslash" not in tex
    html = get("html").render(doc, key=True)
    assert "<h1>Why" not in html and "$" not in html.split("<body>")[1]


def test_no_conventions_heading_when_none_apply():
    doc = written_document()
    doc.conventions = ()
    assert "Conventions" not in get("tex").render(doc, key=False)
    assert "Conventions" not in get("html").render(doc, key=False)
    assert "Conventions" not in get("md").render(doc, key=False)


# -- point 9: typography -----------------------------------------------------


def test_answer_key_never_leaves_key_alone_on_a_line(tmp_path):
    require_latex()
    doc = build_document(["attention"], seed=1, title="A title long enough to fill the line up to its end here")
    tex = get("tex").render(doc, key=True)
    assert r"\mbox{--- answer key}" in tex
    path, _ = compile_to(tmp_path, tex, "key")
    lines = pdf_lines(path)
    assert any("answer key" in line for line in lines)
    assert "key" not in lines


def test_points_stay_on_the_line_of_a_long_problem_title(tmp_path):
    require_latex()
    doc = build_document(["attention"], seed=1)
    doc.problems[0].title = "Scaled dot-product attention over the whole of a rather long sentence"
    doc.problems[0].points = 12
    path, _ = compile_to(tmp_path, get("tex").render(doc, key=False), "points")
    line = next(x for x in pdf_lines(path) if "Problem 1" in x)
    assert line.endswith("(12 points)")


def test_aid_entries_never_break_inside(tmp_path):
    """ "cos(1/100) ≈" must not end a line: every entry is one box."""
    require_latex()
    doc = build_document(["positional-encoding"], seed=1, options={"d_model": 8})
    tex = get("tex").render(doc, key=False)
    aid = next(line for line in tex.splitlines() if "you may need" in line)
    entries = re.findall(r"\\mbox\{\$[^$]*\\approx [^$]*\$\}", aid)
    assert len(entries) == len(doc.problems[0].aids[0].entries)
    path, _ = compile_to(tmp_path, tex, "aids")
    # a row of pdftotext may start with "≈" after a stacked fraction (sin(1/50) ≈ ...) on
    # the same printed line; a break after "≈" would leave a row ending with it
    assert not any(line.endswith("≈") for line in pdf_lines(path))


def test_labelled_and_plain_matrices_are_the_same_bracketed_array():
    r = get("tex")
    plain = r.matrix("W", Table([["1", "2"], ["3", "4"]]))
    labelled = r.matrix("X", Table([["1", "2"], ["3", "4"]], ("Je", "suis"), ("a", "b")))
    for m in (plain, labelled):
        assert m.count(r"\cline") == 4 and "bmatrix" not in m and r"\hline" not in m
    html = get("html")
    table = str(html.matrix("X", Table([["1", "2"]], ("Je",), None)))
    assert table.count('class="lb"') == 1 and table.count('class="rb"') == 1


def test_html_prime_is_a_prime_not_an_acute_accent():
    from worksheet.render.html import mathml

    # over a subscript the prime is stacked with it (S'_{ij}, as TeX sets it), at its base's
    # size and lowered (the <mo scriptlevel="-1"> in a lowered <mpadded>), never a script-size prime
    stacked = '<mpadded voffset="-.45em"><mo scriptlevel="-1" lspace="0" rspace="0">\u2032</mo></mpadded>'
    for latex in ("S'", "S'_{ij}", "S^{\\prime}"):
        out = mathml(latex)
        assert "\u2032" in out  # the prime, as a character (the page is UTF-8)
        assert not re.search(r"<(msup|msubsup)>(?:(?!</\1>).)*\u2032", out.replace(stacked, "")), out
    assert stacked in mathml("S'_{ij}")


def test_html_print_css_shows_long_formulas_whole():
    html = get("html")
    long = str(html.display(" + ".join(f"x_{{{i}}}" for i in range(40))))
    assert long.startswith('<div class="display long')
    css = html.render(written_document(), key=True)
    media = css[css.index("@media print") :]
    media = media[: media.index("\n}\n")]
    assert re.search(r"\.display[^{]*\{[^}]*overflow: visible", media)
    assert ".display.long" in media


def test_html_answer_key_points_and_aids_do_not_wrap():
    doc = build_document(["positional-encoding"], seed=1)
    doc.problems[0].points = 5
    html = get("html").render(doc, key=True)
    assert '<span class="nowrap">— answer key</span>' in html
    aid = next(line for line in html.splitlines() if line.startswith('<p class="aid">'))
    assert aid.count('<span class="nowrap">') == len(doc.problems[0].aids[0].entries)
    assert re.search(r"\.points \{[^}]*white-space: nowrap", html)


def test_every_sheet_states_its_seed():
    doc = build_document(["attention"], seed=4242)
    for fmt in ("tex", "html", "md"):
        for key in (False, True):
            assert "4242" in str(get(fmt).render(doc, key=key))


@pytest.mark.parametrize(
    "kind", ["layer-norm", "attention", "next-token", "find-the-mistake", "lstm-cell", "encoder-block"]
)
def test_no_heading_wraps_into_a_narrow_column(kind):
    """Issue 29: "1. Residual / connection" wrapped beside its grid in 4 cm.  Beside a grid
    or above one in a pair, a heading is on one line, or on at most three in a column of
    5.5 cm or more."""
    r = get("tex")
    for seed in (1, 2, 3):
        p = build_document([kind], seed=seed).problems[0]
        for row in r.step_rows(p.printed_steps(False), False):
            for i, s, w, side in row:
                need = r.heading_cm(i, s)
                if side:
                    assert side >= need or (side >= r.WRAP_CM and 3 * side >= need), (kind, s.name, side, need)
                if len(row) > 1:
                    assert w >= need or (w >= r.WRAP_CM and 3 * w >= need), (kind, s.name, w, need)
    residual = build_document(["layer-norm"], seed=1).problems[0].printed_steps(False)[0]
    (row,) = r.step_rows([residual], False)
    assert row[0][3] == 0.0  # "1. Residual connection" stands above its wide grid, not in a 4.4 cm column
