"""Marks of a :class:`~worksheet.solution.problem.Problem` in memory:
``worksheet.check(problem, answers)`` (and :func:`worksheet.api.check`), with
``worksheet check``'s own marking: tolerance, carried-forward marks and named
mistakes.  The problem becomes a key through its JSON, as a file would give it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..parse.arguments import mapping_argument, matrix_argument, problem_argument, text_argument
from ..policy.errors import InputError, UnknownStepError
from ..policy.integer_text import shown
from .answers import answers_from_dict
from .key import Key
from .marking import check_answers

__all__ = ["check_problem", "Marks"]


def check_problem(p, answers: Mapping[str, Any]) -> "Marks":
    """Mark ``answers`` (step name -> matrix) against ``p`` with ``worksheet check``'s
    own marking: tolerance, carried-forward marks and named mistakes.

    Entries may be numbers, text (``"0.8808"``, ``"1/(1+e^-2)"``, ``"-oo"``) or
    numpy/sympy matrices; a float is read from its shortest text, so ``0.8808``
    counts as a 4-decimal answer.  The problem's inputs may be among the answers
    (``check(p, p.to_numpy())``): they are given, not marked.  A name that is
    neither a step nor an input is an :class:`~worksheet.policy.errors.InputError`.
    """
    from ..render.json import problem as problem_json

    problem_argument(p)
    mapping_argument(answers, "answers", "a dict of step name -> matrix, e.g. {'weights': [[1, 0]]}")
    raw = problem_json(p)
    raw["steps"] = [s for s in raw["steps"] if "written" not in s]  # left to a person
    key = Key(f"{p.kind} (seed {p.seed})" if p.seed is not None else p.kind, {"": [raw]})
    table = {
        name: matrix_argument(m, f"answers[{name!r}]") for name, m in answers.items() if name not in p.inputs
    }  # the inputs are given, not marked (check(p, p.to_numpy()))
    report = check_answers(key, answers_from_dict(table, label="answers"))
    if report.unread:
        raise InputError(report.unread[0], file="answers")
    return Marks(report)


@dataclass
class Marks:
    """The marks of one problem's answers: per step, the status (correct,
    carried-forward, incorrect, missing), the likely mistake and a message."""

    report: Any  # worksheet.check.Report

    @property
    def steps(self) -> dict:
        """Step name -> :class:`worksheet.check.StepResult`."""
        return {s.name: s for s in self.report.problems[0].steps}

    def __getitem__(self, step: str):
        text_argument(step, "step", "a step name")
        steps = self.steps
        if step not in steps:
            raise UnknownStepError(f"step {shown(step)} was not marked; the marked steps are {', '.join(steps)}")
        return steps[step]

    @property
    def marks(self) -> int:
        return self.report.marks

    @property
    def out_of(self) -> int:
        return self.report.out_of

    @property
    def ok(self) -> bool:
        """Every step correct or carried forward."""
        return self.report.ok

    def __str__(self) -> str:
        return self.report.text()

    def _repr_markdown_(self) -> str:
        rows = [f"| `{s.name}` | {s.status} | {_md(s.message)} |" for s in self.report.problems[0].steps]
        return "\n".join([f"**{self.marks}/{self.out_of}**", "", "| step | status | |", "|---|---|---|", *rows])


def _md(s: str) -> str:
    return "".join("\\" + c if c in "\\`*_{}[]<>|#$" else c for c in s)
