r"""One problem as a QTI 2.1 ``assessmentItem`` (see :mod:`worksheet.render.qti`).

The item body is XHTML of QTI's content model with MathML: the problem's
title and words, the given matrices (a table of MathML entries, the exact
values as the HTML page prints them, :mod:`worksheet.exact.mathml`), and per
step its title, its formula (MathML from the HTML renderer's converter,
:func:`worksheet.render.formulas.formula_inner`) and a grid of answer cells:

* a number: a ``textEntryInteraction`` whose response is a single ``float``;
  a masked entry (-oo) is printed, not asked;
* a label (``prediction``): an ``inlineChoiceInteraction`` over the labels
  the JSON ``value`` indexes (:func:`worksheet.render.moodle.label_choices`),
  or a ``textEntryInteraction`` of a ``string`` compared without case;
* a written step: an ``extendedTextInteraction`` a person marks (no score here).

Response processing: a cell is right when ``equal`` (``toleranceMode="absolute"``)
holds within the tolerance ``worksheet check`` allows and the sheet prints
(:func:`worksheet.render.moodle.tolerance`) for one of its right values (the
nearest double to the exact value; a hand-mode rounding chain's; a carried
step's unrounded value), as the Moodle export accepts them.  Each cell adds
its share to its step's outcome ``SCORE_Sk`` (a step's share: as Moodle's,
:func:`worksheet.render.moodle.step_shares`, split equally over its cells);
``SCORE`` is their sum and ``MAXSCORE`` the problem's.  A step whose every
cell equals the value a named mistake gives (and not the right one) adds that
mistake's identifier to ``FEEDBACK``, which shows its ``modalFeedback``: the
mistake's sentence, typeset.  Two mistakes with the same values share one
feedback; a mistake within tolerance of the right value everywhere is left out.

Every decimal written is the double nearest an exact or 60-digit value
(Python's shortest repr of it, :func:`worksheet.render.moodle.number`): the same
bytes on every machine.  User text (titles, labels, words) is element text,
escaped by the XML writer, never markup; XML-invalid characters become U+FFFD.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

from ..exact import NegInf, to_float
from ..solution.maths import Code, Text, as_prose
from ..solution.problem import MathLabel, Problem, Step
from .cloze import xml_text
from .formulas import formula_inner
from .html import exact_cell, given_cell
from .moodle import PLACES, label_choices, number, step_shares, tolerance

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
MATHML = "http://www.w3.org/1998/Math/MathML"
QTI_XSD = "http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1.xsd"


# ---------------------------------------------------------------- the mistakes
def mistake_values(p: Problem) -> dict[str, dict[str, np.ndarray]]:
    """``{step: {code: float64 array}}``: the value each named mistake that applies
    to a step gives there (NaN where it gives -oo).

    The one source the JSON key's ``"mistakes"`` and Moodle's 0% answers read too:
    :func:`worksheet.kinds.mistake_values.of_problem` (the rules ``check`` uses, at
    60 digits, each float rounded once from that), computed once per problem."""
    from ..kinds.mistake_values import of_problem

    return {
        name: {code: np.where(np.isinf(v), np.nan, v) for code, v in sm.values.items()}
        for name, sm in of_problem(p).items()
    }


# ---------------------------------------------------------------- XML helpers
def el(parent: ET.Element | None, tag: str, text: str | None = None, **attrs) -> ET.Element:
    """An element; its text and attributes are text (XML-invalid characters become U+FFFD)."""
    attrs = {k: xml_text(str(v)) for k, v in attrs.items()}
    e = ET.Element(tag, attrs) if parent is None else ET.SubElement(parent, tag, attrs)
    if text is not None:
        e.text = xml_text(str(text))
    return e


def add_text(parent: ET.Element, text: str) -> None:
    """Append ``text`` to ``parent`` after its last child (XML escapes it)."""
    text = xml_text(str(text))
    if len(parent):
        parent[-1].tail = (parent[-1].tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def put_math(parent: ET.Element, inner: str) -> ET.Element:
    """A MathML ``<math>`` (the inside given as MathML text) under ``parent``."""
    m = ET.fromstring(f'<math xmlns="{MATHML}">{inner}</math>')
    e = ET.SubElement(parent, "math", xmlns=MATHML)
    e.text = m.text
    for child in m:
        e.append(_plain(child))
    return e


# MathML 3 attributes the HTML page uses that QTI 2.1's MathML 2 has not: left out (a
# subscript of a subscript sits a little lower in a browser; nothing else changes)
_MATHML3 = {"mpadded": ("voffset",), "mo": ("scriptlevel",)}


def _plain(e: ET.Element) -> ET.Element:
    """``e`` with its tags out of the MathML namespace (the ``<math>`` declares it),
    in MathML 2 (see _MATHML3)."""
    e.tag = e.tag.rpartition("}")[2]
    for name in _MATHML3.get(e.tag, ()):
        e.attrib.pop(name, None)
    for child in e:
        _plain(child)
    return e


def prose(parent: ET.Element, s) -> None:
    """Prose (:class:`~worksheet.solution.maths.nodes.Prose`; a string is read first):
    words as text, a word of code in ``<code>``, each formula as MathML."""
    for part in as_prose(s).parts:
        kind = type(part)
        if kind is Text:
            add_text(parent, part.text)
        elif kind is Code:
            if part.text:
                el(parent, "code", part.text)
        else:
            put_math(parent, formula_inner(part))


def label(parent: ET.Element, s: str) -> None:
    if isinstance(s, MathLabel):
        put_math(parent, formula_inner(s))
    else:
        add_text(parent, s)


def grid(parent: ET.Element, q, cell) -> ET.Element:
    """A table of ``q``'s entries with its row and column labels (or numbers);
    ``cell(td, i, j)`` fills an entry."""
    n, m = q.shape
    table = el(parent, "table")
    head = el(el(table, "thead"), "tr")
    el(head, "th")
    for j in range(m):
        label(el(head, "th"), q.cols[j] if q.cols else str(j + 1))
    body = el(table, "tbody")
    for i in range(n):
        tr = el(body, "tr")
        label(el(tr, "th"), q.rows[i] if q.rows else str(i + 1))
        for j in range(m):
            cell(el(tr, "td"), i, j)
    return table


_INLINE = {"p", "h4", "td", "th", "math", "strong", "em", "code"}  # their text and children are the content


def indent(e: ET.Element, level: int = 0) -> None:
    """Indent the structure (declarations, processing, tables), never inside
    text: a paragraph, a heading, a cell and a formula are written as they are."""
    if len(e) and e.tag not in _INLINE:
        pad = "\n" + "  " * (level + 1)
        e.text = pad
        for child in e:
            indent(child, level + 1)
            child.tail = pad
        e[-1].tail = "\n" + "  " * level


def document(root: ET.Element) -> str:
    """An XML document: declaration, ``root`` indented (see :func:`indent`), newline."""
    indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------- answers
def right_values(p: Problem, s: Step, i: int, j: int, unrounded) -> list[float]:
    """Every value a numeric cell accepts (as the Moodle export): the double nearest the
    exact value, the rounding chain's, a carried step's unrounded value."""
    values = [to_float(s.exact[i][j])]
    if s.chain is not None:
        values.append(to_float(s.chain[i][j]))
    if unrounded is not None and math.isfinite(unrounded[i, j]):
        values.append(float(unrounded[i, j]))
    return [values[0]] + [w for w in dict.fromkeys(values[1:]) if abs(w - values[0]) > 1e-9]


def equal(parent: ET.Element, response: str, value: float) -> ET.Element:
    """``response`` equals ``value`` within check's tolerance (absolute)."""
    tol = number(tolerance(value))
    e = el(parent, "equal", toleranceMode="absolute", tolerance=f"{tol} {tol}")
    el(e, "variable", identifier=response)
    el(e, "baseValue", number(value), baseType="float")
    return e


def any_of(parent: ET.Element, tests: list) -> ET.Element:
    """``or`` of the tests (each ``make(parent)``), or the one test alone."""
    if len(tests) == 1:
        return tests[0](parent)
    e = el(parent, "or")
    for make in tests:
        make(e)
    return e


def shares(p: Problem) -> dict[str, float]:
    """Each asked step's share of the item's score (Moodle's shares, as floats)."""
    return {k: float(x) for k, x in step_shares(p).items()}


def feedback_groups(s: Step, values: dict[str, np.ndarray], asked: list, right: dict) -> list[tuple[list, np.ndarray]]:
    """The mistakes a step's answers can show: ``[(codes, values)]``, those that give
    the same values together; a mistake that gives -oo or NaN in an asked cell,
    or the right value (within tolerance) in every asked cell, is left out."""
    groups: dict[tuple, tuple[list, np.ndarray]] = {}
    for code, v in values.items():
        cells = [float(v[i, j]) for i, j in asked]
        if not all(math.isfinite(x) for x in cells):
            continue
        if all(any(abs(x - r) <= tolerance(r) for r in right[i, j]) for x, (i, j) in zip(cells, asked)):
            continue
        key = tuple(number(x) for x in cells)
        if key in groups:
            groups[key][0].append(code)
        else:
            groups[key] = ([code], v)
    return list(groups.values())


# ---------------------------------------------------------------- the item
def item(doc, p: Problem, k: int, ident: str, title: str) -> str:
    """Problem ``p`` (number ``k`` of ``doc``) as an ``assessmentItem`` document."""
    from .json import unrounded

    attrs = {"xmlns": QTI, "xmlns:xsi": XSI, "xsi:schemaLocation": f"{QTI} {QTI_XSD}"}
    root = el(None, "assessmentItem", **attrs, identifier=ident, title=title, adaptive="false", timeDependent="false")
    steps = [(n, s) for n, s in enumerate(p.printed_steps(False), 1)]
    share = step_shares(p)
    chains = unrounded(p) if any(s.rounded for _, s in steps) else {}
    mistakes = mistake_values(p)
    asked = {
        n: [(i, j) for i, row in enumerate(s.exact) for j, x in enumerate(row) if not isinstance(x, NegInf)]
        for n, s in steps
    }
    right = {
        n: {
            (i, j): right_values(p, s, i, j, chains.get(s.name) if s.rounded else None)
            for i, j in asked[n]
            if not isinstance(s.exact[i][j], str)
        }
        for n, s in steps
    }
    groups = {
        n: feedback_groups(s, mistakes.get(s.name, {}), asked[n], right[n])
        for n, s in steps
        if s.name in share and right[n] and len(right[n]) == len(asked[n])
    }
    _declarations(root, p, steps, asked, right, share, groups)
    _body(el(root, "itemBody"), doc, p, k, steps, asked, share)
    _processing(el(root, "responseProcessing"), p, steps, asked, right, share, groups)
    for n, found in groups.items():
        for t, (codes, _) in enumerate(found, 1):
            _feedback(root, f"M_S{n}_{t}", n, codes)
    return document(root)


def _declarations(root, p: Problem, steps, asked, right, share, groups) -> None:
    for n, s in steps:
        if s.is_written:
            el(root, "responseDeclaration", identifier=f"R_S{n}", cardinality="single", baseType="string")
            continue
        for i, j in asked[n]:
            x = s.exact[i][j]
            if isinstance(x, str):
                choices = label_choices(p, s, x, float(s.value[i, j]))
                base, answer = ("identifier", f"C{int(s.value[i, j]) + 1}") if choices else ("string", x)
            else:
                base, answer = "float", number(right[n][i, j][0])
            d = el(
                root, "responseDeclaration", identifier=f"R_S{n}_{i + 1}_{j + 1}", cardinality="single", baseType=base
            )
            el(el(d, "correctResponse"), "value", answer)
    total = float(sum(share.values()))
    for ident, value in (("SCORE", 0.0), ("MAXSCORE", total)):
        o = el(root, "outcomeDeclaration", identifier=ident, cardinality="single", baseType="float")
        el(el(o, "defaultValue"), "value", number(value))
    if any(groups.values()):
        el(root, "outcomeDeclaration", identifier="FEEDBACK", cardinality="multiple", baseType="identifier")
    for n, s in steps:
        if s.name in share:
            o = el(root, "outcomeDeclaration", identifier=f"SCORE_S{n}", cardinality="single", baseType="float")
            el(el(o, "defaultValue"), "value", "0")


def _body(body, doc, p: Problem, k: int, steps, asked, share) -> None:
    from ..kinds import conventions
    from ..solution.points import points_text

    head = el(el(body, "p"), "strong")
    add_text(head, f"Problem {k}: ")
    prose(head, p.title)
    if p.points is not None:
        add_text(body[-1], f" ({points_text(p.points)} points)")
    if doc.variant:
        add_text(body[-1], f" \u2014 variant {doc.variant}")
    if p.intro:
        prose(el(body, "p"), p.intro)
    said = conventions([p])
    if said:
        para = el(body, "p")
        el(para, "em", "Conventions:")
        for c in said:
            add_text(para, " ")
            prose(para, c)
    for q in p.inputs.values():
        put_math(el(body, "p"), formula_inner(q.symbol) + "<mo>=</mo>")
        grid(body, q, lambda td, i, j, q=q: put_math(td, given_cell(q.exact[i][j])))
    for aid in p.aids:
        para = el(body, "p")
        prose(para, aid.title)
        add_text(para, ": ")
        for t, (arg, val) in enumerate(aid.entries):
            put_math(para, formula_inner(f"{arg} \\approx {val}"))
            add_text(para, ", " if t < len(aid.entries) - 1 else ".")
    if share:
        said = el(el(body, "p"), "em")
        prose(said, doc.rounding)
        masked = any(isinstance(x, NegInf) for _, s in steps for row in s.exact for x in row)
        add_text(said, f" Type every entry as a decimal to {PLACES} places (or a whole number)")
        add_text(said, "; masked entries (\u2212\u221e) are given." if masked else ".")
    points = {k: points_text(x) for k, x in p.points_of_steps().items()} if p.points is not None else {}
    for n, s in steps:
        el(body, "h4", f"{n}. ")
        prose(body[-1], s.title)
        if s.name in points:
            add_text(body[-1], f" ({points[s.name]} point{'' if points[s.name] == '1' else 's'})")
        if s.formula:
            put_math(el(body, "p"), formula_inner(s.formula))
        if s.is_written:
            el(body, "p", "Answer in words; your lecturer marks this step by hand.")
            el(body, "extendedTextInteraction", responseIdentifier=f"R_S{n}", expectedLines=str(max(3, s.lines)))
        elif s.name in share:
            grid(body, s, lambda td, i, j, n=n, s=s: _cell(td, p, n, s, i, j))


def _cell(td, p: Problem, n: int, s: Step, i: int, j: int) -> None:
    x, ident = s.exact[i][j], f"R_S{n}_{i + 1}_{j + 1}"
    if isinstance(x, NegInf):
        put_math(td, exact_cell(x))
    elif isinstance(x, str) and (choices := label_choices(p, s, x, float(s.value[i, j]))):
        box = el(td, "inlineChoiceInteraction", responseIdentifier=ident, shuffle="false")
        for c, text in enumerate(choices, 1):
            el(box, "inlineChoice", text, identifier=f"C{c}")
    else:
        el(td, "textEntryInteraction", responseIdentifier=ident, expectedLength="8")


def _add(parent, outcome: str, value: str, base: str = "float", op: str = "sum") -> None:
    """``outcome`` := ``op``(outcome, value)."""
    s = el(parent, "setOutcomeValue", identifier=outcome)
    o = el(s, op)
    el(o, "variable", identifier=outcome)
    el(o, "baseValue", value, baseType=base)


def _processing(rp, p: Problem, steps, asked, right, share, groups) -> None:
    for n, s in steps:
        if s.name not in share:
            continue
        weight = number(float(share[s.name] / len(asked[n])))
        for i, j in asked[n]:
            ident = f"R_S{n}_{i + 1}_{j + 1}"
            test = el(el(rp, "responseCondition"), "responseIf")
            x = s.exact[i][j]
            if (i, j) in right[n]:
                any_of(test, [lambda e, v=v: equal(e, ident, v) for v in right[n][i, j]])
            elif label_choices(p, s, x, float(s.value[i, j])):  # a drop-down: its right choice
                m = el(test, "match")
                el(m, "variable", identifier=ident)
                el(m, "correct", identifier=ident)
            else:  # a label typed: compared without case, as check does
                m = el(test, "stringMatch", caseSensitive="false")
                el(m, "variable", identifier=ident)
                el(m, "baseValue", x, baseType="string")
            _add(test, f"SCORE_S{n}", weight)
        for t, (codes, values) in enumerate(groups.get(n, []), 1):
            test = el(el(rp, "responseCondition"), "responseIf")
            cells = [lambda e, i=i, j=j: equal(e, f"R_S{n}_{i + 1}_{j + 1}", float(values[i, j])) for i, j in asked[n]]
            if len(cells) == 1:
                cells[0](test)
            else:
                both = el(test, "and")
                for make in cells:
                    make(both)
            _add(test, "FEEDBACK", f"M_S{n}_{t}", "identifier", "multiple")
    scored = [n for n, s in steps if s.name in share]
    if scored:
        total = el(el(rp, "setOutcomeValue", identifier="SCORE"), "sum")
        for n in scored:
            el(total, "variable", identifier=f"SCORE_S{n}")


def _feedback(root, ident: str, n: int, codes: list) -> None:
    from ..kinds.mistakes import CATALOGUE

    fb = el(
        root,
        "modalFeedback",
        outcomeIdentifier="FEEDBACK",
        identifier=ident,
        showHide="show",
        title=f"Step {n}: a mistake we know",
    )
    for code in codes:
        para = el(fb, "p")
        el(para, "code", code)
        add_text(para, ": ")
        prose(para, CATALOGUE[code].typeset)
