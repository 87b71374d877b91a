"""Issue 17 §2, Moodle XML: user text never becomes a Cloze field or maths.

Read the way Moodle reads the file (tests/moodle_util.py): fields by the
documented grammar and by a port of Moodle's importer, then the places
``{#k}`` that Moodle's renderer splits the stored question text at; maths
delimiters as MathJax finds them (runs of text between elements, character
references decoded) and as Moodle's server-side filters find them (the raw
text).  Every hostile string is compared with a harmless one in the same
place: the fields and delimiters must be exactly the project's own, and the
hostile text must still be shown, character for character.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import moodle_util as mu
from worksheet.build import ProblemSpec, build_document
from worksheet.solution.document import Document
from worksheet.render import cloze, moodle

CLOZE = [
    "{#1}",
    "{#2}{#1}",
    "{1:NUMERICAL:=1}",
    "{1:NM:=1:0.1}",
    "{:SA:x}",
    "{:SHORTANSWER:=a~=b}",
    "{2:MULTICHOICE:=a~b}",
    "{1:REGEXP:=x}",
    "}",
    "{",
    "}}{{",
    "~",
    "#",
    "=",
    "%100%",
    "\\",
    "\\}",
    "\\#",
    "&#123;1:SA:x}",
    "{1:SA:x",
    "a}b{c",
    "{1:sa:x}",
    "{10:MCV:a~=b#fb}",
]
TEX = [
    "\\(x^2\\)",
    "\\[x\\]",
    "\\)",
    "\\(",
    "\\[",
    "\\]",
    "\\begin{align}x\\end{align}",
    "[tex]x[/tex]",
    "[TEX]x[/TEX]",
    "@@x@@",
    "<tex>x</tex>",
    "\\\\(x\\\\)",
    "a\\(b",
]
DOLLARS = ["$$x$$", "$$", "$", "a$b", "$ $"]  # no formula: refused in labels and spec prompts, text here
HOSTILE = CLOZE + TEX


def render(doc: Document, bank: str = "bank") -> list[mu.Question]:
    return mu.questions(moodle.MoodleRenderer().render(doc, bank=bank))


def asked(doc: Document) -> list[int]:
    """The number of answer fields of each problem: its asked entries."""
    out = []
    for p in doc.problems:
        weights = moodle.field_weights(p)
        out.append(sum(moodle.asked_cells(s) for s in p.printed_steps(False) if s.name in weights))
    return out


def assert_only_our_fields(doc: Document, questions: list[mu.Question]) -> None:
    for q, n in zip(questions, asked(doc), strict=True):
        documented, moodles = mu.fields(q.text), mu.moodle_fields(q.text)
        assert len(documented) == len(moodles) == n
        assert [(f.weight, f.type, f.alternatives) for f in documented] == [
            (f.weight, f.type, f.alternatives) for f in moodles
        ]
        assert mu.PLACE.findall(q.text) == []  # no place of a field before import
        assert mu.places(q.text) == list(range(1, n + 1))  # after import: each field's place once
        assert mu.fields(q.feedback) == [] and mu.PLACE.findall(q.feedback) == []


def delimiters(questions: list[mu.Question]) -> list:
    return [
        (
            mu.mathjax_delimiters(q.text),
            mu.mathjax_delimiters(q.feedback),
            mu.filter_delimiters(q.text),
            mu.filter_delimiters(q.feedback),
            mu.filter_delimiters(q.name),
        )
        for q in questions
    ]


def labelled_doc(label: str) -> Document:
    """``label`` as a token, a vocabulary word (a drop-down choice) and a source token."""
    return build_document(
        [
            ProblemSpec("attention", {"tokens": [label, "b", "c"], "seq_len": 3}),
            ProblemSpec("next-token", {"vocab": ["a", label, "c", "d"]}),
            ProblemSpec(
                "cross-attention", {"source_tokens": [label, "y"], "tokens": ["p", label], "dec_len": 2, "enc_len": 2}
            ),
        ],
        seed=3,
    )


def prose_doc(text: str) -> Document:
    """``text`` as a prompt, a written question and its model answer.  Put in
    after the build: the library refuses at input what the allow-list refuses
    (``$$``, ``$\\input{x}$``), and the renderer must still show it as text."""
    import dataclasses

    doc = build_document(
        [ProblemSpec("attention", {}, 2, prompt="Mind PH here", question="Why PH?", answer="Because PH.")], seed=3
    )
    p = doc.problems[0]
    p.intro = p.intro.replace("PH", text)
    p.steps[-1] = dataclasses.replace(p.steps[-1], title=f"Why {text}?", written=f"Because {text}.")
    return doc


@functools.cache
def harmless_delimiters(where: str) -> list:
    """The delimiters of the same sheet with the harmless text "zz" as the label
    (``where="label"``) or the prose: the same for every hostile string, so built once."""
    return delimiters(render(labelled_doc("zz") if where == "label" else prose_doc("zz")))


# ---------------------------------------------------------------- labels
@pytest.mark.parametrize("label", HOSTILE)
def test_a_label_with_cloze_or_tex_syntax_adds_no_field_and_no_maths(label):
    hostile = labelled_doc(label)
    qs = render(hostile)
    assert_only_our_fields(hostile, qs)
    assert delimiters(qs) == harmless_delimiters("label")
    choice = mu.fields(qs[1].text)[-1]
    assert choice.type == "MULTICHOICE"
    assert [mu.visible(mu.html_tags_and_text(a.answer)[1]) for a in choice.alternatives] == ["a", label, "c", "d"]
    for q in qs:
        tags, text = mu.html_tags_and_text(q.text)
        assert label in text  # shown, character for character, in the tables
        assert {t for t, _ in tags} <= {"p", "strong", "em", "h4", "table", "tr", "td", "th", "span"}


@given(
    st.text(
        st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="$\u2060"),
        min_size=1,
        max_size=12,
    ).filter(lambda s: s.strip() == s and s.isprintable())
)
@example("{#1}")
@example("{1:NUMERICAL:=1}")
@example("{:SA:~}")
@example("\\(")
@example("\\begin{x}")
@example("[tex]")
@example("<mtr>")
@example("}{#")
@example("a")  # a label the problems already have: skipped, labels are distinct
def test_any_label_adds_no_field_and_no_maths_and_is_shown(label):
    assume(label.strip() not in {"a", "b", "c", "d", "p", "y"})  # the other labels of the problems: distinct
    hostile = labelled_doc(label)
    qs = render(hostile)
    assert_only_our_fields(hostile, qs)
    assert delimiters(qs) == harmless_delimiters("label")
    assert all(label in mu.html_tags_and_text(q.text)[1] for q in qs)


# ---------------------------------------------------------------- prompts, questions, model answers
@pytest.mark.parametrize("text", HOSTILE + DOLLARS)
def test_prompt_question_and_answer_text_adds_no_field_and_no_maths(text):
    hostile = prose_doc(text)
    qs = render(hostile)
    assert_only_our_fields(hostile, qs)
    assert delimiters(qs) == harmless_delimiters("prose")
    (q,) = qs
    shown = mu.html_tags_and_text(q.text)[1]
    assert f"Mind {text} here" in shown and f"Why {text}?" in shown
    assert f"Because {text}." in mu.html_tags_and_text(q.feedback)[1]


def test_a_prompt_formula_on_the_allow_list_is_typeset_and_one_off_it_is_text():
    (q,) = render(prose_doc(r"$\frac{a}{b}$ and $\input{x}$"))
    runs = mu.mathjax_delimiters(q.text)
    (base,) = render(prose_doc("zz"))
    assert len(runs) == len(mu.mathjax_delimiters(base.text)) + 4  # \( \) of the formula in prompt and question
    assert r"\(\frac{a}{b}\)" in q.text
    assert r"$\input{x}$" in mu.html_tags_and_text(q.text)[1]


# ---------------------------------------------------------------- names and titles
@pytest.mark.parametrize("bank", ["{#1}", "a$$b", "x\\(y\\)", "[tex]", "@@"])
def test_bank_name_reaches_name_and_category_as_plain_text(bank):
    (q,) = render(prose_doc("zz"), bank=bank)
    assert mu.filter_delimiters(q.name) == [] and mu.filter_delimiters(q.category) == []
    assert mu.visible(q.name).startswith(bank + " P1: ")
    assert mu.visible(q.category) == f"$course${'/' + bank.replace('/', '//')}/Problem 1"


def test_maths_in_a_question_title_is_written_with_parentheses_not_dollars():
    doc = build_document(["softmax-scaling"], seed=1)
    (q,) = render(doc)
    assert "$" not in q.name and r"\(\sqrt{d_k}\)" in q.name
    assert r"\(\sqrt{d_k}\)" in q.text and "$" not in mu.html_tags_and_text(q.text)[1]


def test_a_title_formula_off_the_allow_list_stays_text_in_the_name():
    doc = build_document(["attention"], seed=1)
    doc.problems[0].title = r"See $\input{x}$ and \(y\)"
    (q,) = render(doc)
    assert mu.filter_delimiters(q.name) == []
    assert mu.visible(q.name).endswith(r"See $\input{x}$ and \(y\)")


# ---------------------------------------------------------------- the escaping functions
@given(st.text(max_size=30))
@example("{#1}")
@example("\\(x\\)")
@example("$$")
@example("[tex]@@")
def test_html_text_has_no_field_no_place_and_no_delimiter_and_reads_back(text):
    out = moodle.html_text(text)
    assert mu.fields(out) == [] and mu.PLACE.findall(out) == [] and "{" not in out and "}" not in out
    assert mu.mathjax_delimiters(out) == [] and mu.filter_delimiters(out) == []
    expected = cloze._XML_INVALID.sub("\ufffd", text)
    assert mu.html_tags_and_text(out)[1] == expected


@given(st.text(max_size=30))
@example("\\(x\\)")
@example("$$x$$")
@example("[/TEX]")
def test_plain_text_has_no_delimiter_and_is_the_same_text_to_a_reader(text):
    out = moodle.plain_text(text)
    assert mu.filter_delimiters(out) == [] and mu.MATHJAX_DELIMITERS.search(out.replace("$", "")) is None
    assert mu.visible(out) == mu.visible(text)


def test_no_field_guards_every_field_start_and_place_in_a_formula():
    assert (
        moodle.no_field(r"\text{\{1:SA:x\}} {#1} {:,2} {10:REGEXP:y}")
        == r"\text{\&#123;1:SA:x\}} &#123;#1} {:,2} &#123;10:REGEXP:y}"
    )
