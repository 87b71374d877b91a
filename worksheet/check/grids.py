"""An answer file's entries matched to the key's problems and steps and read
one by one: each entry read (a :class:`~.tolerance.Given`) or unreadable (an
:class:`~.report.Unread`, with the reason and the text as it was read), so one
entry that cannot be read voids that entry only, and every one is reported."""

from __future__ import annotations

import difflib

from ..policy.errors import InputError
from ..policy.limits import ANSWER_WORK
from ..parse import Budget
from .answers import Answers, _clip, _raw_matrix, parse_entry
from .key import KeyProblem, KeyStep
from .reading import _shown_entry
from .report import Unread
from .tolerance import Given


def _at(ans: Answers, number: int | None, name: str) -> str:
    line = ans.line_of(number, name)
    return f"line {line}, " if line else ""


def _position(exc: InputError) -> str:
    return "".join(f"{w} {v}, " for w, v in (("row", exc.row), ("column", exc.col)) if v is not None)


def read_entry(x, labels: bool, budget: Budget, decimal: str, row: int, col: int) -> Given | Unread:
    """One entry read, or why it cannot be (a ValueError of the file's spent budget is raised)."""
    try:
        if isinstance(x, str) and not x.strip():
            raise ValueError("no answer: the entry is blank")
        return parse_entry(x, labels, budget, decimal)
    except ValueError as exc:
        if budget.spent:
            raise
        shown = x if isinstance(x, str) else str(x).lower() if isinstance(x, bool) else repr(x)
        return Unread(row, col, _shown_entry(shown), str(exc))


# long: matches an answer file's problems and steps to the key; one message per way it can fail
def parse_answers(ans: Answers, problems: list[KeyProblem]):  # noqa: C901, PLR0915
    """Match the answers to the key's problems and steps, then read every entry.

    Returns (grids per problem and step: rows of Given, or Unread where an entry
    cannot be read; reasons per problem and step whose matrix cannot be read at
    all; lines that belong nowhere)."""
    file = ans.path
    unread = [f"line {n}: {reason}" for n, reason in ans.bad_lines]
    if None in ans.problems:
        if len(problems) > 1:
            if not ans.problems[None]:
                return {}, {}, unread
            raise InputError(
                f"the key has {len(problems)} problems: put each problem's steps under "
                "its number, e.g. [1] in TOML or {\"1\": {...}} in JSON",
                file=file,
            )
        by_number = {1: ans.problems[None]}
    else:
        by_number = ans.problems
    many = len(problems) > 1
    raw: dict[int, dict[str, tuple[list, KeyStep, str]]] = {}
    broken: dict[int, dict[str, str]] = {}
    for number, steps in by_number.items():
        original = None if None in ans.problems else number
        if not 1 <= number <= len(problems):
            first = next(iter(steps), "")
            unread.append(
                f"{_at(ans, original, first)}problem {number}: the key has {len(problems)} "
                f"problem{'s' * (len(problems) > 1)}, so there is no problem {number}"
            )
            continue
        kp = problems[number - 1]
        names = [s.name for s in kp.steps]
        for name, value in steps.items():
            where = f"problem {number}, {_clip(name)}" if many else _clip(name)
            at = _at(ans, original, name)
            if name not in names:
                close_ = difflib.get_close_matches(name, names, n=1)
                hint = f"; did you mean '{close_[0]}'?" if close_ else f"; the steps are {', '.join(names)}"
                unread.append(f"{at}{where}: unknown step{hint}")
                continue
            if kp.step(name).written:  # a written answer: left to a person, not read
                continue
            if (original, name) in ans.broken:
                broken.setdefault(number, {})[name] = f"{at}{ans.broken[(original, name)]}"
                continue
            try:
                rows = _raw_matrix(value, file=file, where=where)
            except InputError as exc:
                broken.setdefault(number, {})[name] = f"{at}{_position(exc)}{exc.reason}"
                continue
            if all(isinstance(x, str) and not x.strip() for row in rows for x in row):
                continue  # left blank (an answer template): missing
            raw.setdefault(number, {})[name] = (rows, kp.step(name), at)
    budget = Budget(*ANSWER_WORK)
    out: dict[int, dict[str, list[list[Given | Unread]]]] = {}
    for number, steps in raw.items():
        for name, (rows, ks, at) in steps.items():
            # the key's strings are read only for an answer of its shape (see _mark_problem)
            labels = len(rows) == ks.shape[0] and len(rows[0]) == ks.shape[1] and ks.labels
            grid = []
            for i, row in enumerate(rows, start=1):
                cells = []
                for j, x in enumerate(row, start=1):
                    try:
                        cells.append(read_entry(x, labels, budget, ans.decimal, i, j))
                    except ValueError as exc:  # the file's work budget: stop reading it
                        where = f"problem {number}, {_clip(name)}" if many else _clip(name)
                        raise InputError(str(exc), file=file, field=where, row=i, col=j) from None
                grid.append(cells)
            out.setdefault(number, {})[name] = grid
    return out, broken, unread
