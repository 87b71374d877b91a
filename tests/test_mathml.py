"""MathML for the HTML key: the printer over the exact tree
(worksheet.exact.mathml), formulas printed from the maths tree
(worksheet.render.formulas; the tree itself: test_maths_tree.py), and user
text that never becomes markup."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from worksheet import kinds
from worksheet.policy import safetext
from worksheet.build import build_document
from worksheet.exact import NEG_INF, exp, power, sqrt, tanh
from worksheet.exact.mathml import MINUS, entry, matrix, number, text, to_mathml
from worksheet.render import get
from worksheet.solution.maths import as_latex
from worksheet.render import html as h

MATHML_TAGS = {
    "math",
    "mrow",
    "mi",
    "mn",
    "mo",
    "mtext",
    "mspace",
    "msqrt",
    "mroot",
    "mfrac",
    "msub",
    "msup",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mtable",
    "mtr",
    "mtd",
    "mstyle",
    "mpadded",
    "mphantom",
    "menclose",
    "ms",
}


def element(markup: str) -> ET.Element:
    """The markup parsed as XML (one root): it is well formed."""
    return ET.fromstring(markup)


def shown_text(markup: str) -> str:
    """What a reader sees: the text content of the markup."""
    return "".join(element(f"<root>{markup}</root>").itertext())


# ---------------------------------------------------------------- the printer

VALUES = [
    Fraction(3),
    Fraction(-3),
    Fraction(1, 3),
    Fraction(-2, 5),
    sqrt(3),
    2 * sqrt(3),
    exp(-2),
    exp(1),
    1 / (1 + exp(-2)),
    (Fraction(1, 2) + exp(-1)) / (1 + exp(-1)),
    -sqrt(2) / 3,
    2 * power(10, Fraction(2, 5)),
    tanh(Fraction(1, 2)),
    exp(Fraction(-1749, 20000)) / (1 + exp(-1)),
]


@pytest.mark.parametrize("x", VALUES, ids=str)
def test_every_exact_value_prints_as_one_well_formed_element(x):
    out = to_mathml(x)
    root = element(out)
    assert root.tag in MATHML_TAGS
    assert "-" not in shown_text(out)  # a minus is U+2212, never a hyphen


def test_numbers_fractions_and_the_minus():
    assert to_mathml(Fraction(7)) == "<mn>7</mn>"
    assert to_mathml(Fraction(-7)) == f"<mrow>{MINUS}<mn>7</mn></mrow>" and "\u2212" in MINUS
    assert to_mathml(Fraction(3, 4)) == "<mfrac><mn>3</mn><mn>4</mn></mfrac>"
    assert to_mathml(NEG_INF) == f"<mrow>{MINUS}<mi>\u221e</mi></mrow>"
    assert to_mathml(sqrt(3)) == "<msqrt><mn>3</mn></msqrt>"
    assert to_mathml(exp(1)) == "<mi>e</mi>"
    assert to_mathml(exp(-2)) == f"<msup><mi>e</mi><mrow>{MINUS}<mn>2</mn></mrow></msup>"


def test_sums_products_and_functions_read_as_their_latex_does():
    softmax = to_mathml(1 / (1 + exp(-2)))
    assert softmax.startswith("<mfrac><mn>1</mn><mrow><mn>1</mn><mo>+</mo><msup>")
    assert "\u22c5" in to_mathml(2 * power(10, Fraction(2, 5)))  # \cdot between numbers
    assert "\u2062" in to_mathml(2 * sqrt(3)) and "\u22c5" not in to_mathml(2 * sqrt(3))
    t = to_mathml(tanh(Fraction(1, 2)))
    assert t.startswith("<mrow><mi>tanh</mi><mo>\u2061</mo>") and "<mfrac>" in t
    assert shown_text(to_mathml(exp(Fraction(1, 2)) - 2)) == "\u22122+e12"


def test_the_printer_keeps_each_value_s_text():
    x = 1 / (1 + exp(-3))
    assert to_mathml(x) is to_mathml(x)


def test_decimals_and_labels():
    assert number("-0.2500") == "<mn>\u22120.2500</mn>"
    assert number("-inf") == f"<mrow>{MINUS}<mi>\u221e</mi></mrow>"
    assert number("1\\input") == "<mtext>1\\input</mtext>"  # not a number: text
    assert text('<mtr> & "q"') == "<mtext>&lt;mtr&gt; &amp; &quot;q&quot;</mtext>"


def test_a_matrix_is_a_table_in_stretchy_brackets_with_display_fractions():
    out = matrix([[Fraction(1), Fraction(1, 2)], [NEG_INF, sqrt(2)]], symbol="<mi>A</mi>")
    root = element(out)
    assert "mfenced" not in out
    assert '<mo stretchy="true">[</mo><mtable displaystyle="true">' in out  # fractions display size
    assert out.endswith('</mtable><mo stretchy="true">]</mo></mrow></mrow>')
    assert "displaystyle" not in matrix([[Fraction(1), Fraction(-2)]])  # no fraction: no need
    assert len(root.findall(".//mtr")) == 2 and len(root.findall(".//mtd")) == 4


def test_the_html_key_prints_matrices_from_the_exact_values():
    doc = build_document(["attention"], seed=3, options={"causal": True})
    page = get("html").render(doc, key=True)
    weights = doc.problems[0]["weights"]
    for row in weights.exact:
        for x in row:
            assert entry(x) in page
    assert "<mo>\u2212</mo><mi>\u221e</mi>" in page  # the masked scores
    assert "&#x0" not in page  # characters, not references, in the compact MathML
    assert "&lt;span" not in page and "&lt;math" not in page  # markup the renderer built stays markup
    assert 'xmlns="' not in page  # HTML puts <math> in the MathML namespace itself


# ---------------------------------------------------------------- every formula the kinds make


def every_formula() -> set[str]:
    """Every formula, worked line, symbol and prose formula that the kinds
    make (both number modes, two seeds) and the conventions state, as LaTeX
    (a tree printed)."""
    texts: set[str] = set()
    for name in kinds.names():
        for numbers in ("hand", "calculator"):
            for seed in (1, 2):
                for p in build_document([name], seed=seed, options={"numbers": numbers}).problems:
                    for s in p.steps:
                        texts.update(as_latex(x) for x in [s.formula, *s.work, s.symbol])
                    texts.update(as_latex(q.symbol) for q in p.inputs.values())
                    texts.update(f"{arg} \\approx {val}" for a in p.aids for arg, val in a.entries)
                    for t in [
                        p.title,
                        p.intro,
                        *p.notes,
                        *(s.title for s in p.steps),
                        *(s.note for s in p.steps),
                        *(s.written for s in p.steps),
                    ]:
                        texts.update(t.split("$")[1::2])
    for c in kinds.every_convention().values():
        for t in (c.text, c.calculator or ""):
            texts.update(t.split("$")[1::2])
    texts.discard("")
    return texts


def test_maths_is_mathml_for_every_kind_with_no_fallback():
    h.FALLBACKS.clear()
    page = get("html").render(build_document(kinds.names(), seed=3), key=True)
    assert h.FALLBACKS == [] and 'class="tex"' not in page


# ---------------------------------------------------------------- user text is text

HOSTILE = [
    "<mtr>",
    "</math>",
    "<mphantom>",
    "a & b",
    "&lt;",
    '"quoted"',
    "'single'",
    "]]>",
    "\\(",
    "\\[x\\]",
    "<script>alert(1)</script>",
    "}{",
    "\\text{x}",
    "%c",
    "a_b^c",
    "<mtext>x</mtext>",
]


def _label_ok(s: str) -> bool:
    try:
        safetext.check_label(s, field="tokens")
    except safetext.TextError:
        return False
    return True


@given(st.text(max_size=40))
@example("<mtr>")
@example("</math>")
@example("<mphantom>")
@example("a & b")
@example("&amp;")
@example('"quoted"')
@example("it's")
@example("]]>")
@example("\\(")
@example("\\)")
@example("<mtext>x</mtext>")
def test_a_label_inside_a_formula_is_its_own_characters_and_never_markup(s):
    """A label in a cell (worksheet.solution.number_format) or in a worked line
    (worksheet.steps.line_trees.latex_text, a text leaf) becomes one <mtext> showing exactly
    its characters: no tag it holds is markup, whatever tags MathML has."""
    from worksheet.solution.number_format import exact_latex
    from worksheet.steps.line_trees import latex_text

    if not _label_ok(s):
        return
    before = len(h.FALLBACKS)
    for latex in (exact_latex(s), latex_text(s), f"p_{{{1}}} = {latex_text(s)} + 1"):
        out = h.mathml(latex)
        assert len(h.FALLBACKS) == before, s
        root = element(out)
        texts = [t.text or "" for t in root.iter("mtext")]
        assert texts == [s.replace(" ", "\u00a0")], (s, out)
        assert {e.tag for e in root.iter()} <= MATHML_TAGS


@given(st.text(max_size=40))
@example("<mtr>")
@example("</math>")
@example("<mphantom>")
@example("&")
@example('"')
@example("]]>")
@example("\\(")
def test_a_label_in_a_matrix_cell_is_escaped_text(s):
    if not _label_ok(s):
        return
    for cell in (h.exact_cell(s), h.given_cell(s)):
        root = element(cell)
        assert root.tag == "mtext" and (root.text or "") == s and list(root) == []


def _tags(page: str) -> list[str]:
    return re.findall(r"</?[A-Za-z][^\s>/]*", page)


def _pages(label: str) -> list[str]:
    docs = [
        build_document(["next-token"], seed=1, options={"vocab": ["a", label, "c"]}),
        build_document(["attention"], seed=1, options={"tokens": ["x", label, "z"]}),
    ]
    return [get("html").render(doc, key=key) for doc in docs for key in (True, False)]


@pytest.mark.parametrize("label", HOSTILE)
def test_hostile_labels_show_as_text_in_the_whole_html_key_and_sheet(label):
    """Through the whole renderer: a vocabulary label of next-token (in a
    labelled matrix, in worked lines, in prose) and a token label of
    attention (row labels) change no tag of the page (the same tags, in the
    same order, as with a plain label) and show escaped."""
    if not _label_ok(label):
        pytest.skip("refused at input")
    escaped = label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for page, plain in zip(_pages(label), _pages("q")):
        assert _tags(page) == _tags(plain)
        assert escaped in page or escaped.replace('"', "&#34;").replace("'", "&#39;") in page


def test_a_row_label_that_is_a_mathml_tag_is_text_inside_and_outside_formulas():
    """The regression of issue 17: a row label <mtr> reached the HTML as markup."""
    doc = build_document(["attention"], seed=1, options={"tokens": ["<mtr>", "</math>", "<mphantom>"]})
    page = get("html").render(doc, key=True)
    for label in ("<mtr>", "</math>", "<mphantom>"):
        assert label.replace("<", "&lt;").replace(">", "&gt;") in page
    assert page.count("<math") == page.count("</math>")
    assert "<mphantom>" not in page


@given(st.text(alphabet="\\{}^_$<>&\"'abxyz /()=+-0123 ]", max_size=30))
@example("$x$ <mtr>")
@example("$\\text{<mtr>}$")
@example("a & b $x^2$ ]]>")
@example("\\( x \\)")
def test_prose_is_escaped_text_or_allowed_maths(s):
    """A title or prompt: words are escaped text; only formulas that pass the
    allow-list become MathML, and they hold only MathML tags."""
    out = str(get("html").prose(s))
    body = re.sub(r"<math[^>]*>.*?</math>|<code class=\"tex\">([^<>]*)</code>", "", out, flags=re.S)
    assert "<" not in body and ">" not in re.sub(r"&gt;", "", body)
    for m in re.findall(r"<math[^>]*>.*?</math>", out, flags=re.S):
        assert {e.tag for e in element(m).iter()} <= MATHML_TAGS


def test_a_decimal_table_prints_numbers_with_a_minus_and_labels_as_text():
    from worksheet.render.base import Table

    out = str(
        get("html").table(Table([["1.5000", "-0.2500", "-inf", r"1\input{/etc/passwd}", "-<script>"]]), math=False)
    )
    assert "<td>1.5000</td>" in out and "<td>\u22120.2500</td>" in out and "<td>&minus;&infin;</td>" in out
    assert "<script>" not in out and "\u2212&lt;script&gt;" in out and r"1\input{/etc/passwd}" in out
