"""Marking cell by cell, as a student fills a sheet in (``worksheet practice``).

:func:`mark_cells` takes one problem's key (the JSON object of
``worksheet build``/``solve``) and the cells entered so far, step name ->
{(row, col): entry} (1-based, any subset of the cells), and gives each cell
a verdict with ``check``'s own machinery:

* ``right`` -- within the tolerance of the key (:func:`~.tolerance.close`);
* ``carried`` -- wrong against the key but right when the step is recomputed
  by the kind's ``reference`` from the student's own earlier cells
  (:class:`~.recompute._Own`; an earlier step only partly filled counts with
  the key's values where it is empty), within the slack the rounding of
  those cells allows;
* ``mistake`` -- the value a named mistake gives there (the candidates of
  :func:`~.marking.mistake_candidates`, the rules ``check`` diagnoses with;
  the candidate that explains most of the step's wrong cells wins);
* ``wrong`` -- none of these;
* ``unreadable`` -- an entry that cannot be read: ``message`` says why in
  words a student understands, ``read_as`` the text as it was read.  Never
  counted as wrong, and never a source of carried credit: a step with such an
  entry counts as not given for the steps after it.

A step whose every cell is filled is also marked as a whole by
:func:`~.marking.check_answers`' own step marking, and that verdict wins: a
step ``check`` calls carried forward has its cells ``carried``, one it
diagnoses with a named mistake has its wrong cells ``mistake``, so the page
and ``worksheet check`` never disagree on a finished step.
``arithmetic-slip`` is a step's diagnosis (exactly one entry wrong), not a
cell's: such a cell is ``wrong``.

Entries are read as in answer files (:func:`~.answers.parse_entry`, the
bounded parser, one :data:`~worksheet.policy.limits.ANSWER_WORK` budget per call);
nothing is evaluated.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np

from ..kinds import mistakes
from ..policy.errors import InputError
from ..policy.limits import ANSWER_WORK
from ..parse import Budget
from .answers import DECIMALS
from .grids import read_entry
from .key import Key, KeyProblem
from .marking import _mark_problem, mistake_candidates
from .reading import MAX_LABEL, _show
from .report import Unread
from .recompute import _Own, recomputer
from .tolerance import Given, Tolerance, close, expected_float

VERDICTS = ("right", "carried", "mistake", "wrong", "unreadable")
SYMBOL = {"right": "\u2713", "carried": "\u21aa", "mistake": "\u2717", "wrong": "\u2717", "unreadable": "?"}


@dataclass
class CellVerdict:
    step: str
    row: int  # 1-based
    col: int  # 1-based
    verdict: str  # one of VERDICTS
    mistake: str | None = None  # the mistake's code, for "mistake"
    message: str = ""  # why an entry could not be read
    read_as: str | None = None  # an unreadable entry: the text as it was read

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}


@dataclass
class StepProgress:
    name: str
    title: str
    cells: int  # entries of the step
    filled: int  # entries given
    good: int  # right or carried
    status: str | None = None  # check's status once every entry is given and readable
    mistake: str | None = None  # check's diagnosis then (a code, arithmetic-slip included)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class CellMarks:
    verdicts: list[CellVerdict] = field(default_factory=list)
    steps: list[StepProgress] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"verdicts": [v.to_dict() for v in self.verdicts], "steps": [s.to_dict() for s in self.steps]}


def read_problem(problem: dict) -> KeyProblem:
    """One problem's key (its JSON object) read once: pass it to :func:`mark_cells`
    again and again (a practice server keeps it for the problems it serves);
    each step's expected entries are parsed when first marked, and kept."""
    return Key("answers", {"": [problem]}).problems()[0]


# long: a cell's verdict rules in the order they are tried: read, right, carried, named mistake, wrong
def mark_cells(  # noqa: C901, PLR0915
    problem: dict | KeyProblem,
    cells: Mapping[str, Mapping[tuple[int, int], Any]],
    *,
    tolerance: Tolerance | None = None,
    decimal: str = "point",
) -> CellMarks:
    """Verdicts for the ``cells`` given so far of one ``problem`` (its key's JSON
    object, or that read by :func:`read_problem`).

    An unknown step, a row or column outside the step's matrix or an entry
    longer than 200 characters is an :class:`~worksheet.policy.errors.InputError`
    (a page never sends one); an entry the parser cannot read is an
    ``unreadable`` verdict with the reason.  ``decimal="comma"``: a comma is
    the decimal separator (``0,5``), as in :func:`~.answers.parse_entry`.
    """
    if decimal not in DECIMALS:
        raise InputError(f"decimal must be \"point\" or \"comma\", not {_show(decimal)}", field="decimal")
    tol = tolerance or Tolerance()
    kp = problem if isinstance(problem, KeyProblem) else Key("answers", {"": [problem]}).problems()[0]
    steps = {s.name: s for s in kp.steps}
    budget = Budget(*ANSWER_WORK)
    out = CellMarks()
    parsed: dict[str, dict[tuple[int, int], Given]] = {}
    unread: dict[str, dict[tuple[int, int], str]] = {}
    for name, entries in cells.items():
        ks = steps.get(name)
        if ks is None or ks.written:
            raise InputError("no such step to answer", field=_show(name))
        for (r, c), x in entries.items():
            if not (isinstance(r, int) and isinstance(c, int) and 1 <= r <= ks.shape[0] and 1 <= c <= ks.shape[1]):
                raise InputError(
                    f"no cell ({_show(r)}, {_show(c)}) in a {ks.shape[0]} x {ks.shape[1]} matrix", field=name
                )
            if isinstance(x, str) and not x.strip():
                continue  # an emptied cell
            if isinstance(x, str) and len(x) > MAX_LABEL:
                raise InputError("entry too long", field=name, row=r, col=c)
            try:
                g = read_entry(x, ks.labels, budget, decimal, r, c)
            except ValueError as exc:  # the request's work budget is spent
                g = Unread(r, c, "", str(exc))
            if isinstance(g, Unread):
                unread.setdefault(name, {})[(r - 1, c - 1)] = g
                continue
            parsed.setdefault(name, {})[(r - 1, c - 1)] = g
    run = recomputer(kp.kind, kp.params, kp.inputs)
    own = _Own(kp, run)
    key_vals = {**kp.inputs, **{s.name: s.value for s in kp.steps}}
    full: dict[str, list[list[Given]]] = {}
    per_step: dict[str, dict[tuple[int, int], CellVerdict]] = {}
    for k, ks in enumerate(kp.steps):
        if ks.written:
            continue
        entered = parsed.get(ks.name, {})
        verdicts: dict[tuple[int, int], CellVerdict] = {}
        for (i, j), u in unread.get(ks.name, {}).items():
            verdicts[(i, j)] = CellVerdict(ks.name, i + 1, j + 1, "unreadable", message=u.reason, read_as=u.given)
        if entered:
            _mark_entered(kp, k, entered, verdicts, own, key_vals, tol, ks.name not in unread)
        per_step[ks.name] = verdicts
        n, m = ks.shape
        if len(entered) == n * m:
            full[ks.name] = [[entered[(i, j)] for j in range(m)] for i in range(n)]
    whole = {r.name: r for r in _mark_problem(kp, full, tol, "answers").steps} if full else {}
    for ks in kp.steps:
        if ks.written:
            continue
        verdicts = per_step[ks.name]
        res = whole.get(ks.name) if ks.name in full else None
        if res is not None:
            for v in verdicts.values():
                if v.verdict in ("right", "unreadable"):
                    continue
                if res.status == "carried-forward":
                    v.verdict, v.mistake = "carried", None
                elif res.status == "incorrect" and res.mistake and res.mistake != mistakes.SLIP:
                    v.verdict, v.mistake = "mistake", res.mistake
        out.verdicts.extend(verdicts[c] for c in sorted(verdicts))
        out.steps.append(
            StepProgress(
                ks.name,
                ks.title,
                ks.shape[0] * ks.shape[1],
                len(verdicts),
                sum(v.verdict in ("right", "carried") for v in verdicts.values()),
                res.status if res is not None else None,
                res.mistake if res is not None else None,
            )
        )
    return out


# long: the verdict of one entered cell: the rules of mark_cells for one entry
def _mark_entered(  # noqa: C901
    kp,
    k: int,
    entered: dict[tuple[int, int], Given],
    verdicts: dict,
    own: _Own,
    key_vals: dict,
    tol: Tolerance,
    source: bool = True,
) -> None:
    """The verdicts of step k's readable entries; then the step's entries (over
    the key's values where empty) become the student's own for later steps,
    unless one of its entries could not be read (``source`` False)."""
    ks = kp.steps[k]
    name = ks.name
    against = []  # (values recomputed from the student's own earlier cells, their rounding slack)
    for g in own.givens(k):
        r = own.recompute(g)
        if r is not None and name in r and r[name].shape == ks.shape:
            against.append((r[name], own.slack(g, name)))
    pending = []
    for (i, j), g in sorted(entered.items()):
        if close(g, ks.cells[i][j], tol):
            verdicts[(i, j)] = CellVerdict(name, i + 1, j + 1, "right")
        elif any(
            close(g, expected_float(float(v[i, j])), tol, 0.0 if s is None else float(s[i, j])) for v, s in against
        ):
            verdicts[(i, j)] = CellVerdict(name, i + 1, j + 1, "carried")
        else:
            pending.append((i, j))
    values = ks.value.copy()
    rounding = np.zeros_like(values)
    for (i, j), g in entered.items():
        values[i, j], rounding[i, j] = g.value, g.rounding
    if source:
        own.record(name, values, rounding)
    if pending or any(v.verdict == "wrong" for v in verdicts.values()):
        own.wrong.add(name)
    best: tuple[str | None, set] = (None, set())
    if pending:
        for code, candidate in mistake_candidates(kp, k, key_vals, own):
            if candidate.shape != ks.shape:
                continue
            explained = {
                (i, j) for i, j in pending if close(entered[(i, j)], expected_float(float(candidate[i, j])), tol)
            }
            if len(explained) > len(best[1]):
                best = (code, explained)
                if len(explained) == len(pending):
                    break
    for i, j in pending:
        if (i, j) in best[1]:
            verdicts[(i, j)] = CellVerdict(name, i + 1, j + 1, "mistake", best[0])
        else:
            verdicts[(i, j)] = CellVerdict(name, i + 1, j + 1, "wrong")


def shown_mistakes(problem: dict) -> list[str]:
    """The named mistakes this problem can show: those whose rule (followed
    into a later step or not) gives some step a value unlike the key's,
    in the order the checker tries them.  What a practice page offers to a
    student who keeps making one of them."""
    kp = Key("problem", {"": [problem]}).problems()[0]
    own = _Own(kp, recomputer(kp.kind, kp.params, kp.inputs))
    key_vals = {**kp.inputs, **{s.name: s.value for s in kp.steps}}
    found: list[str] = []
    for k, ks in enumerate(kp.steps):
        if ks.written:
            continue
        for code, candidate in mistake_candidates(kp, k, key_vals, own):
            if code in found:
                continue
            if candidate.shape != ks.shape or not np.allclose(
                candidate, ks.value, rtol=1e-6, atol=1e-9, equal_nan=True
            ):
                found.append(code)
    return found
