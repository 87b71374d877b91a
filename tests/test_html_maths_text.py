"""The maths of sheet prose in HTML is typeset, never TeX source (issue 18
§3): the rounding line's root has a visible radicand, as in the PDF, no TeX
command survives into MathML or the page title, in every kind's sheet and key."""

from __future__ import annotations

import re

import pytest

from worksheet import kinds
from worksheet.build import build_document, render_document
from worksheet.policy.pencil import HAND_LINE
from worksheet.render.html import mathml

KINDS = [k for k in kinds.names() if k != "find-the-mistake"]  # every kind that is not about another


@pytest.fixture(scope="module")
def pages():
    out = {}
    for kind in KINDS:
        for numbers in ("hand", "calculator"):
            files = render_document(build_document([kind], seed=4, options={"numbers": numbers}), ["html"], name="w")
            out.update({(kind, numbers, name): text for name, text in files.items()})
    return out


def test_the_rounding_line_names_the_root_with_a_visible_radicand(pages):
    assert r"$\sqrt{x}$" in HAND_LINE and r"\cdot" not in HAND_LINE
    root = mathml(r"\sqrt{x}")
    assert re.search(r"<msqrt>(?:<mrow>)?<mi>x</mi>", root), root
    # the line names only the tables a sheet prints: every hand sheet with a table of roots
    roots = [k for k in KINDS if "sqrt" in build_document([k], seed=4).table_functions]
    hand = [text for (kind, numbers, _), text in pages.items() if numbers == "hand" and kind in roots]
    assert hand and all(root.split("<math>")[-1].split("</math>")[0] in text for text in hand)


def test_no_tex_command_reaches_mathml_or_the_title(pages):
    for (kind, numbers, name), text in pages.items():
        leaks = re.findall(r"<m[ion][^>]*>[^<]*\\[A-Za-z]+[^<]*</m[ion]>", text)
        assert not leaks, (kind, numbers, name, leaks[:3])
        title = re.search(r"<title>(.*?)</title>", text, re.S).group(1)
        assert "\\" not in title and "$" not in title, (kind, name, title)


def test_the_softmax_scaling_title_reads_as_maths(pages):
    title = re.search(r"<title>(.*?)</title>", pages["softmax-scaling", "hand", "w-key.html"]).group(1)
    assert "√d_k" in title


def test_a_user_title_keeps_its_braces_outside_maths():
    from worksheet.policy.safetext import plain_title

    assert plain_title("Set {#1}") == "Set {#1}"
    assert plain_title(r"Why scale by $\sqrt{d_k}$") == "Why scale by √d_k"
