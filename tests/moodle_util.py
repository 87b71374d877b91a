r"""Reading Moodle XML and Cloze fields the way Moodle does, for the tests.

Two independent readers of the Cloze (embedded answers) grammar:

* :func:`fields` follows the documented grammar (MoodleDocs, "Embedded
  Answers (Cloze) question type"), written here as a scanner::

      field    = "{" [weight] ":" TYPE ":" alt *("~" alt) "}"
      weight   = digits                            (default 1)
      alt      = [fraction] answer ["#" feedback]
      fraction = "=" | "%" ["-"] digits [("." | ",") *digit] "%"
      answer   = text up to a "~", "#" or "}"     ("#" right after "&" belongs to
                                                   a character reference, &#..;)
      feedback = text up to a "~" or "}"
      NUMERICAL answer = number [":" tolerance]
      a backslash before } # ~ / " \ makes that character plain text;
      the text is HTML: character references are decoded after the escapes.

* :func:`moodle_fields` is a port of what Moodle's importer runs
  (``qtype_multianswer_extract_question`` in
  ``question/type/multianswer/questiontype.php``): its regular expressions,
  its loop over the alternatives, then ``html_entity_decode`` and the
  replacement of ``\}`` and ``\#``.

The tests require both to read the same fields from every question.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

TYPES = (
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
SPECIAL = '}#~/"\\'
NUMBER = r"-?(?:(?:[0-9]+[.,]?[0-9]*|[.,][0-9]+)(?:[eE][-+]?[0-9]+)?)"
NUMERICAL_ANSWER = re.compile(rf"^({NUMBER})(?::({NUMBER}))?$")
# longest type first, so that MULTICHOICE_V is not read as MULTICHOICE
_START = re.compile(r"\{([0-9]*):(%s):" % "|".join(sorted(TYPES, key=len, reverse=True)))


class ClozeError(ValueError):
    pass


@dataclass
class Alternative:
    fraction: float  # 1.0 for "=", 0.0 when none is given
    answer: str  # decoded text (for NUMERICAL: "value:tolerance")
    feedback: str

    @property
    def value(self) -> float:
        return float(_numeric(self.answer)[0].replace(",", "."))

    @property
    def tolerance(self) -> float:
        tol = _numeric(self.answer)[1]
        return 0.0 if tol is None else float(tol.replace(",", "."))


@dataclass
class Field:
    weight: int
    type: str
    alternatives: list[Alternative]
    text: str  # the field as written

    @property
    def right(self) -> list[Alternative]:
        return [a for a in self.alternatives if a.fraction == 1.0]


def _numeric(answer: str) -> tuple[str, str | None]:
    m = NUMERICAL_ANSWER.match(answer)
    if m is None:
        raise ClozeError(f"not a NUMERICAL answer: {answer!r}")
    return m.group(1), m.group(2)


# ---------------------------------------------------------------- the documented grammar
def fields(text: str) -> list[Field]:
    """Every field of a question text, by the documented grammar."""
    out, pos = [], 0
    while (m := _START.search(text, pos)) is not None:
        alts, end = _alternatives(text, m.end())
        field = Field(int(m.group(1) or 1), m.group(2), alts, text[m.start() : end])
        if field.type in ("NUMERICAL", "NM"):
            for a in alts:
                _numeric(a.answer)
        out.append(field)
        pos = end
    return out


def _alternatives(text: str, p: int) -> tuple[list[Alternative], int]:
    alts = []
    while True:
        fraction, p = _fraction(text, p)
        answer, p, stop = _until(text, p, "~#}", answer=True)
        if not answer:
            raise ClozeError(f"empty answer at {p}")
        feedback = ""
        if stop == "#":
            feedback, p, stop = _until(text, p + 1, "~}", answer=False)
        alts.append(Alternative(fraction, html.unescape(answer), html.unescape(feedback)))
        if stop == "}":
            return alts, p + 1
        p += 1  # "~"


def _fraction(text: str, p: int) -> tuple[float, int]:
    if text.startswith("=", p):
        return 1.0, p + 1
    m = re.compile(r"%(-?[0-9]+(?:[.,][0-9]*)?)%").match(text, p)
    if m:
        return float(m.group(1).replace(",", ".")) / 100, m.end()
    return 0.0, p


def _until(text: str, p: int, stops: str, *, answer: bool) -> tuple[str, int, str]:
    """The text from ``p`` up to an unescaped stop character; escapes removed."""
    out = []
    while p < len(text):
        c = text[p]
        if c == "\\" and p + 1 < len(text) and text[p + 1] in SPECIAL:
            out.append(text[p + 1])
            p += 2
            continue
        if c in stops and not (answer and c == "#" and "".join(out).endswith(("&", "&amp;"))):
            return "".join(out), p, c
        out.append(c)
        p += 1
    raise ClozeError("a field is not closed with }")


# ---------------------------------------------------------------- Moodle's importer, ported
_M_FRACTION = r"=|%(-?[0-9]+(?:[.,][0-9]*)?)%"
_M_ANSWER = r".+?(?<!\\)(?<!&)(?<!&amp;)(?=[~#}]|$)"  # PCRE's (?<!\\\\|&|&amp;), split for Python
_M_FEEDBACK = r".*?(?<!\\)(?=[~}]|$)"
_M_ALT = rf"({_M_FRACTION})?({_M_ANSWER})(#({_M_FEEDBACK}))?"
_M_ALT_NC = rf"(?:{_M_FRACTION.replace('(-?', '(?:-?')})?(?:{_M_ANSWER})(?:#(?:{_M_FEEDBACK}))?"
_M_TYPES = "|".join(TYPES)  # in Moodle's order, as its regex has them
_M_FIELD = re.compile(rf"\{{([0-9]*):({_M_TYPES}):({_M_ALT_NC}(?:~{_M_ALT_NC})*)\}}", re.S)
_M_ALT_RE = re.compile("~?" + _M_ALT, re.S)


def moodle_fields(text: str) -> list[Field]:
    """The fields Moodle's importer reads, in order (see the module docstring)."""
    out = []
    while (m := _M_FIELD.search(text)) is not None:
        weight, kind, remaining = m.group(1), m.group(2), m.group(3)
        alts = []
        while (a := _M_ALT_RE.search(remaining)) is not None:
            fraction = 1.0 if a.group(1) == "=" else float(a.group(2).replace(",", ".")) / 100 if a.group(2) else 0.0
            answer = a.group(3)
            if not (kind in ("NUMERICAL", "NM") and NUMERICAL_ANSWER.match(answer)):
                answer = html.unescape(answer).replace("\\}", "}").replace("\\#", "#")
            feedback = a.group(5) or ""
            feedback = html.unescape(feedback).replace("\\}", "}").replace("\\#", "#")
            alts.append(Alternative(fraction, answer, feedback))
            remaining = remaining.split(a.group(0), 1)[1]
        out.append(Field(int(weight or 1), kind, alts, m.group(0)))
        text = text.replace(m.group(0), f"{{#{len(out)}}}", 1)
    return out


# ---------------------------------------------------------------- the XML
@dataclass
class Question:
    category: str
    name: str
    text: str  # question text (HTML)
    feedback: str  # general feedback (HTML)


def questions(xml_text: str) -> list[Question]:
    """The Cloze questions of a Moodle XML file, each with the category it is imported into."""
    root = ET.fromstring(xml_text)
    assert root.tag == "quiz"
    out, category = [], None
    for q in root:
        assert q.tag == "question", q.tag
        if q.get("type") == "category":
            category = q.findtext("category/text")
            continue
        assert q.get("type") == "cloze", q.get("type")
        assert q.find("questiontext").get("format") == "html"
        assert q.find("generalfeedback").get("format") == "html"
        out.append(
            Question(
                category, q.findtext("name/text"), q.findtext("questiontext/text"), q.findtext("generalfeedback/text")
            )
        )
    return out


class _Tags(__import__("html.parser").parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def html_tags_and_text(fragment: str) -> tuple[list[tuple[str, dict]], str]:
    """The start tags of an HTML fragment and its text (references decoded), as a browser reads them."""
    p = _Tags()
    p.feed(fragment)
    p.close()
    return p.tags, "".join(p.text)


# ---------------------------------------------------------------- what Moodle does after import
WORD_JOINER = "\u2060"
PLACE = re.compile(r"\{#(\d+)\}")  # a stored field's place (qtype_multianswer: preg_split on this)


def visible(text: str) -> str:
    """Text as a reader sees it: without the invisible WORD JOINERs that guard delimiters."""
    return text.replace(WORD_JOINER, "")


def stored_text(text: str) -> str:
    """The question text as Moodle stores it after import: each field replaced by ``{#k}``."""
    out = text
    for k in range(1, 10**6):
        m = _M_FIELD.search(out)
        if m is None:
            return out
        out = out.replace(m.group(0), f"{{#{k}}}", 1)
    raise AssertionError("too many fields")


def places(text: str) -> list[int]:
    """The field numbers Moodle's renderer finds in a stored question text, in order."""
    return [int(k) for k in PLACE.findall(stored_text(text))]


class _Runs(__import__("html.parser").parser.HTMLParser):
    """Runs of text as MathJax 2 and 3 search them for delimiters: an element
    (but <br>, <wbr> and comments) ends a run; character references are decoded."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.runs, self.run = [], []

    def _end(self):
        if self.run:
            self.runs.append("".join(self.run))
        self.run = []

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "wbr"):
            self._end()

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self._end()

    def handle_data(self, data):
        self.run.append(data)


MATHJAX_DELIMITERS = re.compile(r"\\[()\[\]]|\$\$|\\(?:begin|end)\{|\$[^$]+\$")
FILTER_DELIMITERS = re.compile(r"\\[()\[\]]|\$\$|\[/?tex\]|<\s*/?\s*tex\b|@@", re.I)


def mathjax_delimiters(fragment: str) -> list[str]:
    """The maths delimiters MathJax (browser) would see in an HTML fragment."""
    p = _Runs()
    p.feed(fragment)
    p.close()
    p._end()
    return [m.group() for run in p.runs for m in MATHJAX_DELIMITERS.finditer(run)]


def filter_delimiters(text: str) -> list[str]:
    """What Moodle's MathJax and TeX filters (server side, on the raw text) read as maths."""
    return FILTER_DELIMITERS.findall(text)


# ---------------------------------------------------------------- what Moodle checks after reading the fields
_IS_NUMBER = re.compile(rf"^{NUMBER}$")


def import_errors(fields_: list[Field]) -> list[str]:
    """What ``qtype_multianswer_validate_question`` (question/type/multianswer/questiontype.php)
    refuses in fields read by :func:`moodle_fields`; one refused field makes Moodle's XML import
    stop.  Per field: a NUMERICAL answer that is not a number (Moodle would file it under
    another key than its grade, or refuse it), a MULTICHOICE with fewer than two non-blank
    choices, any field with no answer, and no answer of full grade."""
    errors = []
    for k, f in enumerate(fields_, 1):
        answers = [a for a in f.alternatives if a.answer.strip()]
        if f.type in ("NUMERICAL", "NM"):
            for a in f.alternatives:
                m = NUMERICAL_ANSWER.match(a.answer)
                if m is None or not _IS_NUMBER.match(m.group(1)):
                    errors.append(f"field {k}: {a.answer!r} is not a number")
        if f.type.startswith(("MULTICHOICE", "MC")) and len(answers) < 2:
            errors.append(f"field {k}: a MULTICHOICE needs at least 2 choices, it has {len(answers)}")
        elif not answers:
            errors.append(f"field {k}: no answer")
        if not any(a.fraction == 1.0 for a in answers):
            errors.append(f"field {k}: no answer has full grade")
    return errors


def numerical_match(f: Field, response: float) -> Alternative | None:
    """The answer Moodle's NUMERICAL subquestion gives a response: the first, in order,
    whose value is within its tolerance (qtype_numerical_answer::within_tolerance,
    nominal: value - tol <= response <= value + tol)."""
    for a in f.alternatives:
        if a.value - a.tolerance <= response <= a.value + a.tolerance:
            return a
    return None
