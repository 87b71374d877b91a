r"""``worksheet check KEY --moodle-responses responses.csv``: a Moodle quiz's
Responses report marked step by step, with error carried forward and named
mistakes, as ``check`` marks an answer file.

Each finished attempt (row) is matched, slot by slot, to the variant and
problem of the key its question was (:mod:`.responses_csv`: by the slot's
``Right answer N``, else its ``Question N`` text); its Cloze parts become
the steps' matrices of an :class:`~worksheet.check.Answers`, marked by
:func:`~worksheet.check.check_answers`.  A row that cannot be matched (an
attempt in progress or never submitted, another quiz, a question missing)
is reported with its row number and reason, and the others are marked.

Written into the output folder, all or nothing (:func:`worksheet.policy.files.write_all`):

* ``moodle-summary.csv``: the class summary of ``check --answers-dir``
  (:meth:`ClassReport.summary_csv`), one line per row of the report (its
  ``file`` is ``row N``);
* ``moodle-grades.csv``: for Moodle's grade import (*Grades > Import > CSV
  file*): the identity column (``Email address``, else ``ID number``, else
  ``Username``) and ``Grade``, the marks scaled to the quiz's maximum grade
  (the report's ``Grade/10.00``; without it, a percentage) and rounded
  exactly to 2 places; a student with several attempts keeps the highest;
* ``moodle-feedback/NNNN-ID.html``: one self-contained page per marked attempt
  (:mod:`.feedback_page`), named by the row number and the identity with every
  character but ASCII letters and digits written ``-``.

Every CSV cell that could start a formula is written as text (:mod:`worksheet.policy.csv_cells`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ..policy.csv_cells import csv_text
from ..policy.errors import InputError, WorksheetError, printable
from ..policy.files import write_all
from ..solution.points import points_text
from .answers import Answers
from .classroom import ClassReport, FileResult
from .key import Key, read_key
from .marking import check_answers
from .responses_csv import EMPTY, FINISHED, WORD_JOINER, Attempt, Matcher, ResponsesFile, parts, read_responses
from .report import Report
from .tolerance import Tolerance

SUMMARY = "moodle-summary.csv"
GRADES = "moodle-grades.csv"
FEEDBACK = "moodle-feedback"
STATES = {
    "In progress": "still in progress",
    "Overdue": "overdue (not submitted)",
    "Never submitted": "never submitted",
}


@dataclass
class Marked:
    """One row of the report: its report, or why it was not marked."""

    row: int
    identity: str = ""
    student: str = ""
    report: Report | None = None
    error: str | None = None
    grade: str | None = None  # scaled to the quiz's maximum, 2 places
    page: str | None = None  # the feedback page's file name

    @property
    def file(self) -> str:
        return f"row {self.row}"


@dataclass
class MoodleMarks:
    key: str
    responses: str
    max_grade: str | None
    identity: str
    rows: list[Marked]
    skipped: list[int] = field(default_factory=list)  # question slots not ours (no right answer anywhere)
    written: list[str] = field(default_factory=list)
    summary: str | None = None  # where the summary CSV was written

    @property
    def exit_code(self) -> int:
        return 0 if all(r.report is not None and r.report.ok for r in self.rows) else 1

    def class_report(self) -> ClassReport:
        files = [FileResult(r.file, r.report, r.error) for r in self.rows]
        return ClassReport(self.key, self.responses, files, self.summary)

    def summary_csv(self) -> str:
        return self.class_report().summary_csv()

    def grades_csv(self) -> str:
        """The identity column and ``Grade``: the highest marked attempt of each student."""
        best: dict[str, str] = {}
        for r in self.rows:
            if r.grade is not None and r.identity:
                if r.identity not in best or Fraction(r.grade) > Fraction(best[r.identity]):
                    best[r.identity] = r.grade
        head = "Grade" if self.max_grade else "Grade (percent)"
        return csv_text([[self.identity, head], *([k, v] for k, v in best.items())])

    def to_json(self) -> str:
        """The class report of ``check --answers-dir --format json`` (a file per row)."""
        return self.class_report().to_json()

    def text(self) -> str:
        marked = sum(r.report is not None for r in self.rows)
        lines = [f"Marking {self.responses} against {self.key}: {marked} of {len(self.rows)} attempts marked"]
        width = max((len(r.file) for r in self.rows), default=4)
        for r in self.rows:
            if r.report is None:
                lines.append(f"  {r.file:<{width}}  not marked: {r.error}")
                continue
            rep = r.report
            bad = [f"{p.name()}: {', '.join(p.gaps())}" for p in rep.problems if p.gaps()]
            lines.append(
                f"  {r.file:<{width}}  {r.student or r.identity}  {points_text(rep.marks)}/{points_text(rep.out_of)}"
                + (f"  grade {r.grade}" if r.grade is not None else "")
                + (f"  {'; '.join(bad)}" if bad else "")
            )
        lines += [
            f"question {n}: no right answer in any row and no question text (not one of ours, an essay?): not marked"
            for n in self.skipped
        ]
        lines += [f"wrote {w}" for w in self.written]
        return "\n".join(map(printable, lines)) + "\n"


def refuse_mixed(responses, answers, answers_dir, summary) -> None:
    """The usage of ``check --moodle-responses FILE [-o DIR]``: no answer file or folder beside it."""
    if responses is None:
        raise WorksheetError("-o/--out goes with --moodle-responses")
    if answers is not None or answers_dir is not None or summary is not None:
        raise WorksheetError("--moodle-responses takes no ANSWERS, --answers-dir or --summary")


def check_moodle_responses(
    key: Path | str | Key,
    responses: Path | str,
    out: Path | str | None = None,
    *,
    force: bool = False,
    tolerance: Tolerance | None = None,
    write: bool = True,
) -> MoodleMarks:
    """Mark every finished attempt of a Responses report; write the summary, the grades
    and the feedback pages into ``out`` (all or nothing; existing files only with ``force``)."""
    k = key if isinstance(key, Key) else read_key(key)
    report = read_responses(responses)
    matcher = Matcher(k)
    skipped = report.unmatchable()
    rows = [_mark_row(k, matcher, report, a, tolerance or Tolerance(), skipped) for a in report.attempts]
    if not rows:
        raise InputError("no attempts: the report has a header but no rows", file=report.path)
    for r in rows:
        if r.error is not None and (r.student or r.identity):
            who = f"{r.student} ({r.identity})" if r.student and r.identity else r.student or r.identity
            r.error = f"{who}: {r.error}"
    marks = MoodleMarks(k.path, report.path, report.max_grade, report.identity, rows, skipped)
    if write:
        folder = Path(out) if out is not None else Path("output")
        files = _files(marks, folder)
        write_all(files, force=force)
        marks.written = [str(folder / SUMMARY), str(folder / GRADES)]
        marks.summary = str(folder / SUMMARY)
        pages = sum(r.page is not None for r in rows)
        if pages:
            marks.written.append(f"{pages} feedback page{'s' * (pages != 1)} in {folder / FEEDBACK}")
    return marks


def _files(marks: MoodleMarks, folder: Path) -> dict[Path, str]:
    from .feedback_page import feedback_page, prose_renderer

    renderer = prose_renderer()
    files = {folder / SUMMARY: marks.summary_csv(), folder / GRADES: marks.grades_csv()}
    for r in marks.rows:
        if r.report is not None:
            r.page = page_name(r.row, r.identity)
            files[folder / FEEDBACK / r.page] = feedback_page(r.report, r.student, r.grade, marks.max_grade, renderer)
    return files


def page_name(row: int, identity: str) -> str:
    """``0005-alice-example-org.html``: the row number, then the identity with every run of
    characters other than ASCII letters and digits written ``-`` (at most 40 characters)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", identity).strip("-")[:40].strip("-")
    return f"{row:04d}" + (f"-{slug}" if slug else "") + ".html"


def _mark_row(key: Key, matcher: Matcher, report: ResponsesFile, a: Attempt, tol: Tolerance, skipped) -> Marked:
    got = Marked(a.row, a.get(report.identity), _student(a))
    if a.error:
        got.error = a.error
        return got
    state = a.get(report.status)
    if report.status and state != FINISHED:
        got.error = f"the attempt is {STATES.get(state, repr(state[:40]) + ', not finished')}"  # printed by printable
        return got
    if not got.identity:
        got.error = f"no {report.identity}: the gradebook could not take its grade"
        return got
    results, variants = [], []
    try:
        for n in (n for n in report.slots if n not in skipped):
            where = _where(matcher, report, a, n)
            if isinstance(where, str):
                got.error = f"question {n}: {where}"
                return got
            result, vid = _mark_slot(key, matcher, report, a, n, where, tol, got)
            if isinstance(result, str):
                got.error = f"question {n}: {result}"
                return got
            if result.number in {p.number for p in results}:
                got.error = f"question {n}: problem {result.number} is also another question of this attempt"
                return got
            results.append(result)
            if vid and vid not in variants:
                variants.append(vid)  # "v02/v03": variants whose right answers are the same
    except WorksheetError as exc:
        got.error = str(exc)
        return got
    except Exception as exc:  # noqa: BLE001 - one odd attempt must not stop a class's marking (as check_folder)
        got.error = f"could not be marked ({type(exc).__name__})"
        return got
    results.sort(key=lambda p: p.number)
    got.report = Report(key.path, got.file, results, got.student or got.identity, ", ".join(variants) or None)
    got.grade = _grade(got.report, report.max_grade)
    return got


def _where(matcher: Matcher, report: ResponsesFile, a: Attempt, n: int) -> list[tuple[str, int]] | str:
    """The (variant, problem) slot ``n`` may be: by its right answer, narrowed (or, without
    that column, found) by its question text; several when variants share their right
    answers.  A right answer that fits no problem of the key settles it: another quiz."""
    found: list[tuple[str, int]] | None = None
    reasons = []
    for what, find in (("Right answer", matcher.by_right_answer), ("Question", matcher.by_question)):
        column = report.column(what, n)
        text = a.get(column)
        if column is None:
            continue
        if text in ("", EMPTY):
            reasons.append(f"no {what.lower()} (the question is missing from this attempt)")
            continue
        got = find(text)
        if isinstance(got, str):
            if what == "Right answer":  # the right answers are the question's: no text overrides them
                return got
            reasons.append(got)
            continue
        narrowed = got if found is None else [w for w in found if w in got] or found
        found = narrowed
        if len(found) == 1:
            return found
    return found or reasons[0]


def _mark_slot(key, matcher, report, a, n, where, tol, got):
    """The slot's problem result, and its variant; marked against each variant it may be,
    which must then agree (else a reason)."""
    results = []
    for vid, number in where:
        fs = matcher.fields(vid, number)
        text = a.get(report.column("Response", n))
        given = {} if text in ("", EMPTY) else (parts(text, len(fs)) or {})
        ans = Answers(f"{report.path}, {got.file}", {number: _steps(key, vid, number, fs, given)}, vid or None)
        rep = check_answers(key, ans, tolerance=tol)
        results.append(next(p for p in rep.problems if p.number == number))
    verdicts = {tuple((s.name, s.status, s.mistake, s.marks) for s in r.steps) for r in results}
    if len(verdicts) > 1:
        shown = ", ".join(repr(v) for v, _ in where[:4])
        return f"its right answer fits variants {shown}, which mark it differently; tick 'Question text' too", ""
    return results[0], "/".join(v for v, _ in where)


def _steps(key, vid, number, fs, given) -> dict[str, list[list[str]]]:
    """The parts as the steps' matrices: masked entries (printed, not asked) as -inf; a step
    with no part answered is left out (missing); an empty part of an answered step is
    read as no answer."""
    p = key.problems(vid)[number - 1]
    steps: dict[str, list[list[str]]] = {}
    answered: set[str] = set()
    for k, f in enumerate(fs, start=1):
        rows, cols = p.step(f.step).shape
        grid = steps.setdefault(f.step, [["-inf"] * cols for _ in range(rows)])
        grid[f.row][f.col] = given.get(k, "").replace(WORD_JOINER, "")  # the export's, in a label
        if grid[f.row][f.col]:
            answered.add(f.step)
    return {s: g for s, g in steps.items() if s in answered}


def _student(a: Attempt) -> str:
    first, last = a.get("First name"), a.get("Last name")
    return " ".join(x for x in (first, last) if x) or a.get("Full name")


def _grade(rep: Report, max_grade: str | None) -> str:
    """The marks as a grade out of the quiz's maximum (a percentage without it), rounded
    half up to 2 places from the exact fraction."""
    top = Fraction(max_grade) if max_grade else Fraction(100)
    out_of = Fraction(rep.out_of)
    x = Fraction(rep.marks) / out_of * top if out_of else Fraction(0)
    cents = (x * 100 + Fraction(1, 2)).__floor__()
    return f"{cents // 100}.{cents % 100:02d}"
