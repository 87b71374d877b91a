"""Prose as data (issue 26): an intro, a note, a step's title, a convention is a
:class:`~worksheet.solution.maths.nodes.Prose` of words, words of code and inline
formulas (trees), read once from its text and printed part by part."""

from __future__ import annotations

import html
import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape

from worksheet.build import ProblemSpec, build_document
from worksheet.kinds import block_symbols as names
from worksheet.kinds.mistakes import CATALOGUE
from worksheet.solution.maths import CODE_CLOSE, CODE_OPEN, Code, Prose, Row, Text, as_prose, read_prose
from worksheet.solution.maths import build as m
from worksheet.solution.maths import reading
from worksheet.solution.maths.latex import LatexPrinter
from worksheet.solution.maths.mathml import prose_html
from worksheet.solution.maths.plain import TextPrinter
from worksheet.solution.number_format import text_escape
from worksheet.solution.problem import code

FORMATS = ("md", "tex", "html", "json", "moodle", "qti", "text")
TEMPLATE_FORMATS = ("md", "tex", "html", "moodle", "text")

# what a user may try in a title or a prompt: markup of every format, dollars, private use
HOSTILE = "ab <>&\"'{}\\$%#_^~|`*[]()=+-\n\ue100\ue101\u2028"
hostile_text = st.text(alphabet=HOSTILE, max_size=40)
words_only = st.text(alphabet=st.characters(blacklist_characters="$\ue100\ue101", blacklist_categories=("Cs",)))
LATEX_BITS = ["x", "y_1", r"\alpha", r"\frac{1}{2}", "=", " ", "^", "{", "}", r"\sqrt{d_k}", r"\input", "<", "&", "$"]
prose_text = st.lists(st.sampled_from([*LATEX_BITS, "words ", " and ", code("no-x"), CODE_OPEN]), max_size=20).map(
    "".join
)


def _printers():
    return {
        "latex": LatexPrinter(),
        "html": prose_html,
        "plain": TextPrinter(),
    }


# -- reading, and its text form ---------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.one_of(hostile_text, prose_text))
def test_reading_then_printing_the_text_form_gives_the_same_string(s):
    p = read_prose(s)
    assert str(p) == s and p == s and hash(p) == hash(s)
    assert type(str(p)) is str


def test_every_kind_text_reads_back_to_itself_and_its_formulas_are_trees():
    texts = [m.typeset for m in CATALOGUE.values()] + [m.hint for m in CATALOGUE.values()]
    for t in texts:
        p = read_prose(str(t))
        assert str(p) == str(t)
        formulas = [x for x in p.parts if type(x) not in (Text, Code)]
        assert len(formulas) == str(t).count("$") // 2, t  # every formula of the catalogue is read


def test_a_formula_is_a_tree_and_words_are_text():
    p = read_prose(r"Divide by $\sqrt{d_k}$ and " + code("no-scaling") + ".")
    assert [type(x) for x in p.parts] == [Text, Row, Text, Code, Text]
    assert p.parts[3] == Code("no-scaling")
    assert str(p.parts[1]) == r"\sqrt{d_k}"


@pytest.mark.parametrize(
    "s",
    [
        r"a $\input{/etc/passwd}$ b",  # off the allow-list
        "a $<b>bold</b>$ b",
        "cost $$ here",  # an empty formula
        "costs $5",  # unclosed
        "a $ $ b",  # blank
        r"a $\left( x$ b",  # the reader refuses (no \right)
        "exam $a^b^c$",  # the allow-list passes it, the reader refuses it (TeX: "Double superscript")
    ],
)
def test_a_refused_formula_stays_words_shown_as_its_characters(s):
    p = read_prose(s)
    assert all(type(x) is Text for x in p.parts)
    assert "".join(x.text for x in p.parts) == s
    assert _printers()["plain"](p) == s
    assert "<math" not in prose_html(p) and html.unescape(prose_html(p)) == s
    assert LatexPrinter()(p) == text_escape(s)


def test_reading_is_cached_by_the_text():
    s = r"Scores $S = Q K^\top$ again"
    assert read_prose(s) is read_prose(s)
    assert as_prose(read_prose(s)) is read_prose(s)


def test_reading_is_bounded():
    with pytest.raises(reading.MathsError):
        read_prose("a" * (reading.MAX_PROSE_CHARS + 1))


# -- user text stays text ----------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(words_only)
def test_words_are_one_text_leaf_escaped_by_every_printer(s):
    p = read_prose(s)
    assert p.parts == ((Text(s),) if s else ())
    assert TextPrinter()(p) == s
    assert LatexPrinter()(p) == text_escape(s)
    assert prose_html(p) == str(escape(s))  # no element, every markup character escaped


@settings(max_examples=60, deadline=None)
@given(hostile_text)
def test_hostile_text_never_becomes_markup_in_any_renderer(s):
    from worksheet.render import get

    p = read_prose(s)
    for x in p.parts:  # a formula only where the allow-list and the reader accept it
        if type(x) is Row:
            assert "<" not in str(x) and "&" not in str(x) and "\\" not in str(x).replace(r"\alpha", "")
    out = get("html").prose(p)
    words = re.sub(r"<math>.*?</math>|</?span[^>]*>|</?code>", "", str(out))
    assert "<" not in words and ">" not in words  # no element but the formulas' (a user's < is &lt;)
    assert html.unescape(words) == "".join(x.text for x in p.parts if type(x) in (Text, Code))
    tex = get("tex").prose(p)
    assert "\\input" not in tex.replace(r"\textbackslash{}input", "")
    md = get("md").prose(p)
    assert "<" not in re.sub(r"\$[^$]*\$", "", md)  # a user's < is &lt; outside maths
    moodle = str(get("moodle").prose(p))
    assert "<" not in re.sub(r"</?span[^>]*>|</?code>", "", moodle)  # maths is \( \), words escaped
    if all(type(x) is Text for x in p.parts):  # a terminal: the words' own characters (controls as pictures)
        assert get("text").prose(p) == get("text").text(s)


def test_the_private_use_code_marks_are_code_only_when_a_kind_writes_them():
    p = read_prose("an open \ue100 and no close")
    assert all(type(x) is Text for x in p.parts)
    assert str(p) == "an open \ue100 and no close"


# -- the builder -------------------------------------------------------------------
def test_the_builder_makes_words_and_formulas():
    p = m.prose("Divide by ", m.sqrt(m.sym("d", sub="k")), " and round.")
    assert str(p) == r"Divide by $\sqrt{d_k}$ and round."
    assert [type(x) for x in p.parts] == [Text, type(m.sqrt(m.sym("d", sub="k"))), Text]


def test_the_builder_keeps_a_dollar_in_words_as_a_dollar():
    p = m.prose("costs $5 and $x$ ", m.code("no-x"))
    assert [type(x) for x in p.parts] == [Text, Code]
    assert "<math" not in prose_html(p)
    assert str(p) == "costs $5 and $x$ " + CODE_OPEN + "no-x" + CODE_CLOSE


def test_prose_is_immutable_hashable_and_pickles():
    p = read_prose(r"Here $X$ and " + code("c") + " words")
    with pytest.raises(AttributeError):
        p.parts = ()
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.parts == p.parts and type(q) is Prose
    assert {p: 1}[str(p)] == 1
    assert not Prose() and bool(p)


# -- renaming ----------------------------------------------------------------------
def test_renaming_prose_substitutes_in_its_formulas_only():
    p = read_prose(r"Here $X$ is the input $X + \mathrm{PE}$; X in words stays X.")
    out = names.rename_prose(p, [names.symbol("X", m.sym("Y", sub=1))])
    assert str(out) == r"Here $Y_{1}$ is the input $Y_{1} + \mathrm{PE}$; X in words stays X."
    assert [type(x) for x in out.parts] == [type(x) for x in p.parts]
    assert names.rename_prose(p, []) is p


# -- the render path reads nothing ---------------------------------------------------
@pytest.fixture(scope="module")
def documents():
    return [
        build_document(["attention", "find-the-mistake", "next-token"], seed=3),
        build_document(["decoder-block"], seed=2, options={"numbers": "calculator"}),
        build_document(
            [ProblemSpec("attention", {}, prompt=r"Use $d_k = 4$ & <b>show</b> work.")],
            seed=1,
            title=r"Midterm: $\alpha$ & <i>co</i>",
        ),
    ]


def test_the_model_holds_prose(documents):
    for doc in documents:
        assert type(doc.title) is Prose and type(doc.rounding) is Prose
        assert all(type(c) is Prose for c in doc.conventions)
        for p in doc.problems:
            assert type(p.title) is Prose and type(p.intro) is Prose
            assert all(type(n) is Prose for n in p.notes)
            for s in p.steps:
                assert type(s.title) is Prose and type(s.note) is Prose and type(s.written) is Prose
            assert all(type(a.title) is Prose for a in p.aids)


def test_a_spec_prompt_is_its_own_prose_after_the_kind_intro(documents):
    intro = documents[2].problems[0].intro
    assert str(intro).endswith(r". Use $d_k = 4$ & <b>show</b> work.")
    assert intro.parts[-4:-2] == (Text(" "), Text("Use "))  # read on its own: no $ pairs with the kind's
    assert str(intro.parts[-2]) == "d_k = 4" and intro.parts[-1] == Text(" & <b>show</b> work.")


@pytest.mark.parametrize("fmt", FORMATS)
def test_renderers_never_read_prose_or_latex_of_prose_on_the_render_path(documents, fmt, monkeypatch):
    from worksheet.render import get

    def refuse(*a, **k):
        raise AssertionError("prose read on the render path")

    renderer = get(fmt)
    monkeypatch.setattr(reading, "read_prose", refuse)
    monkeypatch.setattr(reading, "_formula", refuse)
    for doc in documents:
        for role in [a.role for a in renderer.artefacts()]:
            part = renderer.part(doc, 0, 1, role, variants=False)
            assert renderer.join([doc.outline()], [part], role, variants=False)


@pytest.mark.parametrize("fmt", TEMPLATE_FORMATS)
def test_a_renderer_prints_prose_part_by_part(fmt):
    from worksheet.render import get

    r = get(fmt)
    p = read_prose(r"Divide by $\sqrt{d_k}$, see " + code("no-scaling") + " & <b>.")
    expected = r.text("Divide by ") + r.math(p.parts[1]) + r.text(", see ") + r.code("no-scaling") + r.text(" & <b>.")
    out = r.prose(p)
    if fmt == "html":  # the formula and the comma after it kept on one line
        assert out.replace('<span class="nowrap">', "").replace(",</span>", ",") == expected
    else:
        assert out == expected


def test_the_notebook_display_reads_no_prose(documents, monkeypatch):
    from worksheet.render.notebook import notebook_html

    def refuse(*a, **k):
        raise AssertionError("prose read on the render path")

    monkeypatch.setattr(reading, "read_prose", refuse)
    monkeypatch.setattr(reading, "_formula", refuse)
    for doc in documents:
        assert "<math" in notebook_html(doc)


def test_a_formula_read_from_prose_keeps_its_own_latex_in_md_and_tex():
    from worksheet.render import get

    p = read_prose(r"Scores $S=QK^\top$ here")  # not as the LaTeX printer spaces it
    assert get("md").prose(p) == r"Scores $S=QK^\top$ here"
    assert get("tex").prose(p) == r"Scores $S=QK^\top$ here"
    assert "<mi>S</mi>" in get("html").prose(p)


def test_a_template_may_still_print_its_own_string_as_prose():
    from worksheet.render import get

    r = get("md")
    assert r.prose(r"a $x$ b") == r.prose(read_prose(r"a $x$ b")) == "a $x$ b"
