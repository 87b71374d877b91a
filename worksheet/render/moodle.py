r"""Moodle XML: a question bank of Cloze (``multianswer``) questions.

One Cloze question per problem (and per variant), each after a category
element ``$course$/NAME/Problem k``, so that a quiz can draw a random
variant of problem k per student.  Moodle reads the file with
*Question bank > Import > Moodle XML* ("Get category from file" on).

The question text is HTML (``templates/moodle/question.html.j2``): the
prompt, the given matrices as tables and, per step, a table of answer fields
laid out like the grid on the paper sheet.  Maths is TeX in ``\( ... \)`` for
Moodle's MathJax filter.  The general feedback is the worked key
(``templates/moodle/feedback.html.j2``), in HTML with the same TeX.

Answer fields (Moodle's Cloze grammar ``{weight:TYPE:answers}``):

* a number: ``{w:NUMERICAL:=value:tolerance}``; ``value`` is the step's float64
  value (the JSON ``value``) and ``tolerance`` the one ``worksheet check`` allows
  a 4-decimal answer (:func:`worksheet.parse.numbers.decimal_tolerance`).  A step whose
  key carries values rounded along a chain (``rounded``) also accepts the
  rounded value, as ``check`` does: a second alternative ``~=rounded:tolerance``;
* a masked entry (-oo) is printed in the table, not asked;
* a label (the ``prediction`` of next-token): a drop-down
  ``{w:MULTICHOICE:...}`` over the column labels of the first quantity that
  lists the label at the position of the step's value (the vocabulary, in
  order), so that the right choice's position is the JSON ``value``; if no
  quantity lists it, a ``SHORTANSWER`` (case-insensitive, as ``check``);
* a written step (words) has no field: the question says that a person marks
  it, and the feedback holds the model answer.

Weights: Moodle's weights are whole numbers and a question's mark is their
sum.  Every step of a problem has an equal share of its points (exam specs
give points per problem), so the fields of a step with n asked entries each
weigh L / n, L the least common multiple of the steps' n; should that make
the question's total exceed :data:`MAX_TOTAL`, the weights are rounded
(``round(20 max(n) / n)``, within 2.5% of equal shares).  The quiz slot's mark
sets the question's points in the quiz.

Escaping: the XML is written by :mod:`xml.etree.ElementTree` (characters XML
1.0 forbids become U+FFFD).  Moodle finds fields in the question text with
the regular expression ``\{([0-9]*):(TYPE):...\}`` (on import) and, once
they are stored, their places with ``\{#([0-9]+)\}``; so in the question
text and the feedback:

* user text (labels, titles, prompts, course, ...) never holds a ``{`` or
  ``}``: they are written ``&#123;`` and ``&#125;``, which the browser shows
  as ``{`` and ``}`` but no regular expression of Moodle's reads as a field;
* in our own formulas (which may hold labels in ``\text``), ``[tex]`` and
  ``@@`` are written as below, and a ``{`` followed by digits, ``:``, a word
  and ``:``, or by ``#`` (``\text{\{1:SA:x\}}`` from a label) is written
  ``&#123;`` too, so the only fields are those :meth:`MoodleRenderer.cloze`
  writes;
* user text never starts maths: Moodle's MathJax filter typesets ``\( \)``,
  ``\[ \]``, ``$$ $$`` and ``\begin{..}`` in the browser (where character
  references are already decoded), and its legacy mode turns ``[tex]`` and
  ``$$`` into ``\(``.  So in user text each ``\`` and each ``$`` is written
  inside an element of its own, ``<span>\</span>`` (MathJax 2 and 3 find a
  delimiter only inside one run of text, never across an element), ``[tex]``
  is written ``&#91;tex]`` and ``@@`` (the algebra filter) ``&#64;@``: the
  reader sees the same characters, and only our own formulas, written by
  :meth:`MoodleRenderer.math`, are typeset.  A prompt's ``$...$`` is a
  formula only when it passes the maths allow-list (``worksheet.policy.safetext``),
  as in every format; otherwise it is text, dollars and all.

In plain-text places (the question name, the category, a drop-down choice),
where no element can be written, a WORD JOINER (U+2060, invisible) follows
every ``\`` and sits between two ``$`` (or ``@``, or in ``[tex]``), which no
delimiter matches.  Maths in a question name (a title's ``$...$`` that passes
the allow-list) is written ``\( \)``, which Moodle's filter typesets there.

Inside a field, answer and feedback text follows Moodle's rules for
``}``, ``#``, ``~``, ``/``, ``"`` and ``\`` (see :func:`cloze_escape`).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from html import escape as html_escape
from typing import Sequence

from markupsafe import Markup, escape

from ..solution.document import Document
from ..policy.errors import WorksheetError
from ..exact import NegInf, to_float
from ..solution.problem import Problem, Step
from .base import Table, TemplateRenderer, prose_parts

PLACES = 4  # the decimals a student types; the tolerance is check's for this many
MAX_TOTAL = 10_000  # largest question mark (sum of weights) with exactly equal shares
PENALTY = "0.3333333"  # Moodle's default penalty per try (interactive quizzes)

CLOZE_TYPES = ("NUMERICAL", "NM", "MULTICHOICE", "MC", "MULTICHOICE_V", "MCV", "MULTICHOICE_H", "MCH",
               "SHORTANSWER", "SA", "MW", "SHORTANSWER_C", "SAC", "MWC", "MULTICHOICE_S", "MCS",
               "MULTICHOICE_VS", "MCVS", "MULTICHOICE_HS", "MCHS", "MULTIRESPONSE", "MR",
               "MULTIRESPONSE_H", "MRH", "MULTIRESPONSE_S", "MRS", "MULTIRESPONSE_HS", "MRHS")
# where Moodle could see the start of a field ("{", digits, ":", a type, ":"; any
# word as the type, for plugins such as REGEXP) or of a stored field's place ("{#1}")
_FIELD_START = re.compile(r"\{(?=[0-9]*:[A-Za-z_]*:|#)")
WORD_JOINER = "\u2060"
# the characters of user text that could start maths or a field, and how they are written
_HTML_TEXT = {"{": "&#123;", "}": "&#125;", "\\": "<span>\\</span>", "$": "<span>$</span>"}
_BEFORE_JOINER = re.compile(r"(?<=\\)(?=.)|(?<=\$)(?=\$)|(?<=@)(?=@)|(?<=\[)(?=/?tex\])", re.S | re.I)
_LEGACY = re.compile(r"\[(?=/?tex\])|@(?=@)", re.I)
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def no_field(html: str) -> str:
    """HTML in which no ``{`` starts a Cloze field or a field's place (it becomes
    ``&#123;``, which browsers and MathJax read as ``{``)."""
    return _FIELD_START.sub("&#123;", html)


def html_text(text: str) -> str:
    """User text as HTML for the question text or feedback: escaped, with no
    ``{`` ``}`` (character references) and every ``\\`` and ``$`` in an element of
    its own, so that it forms neither a field nor maths (module docstring)."""
    escaped = str(escape(_XML_INVALID.sub("\ufffd", str(text))))
    return "".join(_HTML_TEXT.get(c, c) for c in _legacy(escaped))


def _legacy(html: str) -> str:
    """``[tex]`` and ``@@`` (which Moodle's legacy filters read as maths) as ``&#91;tex]`` and ``&#64;@``."""
    return _LEGACY.sub(lambda m: "&#91;" if m.group() == "[" else "&#64;", html)


def plain_text(text: str) -> str:
    """User text where no element can be written (a question name, a category, a
    choice): a WORD JOINER (U+2060) after every ``\\`` (but a last one), between two
    ``$`` or ``@`` and after the ``[`` of ``[tex]``."""
    return _BEFORE_JOINER.sub(WORD_JOINER, str(text))


# Inside a field, Moodle (question/type/multianswer/questiontype.php) splits the
# answers at "~", "#" and "}" unless a backslash is before them (or "&", for
# "&#..;" references), then HTML-decodes the text and turns "\}" and "\#" back
# into "}" and "#".  The documentation asks for a backslash before } # ~ / " \,
# but Moodle keeps the backslash before ~ / " \, and a backslash written as
# "\\" would stop the "~" after it from separating two answers; so those four
# are written as character references, which Moodle decodes.  So are "=" and
# "%" (an answer starting with them would be read as its grade) and "{" (no
# "{1:SHORTANSWER:" inside an answer, should a reader look for fields there).
_CLOZE = {"}": "\\}", "#": "\\#", "~": "&#126;", "/": "&#47;", '"': "&#34;", "\\": "&#92;",
          "&": "&amp;", "=": "&#61;", "%": "&#37;", "{": "&#123;"}


def cloze_escape(text: str, *, html: bool = True) -> str:
    """Text for an answer or feedback inside a Cloze field.

    Moodle stores the text it reads there as HTML (multiple choice, feedback)
    after decoding it once, so ``html=True`` escapes the text for HTML and then
    once more: ``<b>`` is shown as ``<b>``.  ``html=False`` is for short answers,
    compared as plain text (``*``, their wildcard, gets a backslash).
    """
    text = _XML_INVALID.sub("\ufffd", str(text))
    stored = html_escape(plain_text(text), quote=False) if html else text.replace("*", "\\*")
    return "".join(_CLOZE.get(c, c) for c in stored)


def number(x: float) -> str:
    """A float as Moodle's NUMERICAL reads it (``-?digits[.digits][e±digits]``): Python's repr."""
    x = float(x)
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def tolerance(value: float) -> float:
    """The tolerance ``worksheet check`` allows a ``PLACES``-decimal answer to ``value``."""
    from ..parse.numbers import decimal_tolerance

    return float(decimal_tolerance(PLACES, abs(value)))


def numerical(weight: int, values: Sequence[float]) -> str:
    """``{weight:NUMERICAL:=v1:tol1~=v2:tol2}``: every value is right."""
    alts = {number(v): f"={number(v)}:{number(tolerance(v))}" for v in values}  # each value once
    return f"{{{weight}:NUMERICAL:{'~'.join(alts.values())}}}"


def multichoice(weight: int, choices: Sequence[str], right: int) -> str:
    """A drop-down over ``choices``; choice ``right`` (0-based) is correct."""
    alts = [("=" if k == right else "") + cloze_escape(c) for k, c in enumerate(choices)]
    return f"{{{weight}:MULTICHOICE:{'~'.join(alts)}}}"


def shortanswer(weight: int, answer: str) -> str:
    return f"{{{weight}:SHORTANSWER:={cloze_escape(answer, html=False)}}}"


def asked_cells(s: Step) -> int:
    """Entries a student types for a step (masked ones are given)."""
    if s.is_written:
        return 0
    return sum(1 for row in s.exact for x in row if not isinstance(x, NegInf))


def field_weights(p: Problem) -> dict[str, int]:
    """Weight of each field of each asked step: equal shares per step (module docstring)."""
    cells = {s.name: asked_cells(s) for s in p.printed_steps(False)}  # key-only steps are not asked
    cells = {k: n for k, n in cells.items() if n}
    if not cells:
        return {}
    lcm = math.lcm(*cells.values())
    if lcm * len(cells) <= MAX_TOTAL:
        return {k: lcm // n for k, n in cells.items()}
    top = 20 * max(cells.values())
    return {k: max(1, round(Fraction(top, n))) for k, n in cells.items()}


def label_choices(p: Problem, s: Step, label: str, index: float) -> tuple[str, ...] | None:
    """The labels a label-valued entry is chosen from: the column labels of the first
    quantity (input or step) listing ``label`` at position ``index`` (or the
    step's own ``choices``)."""
    if s.choices and index.is_integer() and 0 <= index < len(s.choices) and s.choices[int(index)] == label:
        return s.choices
    for q in (*p.inputs.values(), *p.steps):
        cols = q.cols or ()
        if q is not s and index.is_integer() and 0 <= index < len(cols) and cols[int(index)] == label:
            return cols
    return None


def category_path(bank: str, k: int) -> str:
    """``$course$/bank/Problem k``; a "/" inside a name is written "//" (Moodle's rule)."""
    return f"$course$/{bank.replace('/', '//')}/Problem {k}"


def question_name(prefix: str, title: str) -> str:
    """``prefix`` and ``title`` as a question name (plain text): the title's
    ``$...$`` formulas that pass the allow-list as ``\\( \\)``, all else guarded
    by :func:`plain_text`."""
    out = [plain_text(prefix)]
    for is_math, part in prose_parts(title):
        out.append(f"\\({part}\\)" if is_math else plain_text(part))
    return "".join(out)


def _xml_text(s: str) -> str:
    return _XML_INVALID.sub("\ufffd", s)


class MoodleRenderer(TemplateRenderer):
    """One XML file (role "sheet"): ``head`` opens ``<quiz>``, each document's
    ``body`` holds its problems' categories and questions, ``foot`` closes it."""

    name = "moodle"
    ext = "xml"
    env_options = dict(autoescape=True)

    def __init__(self, templates=None):
        super().__init__(templates)
        self.env.globals.update(cloze=self.cloze)

    # -- filters (HTML with TeX for MathJax) ----------------------------------
    def matrix(self, symbol: str, t: Table) -> Markup:
        """``symbol =`` beside its table (a paragraph of its own)."""
        return Markup('<table><tr><td style="vertical-align:middle">') + self.math(f"{symbol} =") \
            + Markup("</td><td>") + self.table(t, math=True) + Markup("</td></tr></table>")

    def table(self, t: Table, math: bool) -> Markup:
        def cell(c: str) -> Markup:
            if math:
                return self.math(c)
            return self.math(r"-\infty") if c == "-inf" else self.text(c)

        return self._grid(t, cell)

    def empty_grid(self, t: Table) -> Markup:
        return self._grid(t, lambda c: Markup("&nbsp;"))

    def _grid(self, t: Table, cell) -> Markup:
        """A ruled table with row and column headers (labels, or 1, 2, ...)."""
        head = [self.text(c) for c in t.cols] if t.cols else [str(j + 1) for j in range(t.m)]
        rows = [Markup('<table border="1" cellpadding="4" style="border-collapse:collapse;text-align:center">'),
                Markup("<tr><th></th>") + Markup("").join(Markup("<th>%s</th>") % h for h in head) + Markup("</tr>")]
        for i, row in enumerate(t.cells):
            label = self.text(t.rows[i]) if t.rows else str(i + 1)
            rows.append(Markup("<tr><th>%s</th>") % label
                        + Markup("").join(Markup("<td>") + cell(c) + Markup("</td>") for c in row) + Markup("</tr>"))
        rows.append(Markup("</table>"))
        return Markup("\n").join(rows)

    def math(self, latex: str) -> Markup:
        return Markup(no_field(_legacy(str(escape(r"\(" + str(latex) + r"\)")))))

    def display(self, latex: str) -> Markup:
        return self.math(latex)

    def text(self, s: str) -> Markup:
        return Markup(html_text(s))

    def prose(self, s: str) -> Markup:
        """Words with ``$maths$``: a formula off the allow-list is text (see prose_parts)."""
        return Markup(super().prose(s))

    # -- answer fields --------------------------------------------------------
    def cloze(self, p: Problem, s: Step, weight: int) -> Markup:
        """The step's answer grid: a Cloze field per asked entry, masked entries given."""
        n, m = s.shape

        def field(i: int, j: int) -> Markup:
            x, v = s.exact[i][j], float(s.value[i, j])
            if isinstance(x, NegInf):
                return self.math(r"-\infty")
            if isinstance(x, str):
                choices = label_choices(p, s, x, v)
                return Markup(multichoice(weight, choices, int(v)) if choices else shortanswer(weight, x))
            # the double nearest the exact value (a rounded step: the carried value),
            # never numpy's cross-check s.value: the same answer on every machine
            return Markup(numerical(weight, [to_float(x)]))

        cells = [[field(i, j) for j in range(m)] for i in range(n)]
        return self._grid(Table(cells, s.rows, s.cols), lambda c: c)

    # -- the file -------------------------------------------------------------
    def head(self, outlines: Sequence[Document], *, key: bool) -> str:
        return '<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n'

    def foot(self, outlines: Sequence[Document], *, key: bool) -> str:
        return "</quiz>\n"

    def body(self, doc: Document, index: int, count: int, *, key: bool = False,
             bank: str = "worksheet") -> str:
        """Document ``index`` of ``count``: per problem k, its category then its question."""
        out = []
        for k, p in enumerate(doc.problems, 1):
            cat = ET.Element("question", type="category")
            ET.SubElement(ET.SubElement(cat, "category"), "text").text = _xml_text(plain_text(category_path(bank, k)))
            out.append(cat)
            out.append(self.question(doc, p, k, bank))
        for el in out:
            ET.indent(el, "  ", level=1)
        return "".join("  " + ET.tostring(el, encoding="unicode") + "\n" for el in out)

    def question(self, doc: Document, p: Problem, k: int, bank: str) -> ET.Element:
        weights = field_weights(p)
        names = dict(doc=doc, p=p, k=k, weights=weights, places=PLACES,
                     masked=any(isinstance(x, NegInf) for s in p.steps for row in s.exact for x in row))
        q = ET.Element("question", type="cloze")
        variant = f" {doc.variant}" if doc.variant else ""
        ET.SubElement(ET.SubElement(q, "name"), "text").text = _xml_text(question_name(f"{bank}{variant} P{k}: ", p.title))
        for tag, template in (("questiontext", "question.html.j2"), ("generalfeedback", "feedback.html.j2")):
            html = self._run(template, names)
            ET.SubElement(ET.SubElement(q, tag, format="html"), "text").text = _xml_text(html)
        ET.SubElement(q, "penalty").text = PENALTY
        ET.SubElement(q, "hidden").text = "0"
        return q

    def _run(self, template: str, names: dict) -> str:
        """Render one of the question's templates; a failure of the template's
        own code (a lecturer's copy given with --templates) is one line naming
        the template and line (see TemplateRenderer.template_failure)."""
        tmpl = self._load(template)
        try:
            return tmpl.render(**names)
        except WorksheetError:
            raise
        except Exception as exc:  # noqa: BLE001 - the template's own code failed, or ours (re-raised)
            failure = self.template_failure(exc, template)
            if failure is None:
                raise
            raise failure from None

    def render(self, doc: Document, *, key: bool = False, bank: str = "worksheet") -> str:
        return self.render_many([doc], key=key, bank=bank)

    def render_many(self, docs: Sequence[Document], *, key: bool = False, bank: str = "worksheet") -> str:
        docs = list(docs)
        return (self.head(docs, key=key) + "".join(self.body(d, i, len(docs), bank=bank) for i, d in enumerate(docs))
                + self.foot(docs, key=key))


__all__ = ["MoodleRenderer", "cloze_escape", "no_field", "field_weights", "tolerance", "number",
           "category_path"]
