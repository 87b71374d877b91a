"""Moodle's Cloze grammar and its filters, for text we do not control.

Moodle finds answer fields in a question text with the regular expression
``\\{([0-9]*):(TYPE):...\\}`` (on import) and their places with
``\\{#([0-9]+)\\}``; its MathJax filter typesets ``\\( \\)``, ``\\[ \\]``, ``$$``
and ``\\begin{..}``, and its legacy filters ``[tex]`` and ``@@``.  So user text
(labels, titles, prompts, course, ...) goes through :func:`html_text` (HTML
places) or :func:`plain_text` (question name, category, drop-down choices),
our own formulas through :func:`no_field`, and text inside a field through
:func:`cloze_escape`; :func:`xml_text` keeps the XML well formed.  See
:mod:`worksheet.render.moodle` for where each is used.
"""

from __future__ import annotations

import math
import re
from html import escape as html_escape
from typing import Sequence

from markupsafe import escape

__all__ = [
    "CLOZE_TYPES",
    "WORD_JOINER",
    "PLACES",
    "no_field",
    "no_legacy",
    "html_text",
    "plain_text",
    "cloze_escape",
    "cloze_html",
    "xml_text",
    "number",
    "tolerance",
    "numerical",
    "multichoice",
    "shortanswer",
    "choice_field",
    "mistake_groups",
]

PLACES = 4  # the decimals a student types; the tolerance is check's for this many

CLOZE_TYPES = (
    "NUMERICAL",
    "NM",
    "MULTICHOICE",
    "MC",
    "MULTICHOICE_V",
    "MCV",
    "MULTICHOICE_H",
    "MCH",
    "SHORTANSWER",
    "SA",
    "MW",
    "SHORTANSWER_C",
    "SAC",
    "MWC",
    "MULTICHOICE_S",
    "MCS",
    "MULTICHOICE_VS",
    "MCVS",
    "MULTICHOICE_HS",
    "MCHS",
    "MULTIRESPONSE",
    "MR",
    "MULTIRESPONSE_H",
    "MRH",
    "MULTIRESPONSE_S",
    "MRS",
    "MULTIRESPONSE_HS",
    "MRHS",
)
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
    return "".join(_HTML_TEXT.get(c, c) for c in no_legacy(escaped))


def no_legacy(html: str) -> str:
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
# are written as character references, which Moodle decodes.  So are line ends
# (the "$" of Moodle's regular expressions matches before a last newline, so
# "#feedback\n}" would read as an empty feedback and an answer "\n"), "=" and
# "%" (an answer starting with them would be read as its grade) and "{" (no
# "{1:SHORTANSWER:" inside an answer, should a reader look for fields there).
_CLOZE = {
    "}": "\\}",
    "#": "\\#",
    "~": "&#126;",
    "/": "&#47;",
    '"': "&#34;",
    "\\": "&#92;",
    "&": "&amp;",
    "=": "&#61;",
    "%": "&#37;",
    "{": "&#123;",
    "\n": "&#10;",  # Moodle's "$" (PCRE) also ends an answer or feedback before a last newline
    "\r": "&#13;",
}


def cloze_html(fragment: str) -> str:
    """An HTML fragment of ours (a hint: text escaped, maths in ``\\( \\)``) as the
    feedback of a Cloze answer: Moodle decodes it once to the same HTML."""
    return "".join(_CLOZE.get(c, c) for c in _XML_INVALID.sub("\ufffd", str(fragment)))


def cloze_escape(text: str, *, html: bool = True) -> str:
    """Text for an answer or feedback inside a Cloze field.

    Moodle stores the text it reads there as HTML (multiple choice, feedback)
    after decoding it once, so ``html=True`` escapes the text for HTML and then
    once more: ``<b>`` is shown as ``<b>``.  ``html=False`` is for short answers,
    compared as plain text (``*``, their wildcard, gets a backslash).
    """
    text = _XML_INVALID.sub("\ufffd", str(text))
    stored = html_escape(plain_text(text), quote=False) if html else text.replace("*", "\\*")
    return cloze_html(stored)


def xml_text(s: str) -> str:
    return _XML_INVALID.sub("\ufffd", s)


# ---------------------------------------------------------------- the fields
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
    from ..kinds.mistake_values import tolerance as check_tolerance

    return check_tolerance(value)


def numerical(weight: int, values: Sequence[float], wrong: Sequence[tuple[float, str]] = ()) -> str:
    """``{weight:NUMERICAL:=v1:tol1~=v2:tol2~%0%w1:tol#feedback1~...}``: every value
    is right; each ``(w, feedback)`` of ``wrong`` is a 0% answer whose ``feedback``
    (HTML of ours, see :func:`cloze_html`) Moodle shows to a student who gives it.
    Moodle takes the first answer within its tolerance, so the right ones come first."""
    alts = {number(v): f"={number(v)}:{number(tolerance(v))}" for v in values}  # each value once
    for w, feedback in wrong:
        if number(w) not in alts:
            alts[number(w)] = f"%0%{number(w)}:{number(tolerance(w))}#{cloze_html(feedback)}"
    return f"{{{weight}:NUMERICAL:{'~'.join(alts.values())}}}"


def multichoice(weight: int, choices: Sequence[str], right: int) -> str:
    """A drop-down over ``choices``; choice ``right`` (0-based) is correct."""
    alts = [("=" if k == right else "") + cloze_escape(c) for k, c in enumerate(choices)]
    return f"{{{weight}:MULTICHOICE:{'~'.join(alts)}}}"


def shortanswer(weight: int, answer: str) -> str:
    return f"{{{weight}:SHORTANSWER:={cloze_escape(answer, html=False)}}}"


def choice_field(weight: int, choices: Sequence[str] | None, right: int, answer: str) -> str:
    """A label's field: a drop-down over ``choices`` when they are at least two that
    Moodle counts (qtype_multianswer_validate_question refuses a MULTICHOICE with
    fewer than two non-blank answers, and with it the whole import), else a short
    answer (``answer``, compared case-insensitively, as ``check`` does)."""
    if choices and sum(1 for c in choices if str(c).strip()) >= 2 and 0 <= right < len(choices):
        return multichoice(weight, choices, right)
    return shortanswer(weight, answer)


def mistake_groups(right: Sequence[float], wrong: dict[str, float]) -> list[tuple[float, list[str]]]:
    """The 0% answers of one field: ``(value, codes)`` for the mistakes (code -> the value
    it gives there, in catalogue order) whose value is finite and farther than the
    tolerance from every right answer; mistakes whose values are within the tolerance
    of one another share one answer (the first one's value)."""
    groups: list[tuple[float, list[str]]] = []
    for code, w in wrong.items():
        if not math.isfinite(w) or any(abs(w - r) <= tolerance(r) for r in right):
            continue
        for v, codes in groups:
            if abs(w - v) <= tolerance(v):
                codes.append(code)
                break
        else:
            groups.append((w, [code]))
    return groups
