"""Exam spec files: a whole exam (or study sheet) described in TOML.

::

    title = "Midterm: attention"         # printed on every page
    course = "CS 480"
    date = "2026-03-04"                  # text or a TOML date
    instructions = "50 minutes. Show your working."
    paper = "a4"                         # a4 or letter
    numbers = "hand"                     # hand or calculator (default for every section)
    variants = 30                        # one per student; omit for a single sheet
    seed = 7                             # optional; --seed overrides
    name = "midterm"                     # optional base name of the files; --name overrides
    compact = false                      # optional: a two-column study sheet (tex/pdf); --compact overrides
    duplex = false                       # optional: pad each variant to an even page count (tex/pdf); --duplex

    [[sections]]                         # one problem per section, in order
    kind = "attention"
    points = 10
    prompt = "Show every step."          # optional, printed after the problem's own text
    question = "Which would you use, and why?"   # optional: a question answered in words
    answer = "The scaled one: ..."       # its model answer (required with a question), for the key
    lines = 5                            # optional: ruled lines for the answer (default 5)
    step_points = { scores = 4 }         # optional: points of named steps ("written" is the question)
    step_weights = { output = 2 }        # optional: shares of the rest (every other step weighs 1)
    seq_len = 3                          # any parameter of the kind (see 'worksheet list')
    causal = true

An unknown key or a value of the wrong type is an error naming the key and
its line (exit code 2).  Course and date are one line of plain text, the title
one line; title, instructions and prompts may hold ``$...$`` formulas that use only the maths
listed in :mod:`worksheet.policy.safetext` (no ``\\input``, ``\\href``, ...).
Loading a spec checks every section's parameters,
so a mistake shows before any problem is generated.

A section without a ``kind`` but with a ``question`` and its ``answer`` is a
problem of its own (kind ``question``): only the question, answered in words.

A ``question`` becomes the problem's last step, named ``written`` (``written_2``
if the kind already has a step of that name): the sheet gives it ruled lines,
the key prints ``answer``, the JSON holds it in the step's ``"written"`` field
and ``worksheet check`` leaves it to a person.  Both may use ``$...$`` maths
(in a TOML literal string, ``'''...'''``, a backslash is written once); line
breaks inside them are spaces.

One problem given on the command line is a :class:`ProblemSpec`
(``KIND:key=value,...``).  :func:`resolve_build` weighs a spec file against
the command-line options (an option given wins), so a library caller gets the
sheet ``worksheet build`` would make.
"""

from __future__ import annotations

import datetime
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import kinds
from ..policy.errors import InputError, ParamError, WorksheetError
from ..policy.safetext import TextError, check_line, check_prose, check_title, file_name_problem
from ..policy.limits import MAX_POINTS, MAX_SEED
from ..solution.maths import as_prose
from ..policy.integer_text import shown

PAPERS = ("a4", "letter")
NUMBER_MODES = ("hand", "calculator")
MAX_VARIANTS = 2000
SECTION_KEYS = ("kind", "points", "prompt", "question", "answer", "lines", "step_points", "step_weights")
MAX_LINES = 30  # ruled lines for one written answer


SPEC_RE = re.compile(r"^(?P<kind>[a-z0-9-]+)(?::(?P<opts>.*))?$")


QUESTION = "question"  # a section with only a question answered in words (no kind of its own)


class _QuestionKind:
    """What :func:`_section` needs of a kind, for a section that is only a written question."""

    class Params:
        @staticmethod
        def field_names() -> list[str]:
            return []

        @staticmethod
        def from_options(options: dict, source: str | None = None) -> None:
            return None


class SpecError(InputError):
    """A spec file that cannot be used; the message names file, key and line."""


@dataclass(frozen=True)
class ProblemSpec:
    """One problem of a sheet: a kind and its own options (and, from an exam
    spec, its points and the lecturer's prompt, printed after the kind's intro)."""

    kind: str
    options: dict
    points: Any = None
    prompt: str = ""
    question: str = ""  # a question answered in words: a last, written step
    answer: str = ""  # its model answer
    lines: int = 5  # ruled lines for it on the sheet
    step_points: tuple = ()  # (step name, points) the spec gives steps (see worksheet.solution.points)
    step_weights: tuple = ()  # (step name, weight) of the steps sharing the rest
    where: str = field(default="", compare=False)  # "sections[2]" of an exam spec: named by errors

    @classmethod
    def parse(cls, text: str) -> "ProblemSpec":
        """``KIND`` or ``KIND:key=value,key=value`` (per-problem settings).

        Keys use the parameter names with - or _ (``seq-len=4``); values
        ``true``/``false`` are booleans, whole numbers are ints, anything
        else is text (decimals such as ``eps=0.1`` are read exactly).
        """
        m = SPEC_RE.match(text.strip())
        if not m:
            raise ParamError(f"cannot read problem {shown(text)}: write KIND or KIND:key=value,...")
        options: dict[str, Any] = {}
        for part in filter(None, (m.group("opts") or "").split(",")):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise ParamError(f"cannot read setting {shown(part)} in {shown(text)}: write key=value")
            options[key.strip().replace("-", "_")] = _option_value(value.strip())
        return cls(m.group("kind"), options)


def _option_value(text: str):
    """``true``/``false`` -> bool, up to 6 digits -> int, anything else stays text."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"[+-]?\d{1,6}", text):
        return int(text)
    return text


@dataclass
class Section:
    kind: str
    params: dict[str, Any]  # the kind's parameters, names with _
    points: int | float | None = None
    prompt: str = ""
    question: str = ""  # a question answered in words (a written step), or ""
    answer: str = ""  # its model answer
    lines: int = 5  # ruled lines on the sheet for the answer
    step_points: dict = field(default_factory=dict)  # step name -> its own points
    step_weights: dict = field(default_factory=dict)  # step name -> its weight in the split


@dataclass
class ExamSpec:
    sections: list[Section]
    title: str | None = None
    course: str = ""
    date: str = ""
    instructions: str = ""
    paper: str = "a4"
    numbers: str = "hand"
    variants: int | None = None
    seed: int | None = None
    name: str | None = None
    compact: bool = False  # a study sheet: two columns, smaller type (tex/pdf)
    duplex: bool = False  # two-sided printing: each variant padded to an even page count (tex/pdf)
    source: str = ""  # the file it came from

    def problem_specs(self) -> list[ProblemSpec]:
        return [
            ProblemSpec(
                s.kind,
                dict(s.params),
                s.points,
                s.prompt,
                s.question,
                s.answer,
                s.lines,
                tuple(s.step_points.items()),
                tuple(s.step_weights.items()),
                f"sections[{i + 1}]",
            )
            for i, s in enumerate(self.sections)
        ]

    def doc_fields(self) -> dict[str, Any]:
        """The fields of every Document built from this spec."""
        return {
            "course": self.course,
            "date": self.date,
            "instructions": self.instructions,
            "paper": self.paper,
            **({"compact": True} if self.compact else {}),
            **({"duplex": True} if self.duplex else {}),
        }


# ---------------------------------------------------------------- spec versus options

DEFAULT_KINDS = kinds.DEFAULT  # what `worksheet build` makes when no kind is named


# ---------------------------------------------------------------- loading


def load_spec(path: Path | str) -> ExamSpec:
    """Read and check a spec file; raise :class:`SpecError` naming key and line."""
    path = Path(path)
    label = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("no such file", file=label) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read it: {getattr(exc, 'strerror', None) or exc}", file=label) from None
    return parse_spec(text, source=label)


# long: one check per field of an exam spec, each with its own message, in the order docs/reference.md lists them
def parse_spec(text: str, *, source: str = "spec") -> ExamSpec:  # noqa: C901, PLR0915
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", file=source) from None
    except ValueError as exc:  # a whole number of more digits than Python converts
        from ..policy.integer_text import is_digit_limit_error, long_number_error

        if not is_digit_limit_error(exc):
            raise
        err = long_number_error(text, file=source)
        raise SpecError(err.reason, file=source, field=err.field) from None
    except RecursionError:
        raise SpecError("too deeply nested", file=source) from None
    lines = _Lines(text)

    def fail(message: str, key: str, section: int | None = None):
        line = lines.find(key, section)
        where = f"sections[{section + 1}].{key}" if section is not None else key
        raise SpecError(f"{message}{f' (line {line})' if line else ''}", file=source, field=where)

    known = {
        "title",
        "course",
        "date",
        "instructions",
        "paper",
        "numbers",
        "variants",
        "seed",
        "name",
        "sections",
        "compact",
        "duplex",
    }
    for key in data:
        if key not in known:
            fail(f"unknown key{_did_you_mean(key, known)}; a spec has {', '.join(sorted(known))}", key)
    spec = ExamSpec(sections=[], source=source)
    for key in ("title", "course", "instructions", "name"):
        if key in data:
            if not isinstance(data[key], str):
                fail(f"must be text, not {_show(data[key])}", key)
            setattr(spec, key, data[key])
    for key, check in (("title", check_title), ("course", check_line), ("instructions", check_prose)):
        try:
            check(getattr(spec, key) or "", field=key)
        except TextError as exc:
            fail(exc.reason, key)
    for key in ("title", "instructions"):  # checked: prose from here on (user text: words and allowed formulas)
        if isinstance(getattr(spec, key), str):
            setattr(spec, key, as_prose(getattr(spec, key)))
    if spec.name is not None and file_name_problem(spec.name):
        fail(file_name_problem(spec.name), "name")
    if "date" in data:
        d = data["date"]
        if isinstance(d, (datetime.date, datetime.datetime)):
            d = d.isoformat()
        if not isinstance(d, str):
            fail(f"must be text or a date, not {_show(d)}", "date")
        try:
            spec.date = check_line(d, field="date")
        except TextError as exc:
            fail(exc.reason, "date")
    for key in ("compact", "duplex"):
        if key in data:
            if not isinstance(data[key], bool):
                fail(f"must be true or false, not {_show(data[key])}", key)
            setattr(spec, key, data[key])
    for key, choices in (("paper", PAPERS), ("numbers", NUMBER_MODES)):
        if key in data:
            if data[key] not in choices:
                fail(f"must be one of {', '.join(choices)}, not {_show(data[key])}", key)
            setattr(spec, key, data[key])
    for key, low, high in (("variants", 1, MAX_VARIANTS), ("seed", 0, MAX_SEED)):
        if key in data:
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, int):
                fail(f"must be a whole number, not {_show(v)}", key)
            if not low <= v <= high:
                fail(f"must be between {low} and {high}, not {v}", key)
            setattr(spec, key, v)
    sections = data.get("sections")
    if sections is None:
        fail("is missing: add at least one [[sections]] table with a kind", "sections")
    if not isinstance(sections, list) or not sections or not all(isinstance(s, dict) for s in sections):
        fail("must be one or more [[sections]] tables", "sections")
    for i, table in enumerate(sections):
        spec.sections.append(_section(table, i, spec, fail, source))
    return spec


# long: one check per field of a spec section, each with its own message
def _section(table: dict, i: int, spec: ExamSpec, fail, source: str) -> Section:  # noqa: C901, PLR0915
    if "kind" not in table and "question" in table:  # a question answered in words, and nothing else
        table = {"kind": QUESTION, **table}
    if "kind" not in table:
        fail("is missing: every section needs a kind (see 'worksheet list'), or a question and its answer", "kind", i)
    kind_name = table["kind"]
    if not isinstance(kind_name, str):
        fail(f"must be text, not {_show(kind_name)}", "kind", i)
    try:
        kind = _QuestionKind if kind_name == QUESTION else kinds.get(kind_name)
    except WorksheetError as exc:
        fail(str(exc), "kind", i)
    fields = kind.Params.field_names()
    params: dict[str, Any] = {}
    for key, value in table.items():
        if key in SECTION_KEYS:
            continue
        name = key.replace("-", "_")
        if name not in fields:
            fail(
                f"unknown key{_did_you_mean(key, [*SECTION_KEYS, *fields])}; a section has kind, points, step_points, step_weights, prompt, question, answer, "
                f"lines and the parameters of "
                f"{kind_name}: {', '.join(fields)}",
                key,
                i,
            )
        if isinstance(value, (datetime.date, datetime.time, dict)):
            fail(f"has the wrong type ({_show(value)})", key, i)
        if isinstance(value, float):  # decimals are exact: 0.1 means 1/10
            value = repr(value)
        params[name] = value
    points = table.get("points")
    if points is not None and (
        isinstance(points, bool) or not isinstance(points, (int, float)) or not 0 <= points <= MAX_POINTS
    ):  # also refuses nan and inf
        fail(f"must be a number of points from 0 to {MAX_POINTS}, not {_show(points)}", "points", i)
    if isinstance(points, float) and points.is_integer():
        points = int(points)
    prompt = table.get("prompt", "")
    if not isinstance(prompt, str):
        fail(f"must be text, not {_show(prompt)}", "prompt", i)
    try:  # printed as prose: its $...$ formulas may use only the allowed maths
        check_prose(prompt, field="prompt")
    except TextError as exc:
        fail(exc.reason, "prompt", i)
    written = {}
    for key in ("question", "answer"):
        value = table.get(key, "")
        if not isinstance(value, str):
            fail(f"must be text, not {_show(value)}", key, i)
        written[key] = " ".join(value.split())  # a multi-line TOML string reads as one paragraph
        try:  # printed as prose, like the prompt
            check_prose(written[key], field=key)
        except TextError as exc:
            fail(exc.reason, key, i)
    if kind_name == QUESTION and not written["question"]:
        fail("a section of kind 'question' needs a question and its answer", "kind", i)
    if written["question"] and not written["answer"]:
        fail("a question needs its model answer: add answer = \"...\" (printed on the key)", "question", i)
    if written["answer"] and not written["question"]:
        fail("an answer needs its question: add question = \"...\"", "answer", i)
    lines = table.get("lines", 5)
    if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= MAX_LINES:
        fail(f"must be a whole number of lines from 1 to {MAX_LINES}, not {_show(lines)}", "lines", i)
    if "lines" in table and not written["question"]:
        fail("lines are for a written answer: add question and answer", "lines", i)
    shares = {}
    for key, low in (("step_points", 0), ("step_weights", 0)):
        value = table.get(key, {})
        if not isinstance(value, dict):
            fail(
                f"must be a table of step names and numbers, e.g. {key} = {{ scores = 2 }}, not {_show(value)}", key, i
            )
        for step, x in value.items():
            if (
                isinstance(x, bool)
                or not isinstance(x, (int, float))
                or not low <= x <= MAX_POINTS
                or (key == "step_weights" and x == 0)
            ):
                what = "a weight above 0" if key == "step_weights" else "a number of points from 0"
                fail(f"{_show(step)} must be {what} to {MAX_POINTS}, not {_show(x)}", key, i)
        shares[key] = {str(k): (int(x) if isinstance(x, float) and x.is_integer() else x) for k, x in value.items()}
    if shares["step_points"] and points is None:
        fail("step points need the section's points: add points = ...", "step_points", i)
    if shares["step_points"] and sum(shares["step_points"].values()) > points:
        fail(
            f"the steps' points add up to {sum(shares['step_points'].values())}, more than the section's {points}",
            "step_points",
            i,
        )
    # check the parameters now, with the exam's number mode, so errors name the key
    merged = {"numbers": spec.numbers, **params}
    try:
        kind.Params.from_options(merged, source=source)
    except InputError as exc:
        key = next((k for k in table if k.replace("-", "_") == exc.field), exc.field or "kind")
        fail(exc.reason, key, i)
    except ParamError as exc:
        key = next((k for k in table if k.replace("-", "_") in str(exc).replace("-", "_")), "kind")
        fail(str(exc), key, i)
    return Section(
        kind_name,
        params,
        points,
        as_prose(prompt.strip()),  # checked above: prose from here on
        as_prose(written["question"]),
        as_prose(written["answer"]),
        lines,
        shares["step_points"],
        shares["step_weights"],
    )


def _show(value) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value}"


class _Lines:
    """Find the line of a key: top level, or in the n-th [[sections]] table."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.headers = [k for k, line in enumerate(self.lines) if re.match(r"\s*\[", line)]
        self.sections = [k for k, line in enumerate(self.lines) if re.match(r"\s*\[\[\s*sections\s*\]\]", line)]

    def find(self, key: str, section: int | None) -> int | None:
        if section is None:
            start, stop = 0, self.headers[0] if self.headers else len(self.lines)
            if key == "sections" and self.sections:
                return self.sections[0] + 1
        else:
            if section >= len(self.sections):
                return None
            start = self.sections[section] + 1
            stop = next((h for h in self.headers if h > self.sections[section]), len(self.lines))
        pattern = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for k in range(start, stop):
            if pattern.match(self.lines[k]):
                return k + 1
        return self.sections[section] + 1 if section is not None else None


def _did_you_mean(key: str, names) -> str:
    """``; did you mean 'points'?`` for a misspelt key (``point``), as kinds and options say."""
    import difflib

    close = difflib.get_close_matches(str(key).replace("-", "_"), sorted(names), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""
