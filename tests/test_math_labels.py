"""Column labels that are maths (issue 18 §3): positional encoding's pair
index is set as maths, ``i = 0``, in every printed format (not the text
"i=0"), while a user's label that looks the same stays text."""

from __future__ import annotations

import json
import pickle

import worksheet
from worksheet.build import build_document, render_document
from worksheet.render import get
from worksheet.render.notebook import document
from worksheet.solution.problem import MathLabel


def _pe_files():
    return render_document(build_document(["positional-encoding"], seed=1), ["tex", "html", "md", "json", "moodle"])


def test_positional_encodings_pair_index_is_maths_in_every_format():
    files = _pe_files()
    tex = files["worksheet-key.tex"]
    assert r"\text{i=0}" not in tex and r"\text{i = 0}" not in tex
    assert "& {i = 0} & {i = 1}" in tex  # the matrix head, in maths mode
    assert "& $i = 0$ & $i = 1$" in tex  # the decimal table's head, in text mode
    html = files["worksheet-key.html"]
    assert "<th><math><mi>i</mi><mo>=</mo><mn>0</mn></math></th>" in html and "i=0" not in html
    assert "| $i = 0$ | $i = 1$ |" in files["worksheet-key.md"]
    assert r"\(i = 0\)" in files["worksheet-moodle.xml"]
    # data carries the label's characters
    (problem,) = json.loads(files["worksheet.json"])["problems"]
    angles = next(s for s in problem["steps"] if s["name"] == "angles")
    assert angles["cols"] == ["i = 0", "i = 1"]


def test_a_math_label_survives_pickling_for_parallel_builds():
    doc = build_document(["positional-encoding"], seed=1)
    (angles,) = [s for s in pickle.loads(pickle.dumps(doc)).problems[0].steps if s.name == "angles"]
    assert all(type(c) is MathLabel for c in angles.cols)


def test_a_users_label_that_reads_like_maths_stays_text():
    p = worksheet.problem("attention", tokens=["i = 0", "b", "c"], seq_len=3)
    tex = get("tex").render(document(p), key=True)
    html = get("html").render(document(p), key=True)
    assert r"\text{i = 0}" in tex and "{i = 0}" not in tex.replace(r"\text{i = 0}", "")
    assert "<th>i = 0</th>" in html and "<th><math><mi>i</mi>" not in html


def test_no_default_label_reads_as_a_digit():
    """The shipped default tokens (ours, not a user's) have no lone "I", "l"
    or "O", which beside a row of numbers read as 1 and 0: the decoder's
    target is "<s> I'm a student"."""
    from worksheet import kinds

    for kind in kinds.names():
        for p in build_document([kind], seed=1).problems:
            for q in (*p.inputs.values(), *p.steps):
                assert not {"I", "l", "O", "o", "|"} & set((q.rows or ()) + (q.cols or ())), (kind, q.name)
    p = build_document(["decoder-block"], seed=1).problems[0]
    assert p.inputs["X"].rows == ("<s>", "I'm")
