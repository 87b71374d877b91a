"""The library in a notebook: build or solve a worked example, look at it,
take its steps as numpy or sympy matrices, and check answers.

::

    import worksheet
    p = worksheet.problem("attention", seed=3, causal=True)  # as `worksheet build attention --seed 3 --causal`
    p                                                         # in Jupyter: the worked example
    w, W = p.arrays()["weights"], p.to_sympy()["weights"]     # numpy array, exact sympy Matrix
    worksheet.check(p, {"weights": w}).ok                     # per-step marks, as `worksheet check`

``worksheet.solve(kind, {"X": [[1, 0], [0, 1]], ...}, causal=True)`` solves
your own matrices as ``worksheet solve`` does: numbers are read exactly by the
parser every input file goes through (a float ``0.2`` is read from its text,
so it is 1/5; ``"3/4"`` is a fraction), never evaluated.

Nothing here imports sympy until ``to_sympy`` is called, and nothing here
changes the command line.

Every argument is checked at the door (:mod:`worksheet.arguments`): a wrong
type or shape (``None``, a kind name where a problem is expected, a matrix
nested too deep or holding itself) raises
:class:`~worksheet.errors.ArgumentError`, a ``TypeError``; a value that
cannot work (``"abc"`` as an entry, NaN, infinity, a complex number, a
number too long to print) a ``ValueError`` subclass of
:class:`~worksheet.errors.WorksheetError`; an unknown step name
:class:`~worksheet.errors.UnknownStepError` (a ``LookupError``).  Each is one
line naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .arguments import kind_argument, mapping_argument, matrix_argument, option_value, problem_argument, \
    text_argument
from .build import ProblemSpec, build_document, solve_table
from .long_numbers import shown
from .model import Problem

__all__ = ["problem", "solve", "check", "Marks"]
# (``worksheet.check`` is the module worksheet.check, made callable as this check;
# kinds and documents: worksheet.kinds.names(), worksheet.build_document)


def problem(kind: str, seed: int = 1, **params) -> Problem:
    """A kind built from a seed: the numbers of ``worksheet build KIND --seed SEED``
    with the same settings (``causal=True``, ``seq_len=4``, ``numbers="calculator"``, ...).
    An unknown setting is an error naming the kind's settings."""
    spec = ProblemSpec(kind_argument(kind), {k: option_value(v, k) for k, v in params.items()})
    return build_document([spec], seed=seed).problems[0]


def solve(kind: str, matrices: Mapping[str, Any], **params) -> Problem:
    """The worked solution for your own matrices (a dict of name -> rows, as in a
    ``worksheet solve`` input file; numpy arrays and sympy matrices work too)."""
    kind_argument(kind)
    mapping_argument(matrices, "matrices", "a dict of name -> matrix, e.g. {'X': [[1, 0], [0, 1]]}")
    table = {k: matrix_argument(v, f"matrices[{k!r}]") for k, v in matrices.items()}
    table.update({k: option_value(v, k) for k, v in params.items()})
    return solve_table(kind, table, label=f"{kind} input")


def check(p: Problem, answers: Mapping[str, Any]) -> "Marks":
    """Mark ``answers`` (step name -> matrix) against ``p`` with ``worksheet check``'s
    own marking: tolerance, carried-forward marks and named mistakes.

    Entries may be numbers, text (``"0.8808"``, ``"1/(1+e^-2)"``, ``"-oo"``) or
    numpy/sympy matrices; a float is read from its shortest text, so ``0.8808``
    counts as a 4-decimal answer.
    """
    from .check import Key, answers_from_dict, check_answers
    from .render.json import problem as problem_json

    problem_argument(p)
    mapping_argument(answers, "answers", "a dict of step name -> matrix, e.g. {'weights': [[1, 0]]}")
    raw = problem_json(p)
    raw["steps"] = [s for s in raw["steps"] if "written" not in s]  # left to a person
    key = Key(f"{p.kind} (seed {p.seed})" if p.seed is not None else p.kind, {"": [raw]})
    table = {name: matrix_argument(m, f"answers[{name!r}]") for name, m in answers.items()}
    return Marks(check_answers(key, answers_from_dict(table, label="answers")))


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
        from .errors import UnknownStepError

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
