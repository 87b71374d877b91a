"""Issue 17 §4: one hostile-text test through every output format.

Every user-text field (token, source-token and vocabulary labels, prompts,
written questions and model answers, titles, course, date, instructions,
``--name``, spec fields, the names in answer files, and the same through the
library API) gets each hostile string; every output format (Markdown, LaTeX,
JSON, Moodle XML, CSV, HTML and the notebook display) must show it to the
reader as the same literal characters, and it must never become structure:
no new tag, command, Cloze field, maths or spreadsheet formula.

What "shown" means per format: the text a reader gets after the format's
own unescaping (CommonMark backslash escapes and character references;
LaTeX's escapes; HTML's character references and MathML's ``<mtext>``; the
decoded Moodle question text without invisible word joiners; a CSV cell
without the ``'`` that stops a formula).
"""

from __future__ import annotations

import csv
import functools
import html
import io
import json
import re

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import moodle_util as mu
import worksheet
from worksheet.build import ProblemSpec, build_document
from worksheet.solution.document import Document
from worksheet.render import get
from worksheet.render.moodle import MoodleRenderer
from worksheet.render.notebook import document
from worksheet.policy.safetext import TextError, check_label

# labels: what check_label accepts (printable, at most 40 characters, no $)
LABELS = [
    "<mtr>",
    "</math>",
    "<mphantom>",
    "<script>alert(1)</script>",
    "<b>b</b>",
    "]]>",
    "&amp;",
    "&lt;i&gt;",
    "{#1}",
    "{1:NUMERICAL:=1}",
    "{:SA:~}",
    "}",
    "{",
    "~",
    "#x",
    "=x",
    "%100%",
    "\\",
    "a\\}b",
    "\\(x\\)",
    "\\[y\\]",
    "\\begin{x}",
    "[tex]x[/tex]",
    "@@x@@",
    "\\input{/etc/passwd}",
    "\\href{javascript:alert(1)}{x}",
    "%c",
    "a_b^c",
    "^^41",
    "`c`",
    "*b*",
    "|p|",
    "=1+2",
    "@SUM(A1)",
    "-2+3",
    "+1",
    "\"q\"",
    "'s'",
    "x&y",
    "1\\input{x}",
]
BENIGN = "qqzz"  # in the same places as a hostile string, and nowhere else


def hostile_doc(s: str) -> Document:
    """``s`` in every user-text field a document has."""
    return build_document(
        [
            ProblemSpec(
                "attention",
                {"tokens": [s, "b", "c"], "seq_len": 3},
                2,
                prompt=f"Prompt {s} end",
                question=f"Question {s} end",
                answer=f"Answer {s} end",
            ),
            ProblemSpec("next-token", {"vocab": ["a", s, "c", "d"]}),
            ProblemSpec("cross-attention", {"source_tokens": [s, "y"], "tokens": ["p", s], "dec_len": 2, "enc_len": 2}),
        ],
        seed=3,
        title=f"Title {s} end",
        course=f"Course {s} end",
        date=f"Date {s} end",
        instructions=f"Instructions {s} end",
    )


def fields_of(s: str) -> list[str]:
    """The texts a reader must find for ``s``."""
    return [s, f"Prompt {s} end", f"Question {s} end", f"Title {s} end"]


# ---------------------------------------------------------------- unescaping per format
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def md_shown(text: str) -> str:
    """CommonMark inline text: backslash escapes, then character references."""
    return html.unescape(_MD_ESCAPE.sub(r"\1", text))


_MD_MATHS = re.compile(r"\$\$.*?\$\$|(?<!\\)\$(?:[^$\\]|\\.)+?\$", re.S)


def md_read(text: str) -> str:
    """What a Markdown viewer with maths (Jupyter, GitHub) shows: the words
    unescaped as CommonMark does, the ``$maths$`` as TeX (MathJax gets it raw)."""
    out, pos = [], 0
    for m in _MD_MATHS.finditer(text):
        out.append(md_shown(text[pos : m.start()]))
        out.append(tex_shown(m.group()))
        pos = m.end()
    out.append(md_shown(text[pos:]))
    return "".join(out)


_MOODLE_MATHS = re.compile(r"\\\(.*?\\\)", re.S)


def moodle_read(question_html: str) -> str:
    """The text around the fields of a Moodle question, its \\( maths \\) as TeX."""
    text = mu.html_tags_and_text(mu.stored_text(question_html))[1]
    return _MOODLE_MATHS.sub(lambda m: tex_shown(m.group()), text)


_TEX = [
    (r"\textbackslash{}", "\\"),
    (r"\textasciitilde{}", "~"),
    (r"\textasciicircum{}", "^"),
    (r"\textless{}", "<"),
    (r"\textgreater{}", ">"),
    (r"\^{}", "^"),
    (r"\~{}", "~"),
]


def tex_shown(text: str) -> str:
    for a, b in _TEX:
        text = text.replace(a, b)
    return re.sub(r"\\([&%$#_{}])", r"\1", text)


class _HTMLText(__import__("html.parser").parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def html_shown(fragment: str) -> tuple[set[str], str]:
    p = _HTMLText()
    p.feed(fragment)
    p.close()
    return set(p.tags), "".join(p.text)


def no_live_tex(text: str) -> None:
    assert r"\input{" not in text and r"\href{" not in text and "^^41" not in text.replace(r"\^{}", "")


@functools.cache
def benign(fmt: str) -> str:
    """The BENIGN document in ``fmt`` as the test below reads it: the same for every
    hostile string, so built and rendered once."""
    base = hostile_doc(BENIGN)
    if fmt == "md":
        return get("md").render(base, key=True) + get("md").render(base, key=False)
    if fmt == "moodle":
        return MoodleRenderer().render(base)
    if fmt == "notebook":
        return base._repr_html_() + base.problems[0]._repr_html_()
    return get(fmt).render(base, key=True)  # tex, html


# ---------------------------------------------------------------- one label, every format
@pytest.mark.parametrize(
    "s, fmt",
    [(s, f) for f in ("md", "tex", "json", "moodle") for s in LABELS]
    + [(s, f) for f in ("html", "notebook") for s in LABELS],
)
def test_hostile_text_in_every_field_is_shown_literally_in_every_format(s, fmt):
    check_label(s, field="tokens")  # a label a user can give
    doc = hostile_doc(s)
    if fmt == "md":
        out = get("md").render(doc, key=True) + get("md").render(doc, key=False)
        ref = benign("md")
        shown = md_read(out)  # the words, and labels in the $maths$ (TeX's \text)
        assert shown.count(s) >= md_read(ref).count(BENIGN) > 0  # in every place, as text
        for text in fields_of(s):
            assert text in shown, text
        if "<" in s:
            assert s not in out  # never a raw tag
    elif fmt == "tex":
        out = get("tex").render(doc, key=True)
        no_live_tex(out)
        shown = tex_shown(out)
        assert shown.count(s) >= tex_shown(benign("tex")).count(BENIGN) > 0
        for text in fields_of(s):
            assert text in shown, text
    elif fmt == "json":
        data = json.loads(get("json").render(doc, key=True))
        attention, next_token, cross = data["problems"]
        assert attention["params"]["tokens"][0] == s and next_token["params"]["vocab"][1] == s
        assert cross["params"]["source_tokens"][0] == s
        assert attention["steps"][-1]["written"] == f"Answer {s} end"
        assert attention["steps"][-1]["title"] == f"Question {s} end"
    elif fmt == "moodle":
        questions = mu.questions(MoodleRenderer().render(doc))
        for q, b in zip(questions, mu.questions(benign("moodle")), strict=True):
            assert len(mu.fields(q.text)) == len(mu.moodle_fields(q.text)) == len(mu.fields(b.text))
            assert mu.places(q.text) == mu.places(b.text)
            assert len(mu.mathjax_delimiters(q.text)) == len(mu.mathjax_delimiters(b.text))
            # the text around the fields, and labels in \( \text{..} \); the choices: below
            shown = moodle_read(q.text)
            assert shown.count(s) >= moodle_read(b.text).count(BENIGN) > 0
        assert f"Prompt {s} end" in mu.html_tags_and_text(questions[0].text)[1]
        choice = mu.fields(questions[1].text)[-1]
        assert [mu.visible(mu.html_tags_and_text(a.answer)[1]) for a in choice.alternatives] == ["a", s, "c", "d"]
    else:
        if fmt == "html":
            out, ref = get("html").render(doc, key=True), benign("html")
        else:
            out, ref = doc._repr_html_() + doc.problems[0]._repr_html_(), benign("notebook")
        tags, shown = html_shown(out)
        ref_tags, ref_shown = html_shown(ref)
        assert tags <= ref_tags, tags - ref_tags  # no element from user text
        assert shown.count(s) >= ref_shown.count(BENIGN) > 0  # shown in every place, as text
        for text in fields_of(s):
            assert text in shown, text


# ---------------------------------------------------------------- spec file, --name, CSV, answer files
NAMES = ["=1+2", "@x", "-x", "+x", "{#1}", "[tex]", "&amp;", "%c", "#x", "~", "x$$y", "a(b)"]


@pytest.mark.parametrize("name", NAMES)
def test_a_hostile_name_and_spec_fields_through_the_command_line(runner, cli, tmp_path, name):
    s = "<mtr>{#1}\\(x\\)=1"
    spec = tmp_path / "exam.toml"
    spec.write_text(
        f'title = {json.dumps("Quiz " + s)}\ncourse = {json.dumps("C " + s)}\n'
        f'instructions = {json.dumps("Do " + s)}\n'
        f'[[sections]]\nkind = "softmax-scaling"\nprompt = {json.dumps("P " + s)}\n'
        f'question = {json.dumps("Q " + s)}\nanswer = {json.dumps("A " + s)}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    r = runner.invoke(
        cli,
        [
            "build",
            "--spec",
            str(spec),
            "--name",
            name,
            "--variants",
            "2",
            "--split",
            "--format",
            "md,tex,json,moodle,html",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert {p.parent for p in out.rglob("*")} == {out}  # nothing outside --out, no sub-folder
    rows = list(csv.reader(io.StringIO((out / f"{name}-variants.csv").read_text(encoding="utf-8"))))
    files = [row[-1] for row in rows[1:]]
    assert [f.removeprefix("'").rsplit(".", 1)[0] for f in files] == [f"{name}-v01", f"{name}-v02"]
    assert all(not f.startswith(("=", "+", "-", "@")) for f in files)
    key = json.loads((out / f"{name}-v01.json").read_text(encoding="utf-8"))
    key = key["variants"][0] if "variants" in key else key
    assert key["problems"][0]["steps"][-1]["written"] == "A " + s
    (q, *_) = mu.questions((out / f"{name}-v01-moodle.xml").read_text(encoding="utf-8"))
    assert mu.visible(q.name).startswith(f"{name} v01 P1: ")
    assert mu.visible(q.category) == f"$course$/{name}/Problem 1"
    assert "P " + s in mu.html_tags_and_text(q.text)[1]
    assert "Quiz " + s in md_shown((out / f"{name}-v01.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("student", ["=HYPERLINK(\"x\")", "<mtr>", "{#1}", "\\(x\\)", "-1", "@a", "a\u202eb"])
def test_hostile_student_names_in_answer_files_reach_reports_and_the_summary_as_text(runner, cli, tmp_path, student):
    out = tmp_path / "key"
    assert runner.invoke(cli, ["build", "softmax-scaling", "--format", "json", "-o", str(out)]).exit_code == 0
    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"student": student, "softmax_raw": [[1, 0]]}), encoding="utf-8")
    r = runner.invoke(cli, ["check", str(out / "worksheet.json"), str(folder / "a.json"), "--format", "json"])
    assert r.exit_code in (0, 1) and json.loads(r.stdout)["student"] == student  # JSON is data: exact
    r = runner.invoke(cli, ["check", str(out / "worksheet.json"), "--answers-dir", str(folder)])
    assert r.exit_code in (0, 1), r.output
    (row,) = list(csv.reader(io.StringIO((folder / "summary.csv").read_text(encoding="utf-8"))))[1:]
    cell = row[1]
    if student.isprintable():
        assert cell.removeprefix("'") == student and (cell == student or student[0] in "=+-@")
    else:
        assert cell == student.encode("unicode_escape").decode("ascii")  # bidi control: as its escape


# ---------------------------------------------------------------- the library API, property-based
def predicted(s: str):
    """next-token solved through the API so that ``s`` is the predicted token: a
    label-valued entry (the cell that reached HTML as markup, issue 17 §1), a
    row of the vocabulary table and a drop-down choice in Moodle."""
    assume(s.strip() not in ("a", "c"))  # the other words of the vocabulary: labels are distinct
    return worksheet.solve("next-token", {"h": [[1, 0]], "W_vocab": [[0, 5, 0], [0, 0, 1]]}, vocab=["a", s, "c"])


@given(st.text(min_size=1, max_size=12))
@example("<mtr>")  # the row label that reached HTML as markup (issue 17 §1)
@example("</math>")
@example("{#1}")
@example("\\(x\\)")
@example("&amp;")
@example("=1+2")
@example("a")  # a label the vocabulary already has: skipped, labels are distinct
def test_any_accepted_label_from_the_api_is_shown_in_markdown_json_and_moodle(s):
    try:
        check_label(s, field="tokens")
    except TextError:
        return
    p = worksheet.problem("attention", tokens=[s, "b", "c"], seq_len=3)
    md = p._repr_markdown_()
    assert s in md_shown(md)
    q = predicted(s)
    assert md_read(q._repr_markdown_()).count(s) >= md_read(predicted(BENIGN)._repr_markdown_()).count(BENIGN)
    assert json.loads(get("json").render(document(q), key=True))["problems"][0]["steps"][-1]["exact"] == [[s]]
    assert json.loads(get("json").render(document(p), key=True))["problems"][0]["params"]["tokens"][0] == s
    (q,) = mu.questions(MoodleRenderer().render(document(p)))
    assert s in mu.html_tags_and_text(q.text)[1]
    assert mu.places(q.text) == list(range(1, len(mu.fields(q.text)) + 1))


@given(st.text(min_size=1, max_size=12))
@example("<mtr>")  # the row label that reached HTML as markup (issue 17 §1)
@example("</math>")
@example("<mphantom>")
@example("a")  # a label the vocabulary already has: skipped, labels are distinct
def test_any_accepted_label_from_the_api_is_text_in_the_notebook_display(s):
    try:
        check_label(s, field="tokens")
    except TextError:
        return
    p, base = predicted(s), predicted(BENIGN)
    tags, shown = html_shown(p._repr_html_())
    ref, ref_shown = html_shown(base._repr_html_())
    assert tags <= ref and shown.count(s) >= ref_shown.count(BENIGN)


@given(st.text(max_size=20))
@example("&amp;")  # Markdown showed it as "&" (an entity passed through)
@example("&lt;script&gt;")
@example("<mtr>")
@example("\\input{x}")
@example("a\\}b")
def test_markdown_and_latex_text_escapes_read_back_as_the_same_text(s):
    from worksheet.render.latex import tex_escape
    from worksheet.render.markdown import MarkdownRenderer

    md = MarkdownRenderer().text(s)
    assert md_shown(md) == s and "<" not in md
    assert tex_shown(tex_escape(s)) == s
