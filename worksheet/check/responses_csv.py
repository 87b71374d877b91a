r"""Reading a Moodle quiz's Responses report (CSV) and matching each answer to
the key: which variant and problem a question slot holds, and which step,
row and column each part of its Cloze answer is.

The report (*Quiz > Results > Responses*, downloaded as CSV) has a row per
attempt: the name and identity columns (``First name``, ``Last name``,
``Email address``, ``ID number``, ...), ``Status`` (``Finished``, ``In
progress``, ``Overdue``, ``Never submitted``), ``Started``, ``Completed``,
``Duration``, ``Grade/10.00`` and, per question slot N, the columns the
lecturer ticked: ``Question N`` (the question text as plain text, each field
written ``_____``), ``Response N`` and ``Right answer N``.  A column of a
slot the attempt has no value for holds ``-``.

A Cloze (``multianswer``) question's response and right answer are
summarised by Moodle's ``qtype_multianswer_question::summarise_response``:
each part (field) as the language string ``subqresponse``, ``part {i}:
{response}``, joined by ``"; "`` (``part 1: 0.5; part 2: -1; part 3: ``),
the parts numbered from 1 in the order the fields stand in the question
text; the right answer is the same summary of ``get_correct_response``,
the first 100% answer of each field (for our NUMERICAL fields the value
the export wrote, ``number(to_float(exact))``; for a drop-down the label).
The whole cell is trimmed, so a last empty part ends with ``:``.

Our export (:mod:`worksheet.render.moodle`) writes the fields of a problem
step by step, in the order of the sheet's steps (the key's steps less those
on the key only, ``"on_sheet": false``, and those answered in words), each
step's entries row by row, leaving out masked entries (``-oo``), which the
question prints.  :func:`fields` rebuilds that order from the JSON key.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..policy.errors import InputError
from ..policy.limits import MAX_RESPONSE_CELL, MAX_RESPONSE_COLUMNS, MAX_RESPONSE_ROWS, MAX_RESPONSES_BYTES
from .key import Key, KeyProblem
from .reading import _read_text, _show
from .template import _hidden

IDENTITY = ("Email address", "ID number", "Username")  # what Moodle's grade import can match, best first
STATUS = ("Status", "State")  # the attempt's state column (older Moodle: "State")
FINISHED = "Finished"
EMPTY = "-"  # what the report writes for a slot with no value
_SLOT = re.compile(r"(Question|Response|Right answer) ([0-9]{1,4})")
_GRADE = re.compile(r"Grade/([0-9]{1,6}(?:\.[0-9]{1,7})?)")
_PART = re.compile(r"part ([0-9]{1,5}):(?: |$)")
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?")
_QUESTION = re.compile(r"problem ([0-9]{1,4}):[^\n]*?(?:variant ([^\s<>]{1,100}))?[ \t]*(?:\n|$)", re.I)
WORD_JOINER = "\u2060"  # the export puts it into labels (worksheet.render.cloze.plain_text)
MATCH_RTOL = 1e-6  # a right answer Moodle prints against the key's value (the same double, or its text)


@dataclass
class Attempt:
    """One row of the report: its row number as a spreadsheet counts (the header is row 1)."""

    row: int
    cells: dict[str, str]
    error: str | None = None  # the row itself cannot be read

    def get(self, name: str | None) -> str:
        return (self.cells.get(name) or "").strip() if name else ""


@dataclass
class ResponsesFile:
    path: str
    header: list[str]
    slots: list[int]  # the question numbers with a Response column, in order
    identity: str  # the column that names a student for the gradebook
    status: str | None
    max_grade: str | None  # the text after "Grade/"
    attempts: list[Attempt] = field(default_factory=list)

    def unmatchable(self) -> list[int]:
        """The slots with a ``Right answer`` column but no right answer in any row, and no
        ``Question`` column: not a question of ours (an essay, say), so not marked."""
        return [
            n
            for n in self.slots
            if (right := self.column("Right answer", n)) is not None
            and self.column("Question", n) is None
            and all(a.get(right) in ("", EMPTY) for a in self.attempts if not a.error)
        ]

    def column(self, what: str, slot: int) -> str | None:
        name = f"{what} {slot}"
        return name if name in self.header else None


def read_responses(path: Path | str) -> ResponsesFile:
    """The report's header checked and its rows read (bounded); a file that is not such a
    report is an :class:`InputError` naming the file (and the row or column)."""
    label = str(path)
    text = _read_text(Path(path), label, MAX_RESPONSES_BYTES)  # UTF-8; the BOM removed
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(rows, None)
        if header is None or not any(c.strip() for c in header):
            raise InputError("empty file: expected the header row of a Moodle Responses report", file=label)
        head = _header(header, label)
        attempts = []
        for number, line in enumerate(rows, start=2):
            if not any(c.strip() for c in line):
                continue
            if len(attempts) >= MAX_RESPONSE_ROWS:
                raise InputError(f"more than {MAX_RESPONSE_ROWS} attempts", file=label, row=number)
            attempts.append(_attempt(number, line, head.header))
    except csv.Error as exc:
        raise InputError(f"not CSV: {exc}", file=label, row=rows.line_num) from None
    head.attempts = attempts
    return head


def _header(header: list[str], label: str) -> ResponsesFile:
    names = [c.strip() for c in header]
    if len(names) > MAX_RESPONSE_COLUMNS:
        raise InputError(f"more than {MAX_RESPONSE_COLUMNS} columns", file=label, row=1)
    seen: set[str] = set()
    for k, n in enumerate(names, start=1):
        if n and n in seen:
            raise InputError(f"two columns are called {_show(n)}", file=label, row=1, col=k)
        seen.add(n)
    slots = sorted({int(m[2]) for n in names if (m := _SLOT.fullmatch(n)) and m[1] == "Response"})
    if not slots:
        raise InputError(
            "no 'Response N' column: download the quiz's Responses report (Results > Responses) "
            "with 'Response' ticked, as CSV",
            file=label,
            row=1,
        )
    for n in slots:
        if f"Right answer {n}" not in seen and f"Question {n}" not in seen:
            raise InputError(
                f"question {n} has neither 'Right answer {n}' nor 'Question {n}': tick 'Right answer' "
                "(or 'Question text') when downloading, so each attempt can be matched to its variant",
                file=label,
                row=1,
            )
    identity = next((n for n in IDENTITY if n in seen), None)
    if identity is None:
        raise InputError(
            f"no identity column ({', '.join(IDENTITY)}): the gradebook import needs one; "
            "show it in the report (Site administration > Users > Permissions > User policies > "
            "Show user identity)",
            file=label,
            row=1,
        )
    grade = next((m[1] for n in names if (m := _GRADE.fullmatch(n))), None)
    status = next((n for n in STATUS if n in seen), None)
    return ResponsesFile(label, names, slots, identity, status, grade)


def _attempt(number: int, line: list[str], header: list[str]) -> Attempt:
    long = next((k for k, c in enumerate(line, start=1) if len(c) > MAX_RESPONSE_CELL), None)
    if long is not None:
        return Attempt(number, {}, f"column {long}: more than {MAX_RESPONSE_CELL} characters")
    if len(line) != len(header):
        return Attempt(number, {}, f"{len(line)} cells, but the header has {len(header)}")
    return Attempt(number, dict(zip(header, line)))


# -- the key's side -----------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One answer field of a question: its step and entry (0-based) and what Moodle shows as right."""

    step: str
    row: int
    col: int


def fields(key: Key, vid: str, p: KeyProblem) -> list[Field]:
    """The fields of problem ``p`` of variant ``vid`` in the order the export writes them."""
    hidden = _hidden(key.variants[vid][p.number - 1].get("steps", []))
    out = []
    for s in p.steps:
        if s.name in hidden or s.written:
            continue
        n, m = s.shape
        out += [Field(s.name, i, j) for i in range(n) for j in range(m) if s.value[i, j] != -math.inf]
    return out


def parts(summary: str, count: int) -> dict[int, str] | None:
    """The parts ``{1: "0.5", 2: "-1", ...}`` of a Cloze summary (``part 1: 0.5; part 2: -1``)
    whose numbers run up to ``count``; None if it is not such a summary.  A part's text is
    what follows its ``part i:`` up to the next ``; part j:`` with j > i (a student's own
    text can hold ``; part``; it then only changes that student's own parts)."""
    marks: list[tuple[int, int, int]] = []
    for m in _PART.finditer(summary):
        n = int(m[1])
        if m.start() and summary[m.start() - 2 : m.start()] != "; ":
            continue
        if n > count or (marks and n <= marks[-1][0]) or (not marks and m.start()):
            continue
        marks.append((n, m.start(), m.end()))
    if not marks:
        return None
    out = {}
    for k, (n, _, end) in enumerate(marks):
        stop = marks[k + 1][1] - 2 if k + 1 < len(marks) else len(summary)
        out[n] = summary[end:stop].strip()
    return out


class Matcher:
    """Which (variant, problem) a slot's right answer or question text belongs to, cached
    by the text (a class shares a handful of them)."""

    def __init__(self, key: Key):
        self.key = key
        self._fields: dict[tuple[str, int], list[Field]] = {}
        self._by_right: dict[str, list[tuple[str, int]] | str] = {}

    def fields(self, vid: str, number: int) -> list[Field]:
        got = self._fields.get((vid, number))
        if got is None:
            p = self.key.problems(vid)[number - 1]
            got = self._fields[(vid, number)] = fields(self.key, vid, p)
        return got

    def candidates(self):
        for vid in self.key.variants:
            for p in self.key.problems(vid):
                yield vid, p

    def by_right_answer(self, right: str) -> list[tuple[str, int]] | str:
        """Every (variant, problem number) whose right answers these are (two variants can
        share them), or why none (a sentence)."""
        if right not in self._by_right:
            self._by_right[right] = self._match_right(right)
        return self._by_right[right]

    def _match_right(self, right: str) -> list[tuple[str, int]] | str:
        found = []
        for vid, p in self.candidates():
            fs = self.fields(vid, p.number)
            got = parts(right, len(fs))
            if got is None or len(got) != len(fs) or not fs:
                continue
            if all(_right_matches(p.step(f.step).cells[f.row][f.col], got[k]) for k, f in enumerate(fs, start=1)):
                found.append((vid, p.number))
        return found or "its right answer is no problem of the key (another quiz, or another key?)"

    def by_question(self, text: str) -> list[tuple[str, int]] | str:
        """(variant, problem number) from the question text's ``Problem k: ... variant V``."""
        m = _QUESTION.search(text)
        if not m:
            return "its question text names no problem of ours ('Problem k: ...')"
        number, vid = int(m[1]), m[2] or ""
        if vid not in self.key.variants:
            if list(self.key.variants) == [""] and not m[2]:
                vid = ""
            else:
                return f"its question text names variant {_show(vid)}, which the key does not have"
        if not 1 <= number <= len(self.key.problems(vid)):
            return f"its question text names problem {number}, which variant {_show(vid)} does not have"
        return [(vid, number)]


def _right_matches(expected, text: str) -> bool:
    """Is ``text`` (a part of Moodle's right-answer summary) this expected entry?"""
    if expected.label is not None:
        return text.replace(WORD_JOINER, "").strip() == expected.label.strip()
    if not _NUMBER.fullmatch(text):
        return False
    x = float(text)
    for v in (expected.mp, expected.alt):
        if v is not None and math.isfinite(float(v)) and abs(x - float(v)) <= MATCH_RTOL * max(1.0, abs(float(v))):
            return True
    return False
