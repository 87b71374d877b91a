"""Row vectors are set as rows, and an ``=`` sits on the math axis beside a
matrix, never above its bracket (issue 18 §3): in the LaTeX, the HTML and
the compiled PDF of every kind's sheet and key."""

from __future__ import annotations

import re
import subprocess

import pytest

from pdf_util import require_latex, require_poppler
from worksheet import kinds
from worksheet.build import build_document, render_document
from worksheet.render import get
from worksheet.render.base import Table

KINDS = [k for k in kinds.names() if k != "find-the-mistake"]  # every kind that is not about another


@pytest.fixture(scope="module")
def outputs():
    out = {}
    for kind in KINDS:
        for numbers in ("hand", "calculator"):
            doc = build_document([kind], seed=5, options={"numbers": numbers})
            files = render_document(doc, ["tex", "html"], name="w")
            out[kind, numbers] = files
    return out


_BMATRIX = re.compile(r"\\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", re.S)


def _bracketed_arrays(tex: str):
    """The matrices the renderer draws (arrays whose brackets are rules with
    ``\\cline`` ticks), as (what stands just before the array, its body)."""
    start = r"\begin{array}{"
    at = tex.find(start)
    while at >= 0:
        i, depth = at + len(start), 1
        while depth:
            depth += {"{": 1, "}": -1}.get(tex[i], 0)
            i += 1
        pre, end = tex[at + len(start) : i - 1], tex.find(r"\end{array}", i)
        if "p{2.5pt}" in pre:
            yield tex[max(0, at - 60) : at], tex[i:end]
        at = tex.find(start, i)


RAISED = r"\raisebox{\dimexpr\arraystretch\baselineskip/2\relax}{$"


def test_no_equals_stacked_above_a_matrix(outputs):
    for (kind, numbers), files in outputs.items():
        for name, text in files.items():
            if not name.endswith(".tex"):
                continue
            for cmd in (r"\overset", r"\stackrel", r"\underset", r"\substack"):
                for m in re.finditer(re.escape(cmd) + r"\{([^{}]*)\}", text):
                    assert "=" not in m.group(1), (kind, numbers, name, m.group(0))
            # an ``aligned`` block puts its ``=`` at the top of a tall matrix: no matrix goes inside one
            for m in re.finditer(r"\\begin\{aligned\}(.*?)\\end\{aligned\}", text, re.S):
                assert "array" not in m.group(1) and "matrix" not in m.group(1), (kind, name)


def test_row_vectors_are_rows_in_worked_lines(outputs):
    """A bmatrix in a worked line (a 1 x n vector written inline) has its
    entries side by side, never one entry per row."""
    seen = 0
    for (kind, _), files in outputs.items():
        for name, text in files.items():
            if not name.endswith(".tex"):
                continue
            for m in _BMATRIX.finditer(text):
                rows = [r for r in m.group(1).split(r"\\") if r.strip()]
                seen += 1
                assert not (len(rows) > 1 and all("&" not in r for r in rows)), (kind, name, m.group(0))
    assert seen  # softmax-scaling and alignment write such vectors


def test_labelled_matrices_are_raised_by_half_their_head_row_in_latex(outputs):
    """A matrix with column labels (or numbers) above its bracket is raised by
    half a row: the array is centred on the math axis head row included, so
    raised, ``symbol =`` sits beside the bracket's middle."""
    heads = 0
    for (kind, numbers), files in outputs.items():
        for name, text in files.items():
            if not name.endswith(".tex"):
                continue
            for before, body in _bracketed_arrays(text):
                if body[: body.index(r"\cline")].strip():  # a head row above the bracket
                    heads += 1
                    assert before.endswith(RAISED), (kind, numbers, name, body[:200])
                else:
                    assert not before.endswith(RAISED), (kind, name)
    assert heads > 10


def test_one_row_and_one_column_render_as_row_and_column():
    r = get("tex")
    row = r.matrix("h", Table([["1", "2", "3"]], None, ["a", "b", "c"]))
    assert row.count(r"\\") == 2  # the head row and the one body row
    assert RAISED in row and row.endswith(r"\end{array}$}}}")
    assert re.search(r"& 1 & 2 & 3 &", row[row.index(r"\cline") :])
    col = r.matrix("v", Table([["1"], ["2"], ["3"]], None, None))
    assert RAISED not in col and col.count("&") == 3 * 2


def test_labelled_matrices_balance_their_head_row_in_html(outputs):
    tables = 0
    for (kind, numbers), files in outputs.items():
        for name, text in files.items():
            if not name.endswith(".html"):
                continue
            for t in re.findall(r'<table class="matrix">(.*?)</table>', text, re.S):
                if "<thead>" in t and 'class="lb"' in t:
                    tables += 1
                    assert "<tfoot" in t, (kind, numbers, name)
                    assert t.count("<tr>") == t.count("</tr>")
    assert tables > 10


def _words(pdf):
    """(word, x_min, y_min, x_max, y_max) of every word on page 1, from pdftotext -bbox."""
    html = subprocess.run(
        [require_poppler("pdftotext"), "-bbox", "-f", "1", "-l", "1", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', html)
    return [(w, float(a), float(b), float(c), float(d)) for a, b, c, d, w in found]


def test_equals_is_level_with_a_labelled_row_vector_in_the_pdf(tmp_path):
    """next-token's logits z (one row, its columns labelled by the tokens):
    in the compiled key the ``=`` after ``z`` is level with the entries, with
    the labels above it (before the fix it stood level with nothing, between
    the labels and the bracket)."""
    require_latex()
    from worksheet.build import write_document

    write_document(build_document(["next-token"], seed=3), ["pdf"], tmp_path)
    words = _words(tmp_path / "worksheet-key.pdf")
    mid = lambda w: (w[2] + w[4]) / 2  # noqa: E731
    checked = 0
    for i, w in enumerate(words):
        if w[0] != "=" or words[i - 1][0] != "z":
            continue
        right = [v[0] for v in words if 0 < v[1] - w[3] < 250 and abs(mid(v) - mid(w)) < 4]
        above = [v[0] for v in words if 0 < v[1] - w[3] < 250 and 0 < mid(w) - mid(v) < 20]
        if "Je" in above:  # z = [...] of the logits, labelled by the vocabulary
            checked += 1
            assert right and all(re.fullmatch(r"[−-]?\d+", x) for x in right), (right, above)
    assert checked == 1
