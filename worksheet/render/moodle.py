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
  and the sheet prints, 0.001 (:func:`worksheet.check.decimal_tolerance`,
  :mod:`worksheet.pencil`).  A step whose
  key carries values rounded along a chain (``rounded``) also accepts the
  rounded value, as ``check`` does: a second alternative ``~=rounded:tolerance``;
  so does a hand-mode step whose rounding chain (:mod:`worksheet.pencil`) gives
  another 4-place value than the exact one's rounding (both within 0.001);
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
1.0 forbids become U+FFFD).  In the question text, user text never forms the
start of a field (``{1:NUMERICAL:``): such a ``{`` is written ``&#123;``.
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

from ..document import Document
from ..exact import NegInf, to_float
from ..model import Problem, Step
from .base import Table, TemplateRenderer

PLACES = 4  # the decimals a student types; the tolerance is check's for this many
MAX_TOTAL = 10_000  # largest question mark (sum of weights) with exactly equal shares
PENALTY = "0.3333333"  # Moodle's default penalty per try (interactive quizzes)

CLOZE_TYPES = ("NUMERICAL", "NM", "MULTICHOICE", "MC", "MULTICHOICE_V", "MCV", "MULTICHOICE_H", "MCH",
               "SHORTANSWER", "SA", "MW", "SHORTANSWER_C", "SAC", "MWC", "MULTICHOICE_S", "MCS",
               "MULTICHOICE_VS", "MCVS", "MULTICHOICE_HS", "MCHS", "MULTIRESPONSE", "MR",
               "MULTIRESPONSE_H", "MRH", "MULTIRESPONSE_S", "MRS", "MULTIRESPONSE_HS", "MRHS")
# where Moodle would see the start of a field: "{", digits, ":", a type, ":"
_FIELD_START = re.compile(r"\{(?=[0-9]*:(?:%s):)" % "|".join(CLOZE_TYPES))
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def no_field(html: str) -> str:
    """HTML in which no ``{`` starts a Cloze field (it becomes ``&#123;``, which
    browsers and MathJax read as ``{``)."""
    return _FIELD_START.sub("&#123;", html)


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
    stored = html_escape(text, quote=False) if html else text.replace("*", "\\*")
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
    """The tolerance ``worksheet check`` allows an answer to ``value`` (the one the sheet prints)."""
    from ..check import decimal_tolerance

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
        return Markup(no_field(str(escape(r"\(" + str(latex) + r"\)"))))

    def display(self, latex: str) -> Markup:
        return self.math(latex)

    def text(self, s: str) -> Markup:
        return Markup(no_field(str(escape(str(s)))))

    def prose(self, s: str) -> Markup:
        parts = str(s).split("$")
        return Markup("").join(self.math(p) if i % 2 else self.text(p) for i, p in enumerate(parts))

    # -- answer fields --------------------------------------------------------
    def cloze(self, p: Problem, s: Step, weight: int) -> Markup:
        """The step's answer grid: a Cloze field per asked entry, masked entries given."""
        n, m = s.shape
        alt = s.rounded  # a rounded chain: its carried (rounded) value is right too

        def field(i: int, j: int) -> Markup:
            x, v = s.exact[i][j], float(s.value[i, j])
            if isinstance(x, NegInf):
                return self.math(r"-\infty")
            if isinstance(x, str):
                choices = label_choices(p, s, x, v)
                return Markup(multichoice(weight, choices, int(v)) if choices else shortanswer(weight, x))
            values = [v]
            if alt:
                values.append(to_float(x))
            if s.chain is not None:  # hand mode: the value the rounding chain gives (worksheet.pencil)
                values.append(to_float(s.chain[i][j]))
            values = [values[0]] + [w for w in values[1:] if abs(w - values[0]) > 1e-9]
            return Markup(numerical(weight, values))

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
            ET.SubElement(ET.SubElement(cat, "category"), "text").text = _xml_text(category_path(bank, k))
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
        ET.SubElement(ET.SubElement(q, "name"), "text").text = _xml_text(f"{bank}{variant} P{k}: {p.title}")
        for tag, template in (("questiontext", "question.html.j2"), ("generalfeedback", "feedback.html.j2")):
            html = self._load(template).render(**names)
            ET.SubElement(ET.SubElement(q, tag, format="html"), "text").text = _xml_text(html)
        ET.SubElement(q, "penalty").text = PENALTY
        ET.SubElement(q, "hidden").text = "0"
        return q

    def render(self, doc: Document, *, key: bool = False, bank: str = "worksheet") -> str:
        return self.render_many([doc], key=key, bank=bank)

    def render_many(self, docs: Sequence[Document], *, key: bool = False, bank: str = "worksheet") -> str:
        docs = list(docs)
        return (self.head(docs, key=key) + "".join(self.body(d, i, len(docs), bank=bank) for i, d in enumerate(docs))
                + self.foot(docs, key=key))


__all__ = ["MoodleRenderer", "cloze_escape", "no_field", "field_weights", "tolerance", "number",
           "category_path"]
