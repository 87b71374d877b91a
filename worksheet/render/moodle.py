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

* a number: ``{w:NUMERICAL:=value:tolerance}``; ``value`` is the float64
  nearest the entry's exact value (the JSON ``value``; for a rounded step the
  carried value) and ``tolerance`` the one ``worksheet check`` allows
  and the sheet prints, 0.001 (:func:`worksheet.parse.numbers.decimal_tolerance`,
  :mod:`worksheet.policy.pencil`).  A step whose
  key carries values rounded along a chain (``rounded``: ``value`` is the
  carried value) also accepts the unrounded chain's value (the JSON ``value``
  of that step), as ``check`` does: a second alternative ``~=unrounded:tolerance``;
  so does a hand-mode step whose rounding chain (:mod:`worksheet.policy.pencil`) gives
  another 4-place value than the exact one's rounding (both within 0.001);
  beside them, each named mistake that applies to the step (the JSON key's
  ``"mistakes"``, :func:`worksheet.render.json.step_mistakes`, computed once)
  adds the value it gives there as a 0% answer ``~%0%w:tol#hint`` whose
  feedback is the student's hint (:attr:`worksheet.kinds.mistakes.Mistake.hint`,
  maths in ``\( \)``); a value a right answer accepts is left out, and
  mistakes within the tolerance of one another share one answer naming each
  (:func:`worksheet.render.cloze.mistake_groups`);
* a masked entry (-oo) is printed in the table, not asked;
* a label (the ``prediction`` of next-token): a drop-down
  ``{w:MULTICHOICE:...}`` over the column labels of the first quantity that
  lists the label at the position of the step's value (the vocabulary, in
  order), so that the right choice's position is the JSON ``value``; if no
  quantity lists it, or it lists fewer than two choices (Moodle refuses such
  a drop-down, and with it the whole import), a ``SHORTANSWER``
  (case-insensitive, as ``check``);
* a written step (words) has no field: the question says that a person marks
  it, and the feedback holds the model answer.

Weights: Moodle's weights are whole numbers and a question's mark is their
sum, stored (with every subquestion's) as NUMBER(12,7), so below 100,000.
Every asked step gets its share of the problem's points: equal shares, or
as an exam spec's ``step_points``/``step_weights`` split them (see
:mod:`worksheet.solution.points`); a step with n asked entries gives each field its
share / n, scaled to the smallest whole numbers.  Should that make the
question's total exceed :data:`MAX_TOTAL`, the weights are rounded down
from shares of a total of MAX_TOTAL (at least 1 each), so a step's total is
within n / MAX_TOTAL of its share.  Written steps are marked by hand and
weigh nothing here.  The quiz slot's mark sets the question's points in the
quiz.

A problem that is only a question in words (an exam spec's section with a
``question`` and no ``kind``) has no field to fill: it is an essay question
(``type="essay"``, an editor for the answer, the model answer as the grader's
information and the general feedback, its points as the default mark).

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
import xml.etree.ElementTree as ET
from fractions import Fraction
from typing import Sequence

from markupsafe import Markup, escape

from ..solution.document import Document
from ..policy.errors import WorksheetError
from ..exact import NegInf, to_float
from ..solution.maths import CODE_CLOSE, CODE_OPEN, Code, Text, as_latex, as_prose
from ..solution.problem import MathLabel, Problem, Step
from .artefacts import Artefact
from .base import Table, TemplateRenderer
from .cloze import CLOZE_TYPES, WORD_JOINER, cloze_escape, html_text, no_field, no_legacy, plain_text  # noqa: F401 (names of this module too)
from .cloze import PLACES, choice_field, cloze_html, mistake_groups, number, numerical, tolerance  # noqa: F401 (names of this module too)
from .cloze import xml_text as _xml_text
from .json import step_mistakes, unrounded
from ..kinds.mistakes import CATALOGUE

MAX_TOTAL = 10_000  # largest question mark (sum of weights) with exactly equal shares
ROUNDED_TOTAL = 99_000  # the question mark aimed at when exact shares would exceed MAX_TOTAL
MOODLE_LIMIT = 99_999  # below what Moodle stores for a mark (NUMBER(12,7): 5 digits before the point)
PENALTY = "0.3333333"  # Moodle's default penalty per try (interactive quizzes)


def asked_cells(s: Step) -> int:
    """Entries a student types for a step (masked ones are given)."""
    if s.is_written:
        return 0
    return sum(1 for row in s.exact for x in row if not isinstance(x, NegInf))


def step_shares(p: Problem) -> dict[str, Fraction]:
    """Each asked step's share of the question's marks: its points (an exam spec's,
    split as :func:`worksheet.solution.points.split_points` splits them) or, without points,
    equal shares.  Written steps are marked by hand, so they are not among them."""
    cells = {s.name: asked_cells(s) for s in p.printed_steps(False)}  # key-only steps are not asked
    asked = [k for k, n in cells.items() if n]
    points = p.points_of_steps() if p.points is not None else {}
    shares = {k: Fraction(points[k]) if k in points else Fraction(1) for k in asked}
    if shares and not any(shares.values()):  # every asked step has 0 points: equal shares still
        shares = {k: Fraction(1) for k in asked}
    return shares


def field_weights(p: Problem) -> dict[str, int]:
    """Weight of each field of each asked step, so that a step's fields together weigh
    its share (:func:`step_shares`): exactly when the question's total stays within
    :data:`MAX_TOTAL`, else the nearest whole numbers (at least 1) to shares of a
    total of :data:`ROUNDED_TOTAL`, within what Moodle stores (NUMBER(12,7): below 100,000)."""
    cells = {s.name: asked_cells(s) for s in p.printed_steps(False)}
    shares = step_shares(p)
    if not shares:
        return {}
    per_field = {k: r / cells[k] for k, r in shares.items()}  # a field's share, exactly
    scale = math.lcm(*(x.denominator for x in per_field.values() if x))
    exact = {k: int(x * scale) for k, x in per_field.items()}
    if all(exact.values()) and sum(w * cells[k] for k, w in exact.items()) <= MAX_TOTAL:
        g = math.gcd(*exact.values())
        return {k: w // g for k, w in exact.items()}
    total = sum(shares.values())
    budget = Fraction(ROUNDED_TOTAL)
    while True:  # nearest whole numbers to shares of the budget; a smaller budget if they overshoot
        weights = {k: max(1, round(budget * x / total)) for k, x in per_field.items()}
        if sum(w * cells[k] for k, w in weights.items()) <= MOODLE_LIMIT or budget < 1:
            return weights
        budget *= Fraction(99, 100)


def question_mark(p: Problem) -> int:
    """The question's mark as Moodle computes it on import: the sum of its fields' weights."""
    weights = field_weights(p)
    return sum(weights[s.name] * asked_cells(s) for s in p.printed_steps(False) if s.name in weights)


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


def essay_grade(points) -> str:
    """An essay question's default mark: the problem's points (rounded to 7 places, as
    Moodle stores marks), or 1 without points or beyond what Moodle stores."""
    if points is None:
        return "1"
    from ..solution.points import as_fraction, points_text

    x = as_fraction(points)
    return points_text(x, places=7) if 0 < x <= MOODLE_LIMIT else "1"


def category_path(bank: str, k: int) -> str:
    """``$course$/bank/Problem k``; a "/" inside a name is written "//" (Moodle's rule)."""
    return f"$course$/{bank.replace('/', '//')}/Problem {k}"


def question_name(prefix: str, title: str) -> str:
    """``prefix`` and ``title`` as a question name (plain text): the title's
    ``$...$`` formulas that pass the allow-list as ``\\( \\)``, all else guarded
    by :func:`plain_text`."""
    out = [plain_text(prefix)]
    for part in as_prose(title).parts:
        kind = type(part)
        if kind is Text:
            out.append(plain_text(part.text))
        elif kind is Code:  # (as the title's text has it: a question name has no code)
            out.append(plain_text(CODE_OPEN + part.text + CODE_CLOSE))
        else:
            out.append(f"\\({as_latex(part)}\\)")
    return "".join(out)


class MoodleRenderer(TemplateRenderer):
    """One XML file (role "bank"): ``head`` opens ``<quiz>``, each document's
    ``body`` holds its problems' categories and questions, ``foot`` closes it."""

    name = "moodle"
    ext = "xml"
    student_rank = 4
    env_options = dict(autoescape=True)

    def __init__(self, templates=None):
        super().__init__(templates)
        self.env.globals.update(cloze=self.cloze)
        self._per_problem: dict[tuple[int, str], tuple[Problem, dict]] = {}  # (not the base's _chains)
        self._hints: dict[str, str] = {}

    def _unrounded(self, p: Problem) -> dict:
        """The unrounded chain of a problem that carries rounded steps (the JSON
        ``value`` of those, :func:`worksheet.render.json.unrounded`), once per problem."""
        return self._once(p, "unrounded", unrounded)

    def _mistakes(self, p: Problem) -> dict:
        """The named mistakes of each step, as the JSON key records them
        (:func:`worksheet.render.json.step_mistakes`: computed once per problem)."""
        return step_mistakes(p)

    def _hint(self, code: str) -> str:
        """A mistake's hint for the student as HTML, maths in ``\\( \\)`` (once per code)."""
        got = self._hints.get(code)
        if got is None:
            got = self._hints[code] = str(self.prose(CATALOGUE[code].hint))
        return got

    def _once(self, p: Problem, what: str, compute) -> dict:
        got = self._per_problem.get((id(p), what))
        if got is None or got[0] is not p:
            got = self._per_problem[(id(p), what)] = (p, compute(p))
        return got[1]

    # -- filters (HTML with TeX for MathJax) ----------------------------------
    def matrix(self, symbol: str, t: Table) -> Markup:
        """``symbol =`` beside its table (a paragraph of its own)."""
        return (
            Markup('<table><tr><td style="vertical-align:middle">')
            + self.math(f"{symbol} =")
            + Markup("</td><td>")
            + self.table(t, math=True)
            + Markup("</td></tr></table>")
        )

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
        head = (
            [self.math(c) if isinstance(c, MathLabel) else self.text(c) for c in t.cols]
            if t.cols
            else [str(j + 1) for j in range(t.m)]
        )
        rows = [
            Markup('<table border="1" cellpadding="4" style="border-collapse:collapse;text-align:center">'),
            Markup("<tr><th></th>") + Markup("").join(Markup("<th>%s</th>") % h for h in head) + Markup("</tr>"),
        ]
        for i, row in enumerate(t.cells):
            label = self.text(t.rows[i]) if t.rows else str(i + 1)
            rows.append(
                Markup("<tr><th>%s</th>") % label
                + Markup("").join(Markup("<td>") + cell(c) + Markup("</td>") for c in row)
                + Markup("</tr>")
            )
        rows.append(Markup("</table>"))
        return Markup("\n").join(rows)

    def math(self, latex: str) -> Markup:
        return Markup(no_field(no_legacy(str(escape(r"\(" + as_latex(latex) + r"\)")))))

    def display(self, latex: str) -> Markup:
        return self.math(latex)

    def text(self, s: str) -> Markup:
        return Markup(html_text(s))

    def code(self, word: str) -> Markup:
        return Markup("<code>") + self.text(word) + Markup("</code>")

    def prose(self, s, after: str = "") -> Markup:
        """Prose: see :meth:`TemplateRenderer.prose` (a formula off the allow-list is words)."""
        return Markup(super().prose(s, after))

    # -- answer fields --------------------------------------------------------
    def cloze(self, p: Problem, s: Step, weight: int) -> Markup:
        """The step's answer grid: a Cloze field per asked entry, masked entries given."""
        n, m = s.shape
        unrounded = self._unrounded(p).get(s.name) if s.rounded else None

        def hint_of(codes: list[str]) -> str:  # one answer names every mistake that gives its value
            return " Or: ".join(self._hint(c) for c in codes)

        def field(i: int, j: int) -> Markup:
            x, v = s.exact[i][j], float(s.value[i, j])
            if isinstance(x, NegInf):
                return self.math(r"-\infty")
            if isinstance(x, str):
                return Markup(choice_field(weight, label_choices(p, s, x, v), int(v), x))
            # the double nearest the exact value (a rounded step: the carried value),
            # never numpy's cross-check s.value: the same answer on every machine
            values = [to_float(x)]
            if s.chain is not None:  # hand mode: the value the rounding chain gives (worksheet.policy.pencil)
                values.append(to_float(s.chain[i][j]))
            if unrounded is not None and math.isfinite(unrounded[i, j]):  # a carried step: the unrounded chain too
                values.append(float(unrounded[i, j]))
            values = [values[0]] + [w for w in values[1:] if abs(w - values[0]) > 1e-9]
            wrong = {c: float(a[i, j]) for c, a in named.items()}
            return Markup(
                numerical(weight, values, [(w, hint_of(codes)) for w, codes in mistake_groups(values, wrong)])
            )

        found = self._mistakes(p).get(s.name)
        named = found.values if found is not None else {}

        cells = [[field(i, j) for j in range(m)] for i in range(n)]
        return self._grid(Table(cells, s.rows, s.cols), lambda c: c)

    # -- the file -------------------------------------------------------------
    def artefacts(self) -> tuple[Artefact, ...]:
        return (Artefact("bank", "-moodle.xml"),)  # the questions, with the worked key as their feedback

    def part(self, doc, index, count, role, *, variants=True, bank="worksheet") -> str:
        return self.body(doc, index, count, bank=bank)  # its categories are named after the build (bank)

    def head(self, outlines: Sequence[Document], *, key: bool) -> str:
        return '<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n'

    def foot(self, outlines: Sequence[Document], *, key: bool) -> str:
        return "</quiz>\n"

    def body(self, doc: Document, index: int, count: int, *, key: bool = False, bank: str = "worksheet") -> str:
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
        from ..kinds import conventions
        from ..solution.points import points_text

        weights = field_weights(p)
        essay = not weights and bool(p.steps) and all(s.is_written for s in p.steps)  # only words
        points = {name: points_text(x) for name, x in p.points_of_steps().items()} if p.points is not None else {}
        names = dict(
            doc=doc,
            p=p,
            k=k,
            weights=weights,
            places=PLACES,
            step_points=points,
            essay=essay,
            equal=not (p.step_points or p.step_weights),
            conventions=conventions([p]),  # this question's own, not the sheet's
            masked=any(isinstance(x, NegInf) for s in p.steps for row in s.exact for x in row),
        )
        q = ET.Element("question", type="essay" if essay else "cloze")
        variant = f" {doc.variant}" if doc.variant else ""
        ET.SubElement(ET.SubElement(q, "name"), "text").text = _xml_text(
            question_name(f"{bank}{variant} P{k}: ", p.title)
        )
        texts = {}
        for tag, template in (("questiontext", "question.html.j2"), ("generalfeedback", "feedback.html.j2")):
            texts[tag] = _xml_text(self._run(template, names))
            ET.SubElement(ET.SubElement(q, tag, format="html"), "text").text = texts[tag]
        if essay:  # a question in words only: Moodle's essay type, marked by the lecturer
            ET.SubElement(q, "defaultgrade").text = essay_grade(p.points)
            ET.SubElement(q, "penalty").text = "0"
            ET.SubElement(q, "hidden").text = "0"
            for tag, text in (
                ("responseformat", "editor"),
                ("responserequired", "1"),
                ("responsefieldlines", str(max(5, 2 * sum(s.lines for s in p.steps)))),
                ("attachments", "0"),
            ):
                ET.SubElement(q, tag).text = text
            ET.SubElement(ET.SubElement(q, "graderinfo", format="html"), "text").text = texts["generalfeedback"]
            ET.SubElement(ET.SubElement(q, "responsetemplate", format="html"), "text").text = ""
            return q
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
        return self.join(docs, [self.part(d, i, len(docs), "bank", bank=bank) for i, d in enumerate(docs)], "bank")


__all__ = [
    "MoodleRenderer",
    "cloze_escape",
    "no_field",
    "field_weights",
    "step_shares",
    "question_mark",
    "tolerance",
    "number",
    "category_path",
]
