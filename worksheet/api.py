"""The library in a notebook: build or solve a worked example, look at it,
take its steps as numpy or sympy matrices, and check answers.

::

    import worksheet
    p = worksheet.problem("attention", seed=3, causal=True)  # as `worksheet build attention --seed 3 --causal`
    p                                                         # in Jupyter: the worked example
    w, W = p.to_numpy()["weights"], p.to_sympy()["weights"]   # numpy array, exact sympy Matrix (inputs too)
    worksheet.check(p, {"weights": w}).ok                     # per-step marks, as `worksheet check`

``worksheet.solve(kind, {"X": [[1, 0], [0, 1]], ...}, causal=True)`` (or
``worksheet.solve(kind, "mine.toml")``) solves your own matrices as
``worksheet solve`` does: numbers are read exactly by the
parser every input file goes through (a float ``0.2`` is read from its text,
so it is 1/5; ``"3/4"`` is a fraction), never evaluated.

Nothing here imports sympy until ``to_sympy`` is called, and nothing here
changes the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from .build import ProblemSpec, build_document, solve_table
from .errors import InputError, WorksheetError
from .model import Problem

__all__ = ["problem", "solve", "check", "kinds", "build", "Marks"]


def problem(kind: str, seed: int = 1, **params) -> Problem:
    """A kind built from a seed: the numbers of ``worksheet build KIND --seed SEED``
    with the same settings (``causal=True``, ``seq_len=4``, ``numbers="calculator"``, ...).
    An unknown setting is an error naming the kind's settings."""
    spec = ProblemSpec(kind, {k: _plain(v) for k, v in params.items()})
    return build_document([spec], seed=seed).problems[0]


def solve(kind: str | None = None, inputs: Any = None, *, example: str | None = None, **params) -> Problem:
    """The worked solution of your own numbers, from what ``worksheet solve`` takes:

    * ``solve("attention", "mine.toml")`` -- a JSON or TOML input file (a path);
    * ``solve("attention", {"Q": [[1, 0]], "K": ..., "V": ...})`` -- the same table as a
      dict (numpy arrays and sympy matrices work too);
    * ``solve(example="thinking-machines")`` -- a lecture's example.

    ``params`` override the file's (``causal=True``), as the CLI's options do."""
    from pathlib import Path

    from .build import solve_example, solve_file

    options = {k: _plain(v) for k, v in params.items()}
    if example is not None:
        if kind is not None or inputs is not None:
            raise WorksheetError("give either example=NAME or a kind and its inputs, not both")
        return solve_example(example, options)
    if kind is None or inputs is None:
        raise WorksheetError("solve needs a kind and its inputs (a file or a dict of matrices), or example=NAME")
    if isinstance(inputs, (str, Path)):
        return solve_file(kind, inputs, options)
    if not isinstance(inputs, Mapping):
        raise WorksheetError(f"the inputs of solve are a file path or a dict of matrices, not "
                             f"{type(inputs).__name__}")
    table = {str(k): _entries(v) for k, v in inputs.items()}
    table.update(options)
    return solve_table(kind, table, label=f"{kind} input")


def check(p: Problem, answers: Mapping[str, Any]) -> "Marks":
    """Mark ``answers`` (step name -> matrix) against ``p`` with ``worksheet check``'s
    own marking: tolerance, carried-forward marks and named mistakes.

    Entries may be numbers, text (``"0.8808"``, ``"1/(1+e^-2)"``, ``"-oo"``) or
    numpy/sympy matrices; a float is read from its shortest text, so ``0.8808``
    counts as a 4-decimal answer.  The problem's inputs may be among the answers
    (``check(p, p.to_numpy())``): they are given, not marked.  A name that is
    neither a step nor an input is an :class:`~worksheet.errors.InputError`.
    """
    from .check import Key, answers_from_dict, check_answers
    from .render.json import problem as problem_json

    raw = problem_json(p)
    raw["steps"] = [s for s in raw["steps"] if "written" not in s]  # left to a person
    key = Key(f"{p.kind} (seed {p.seed})" if p.seed is not None else p.kind, {"": [raw]})
    table = {str(name): _entries(m) for name, m in answers.items() if name not in p.inputs}
    report = check_answers(key, answers_from_dict(table, label="answers"))
    if report.unread:
        raise InputError(report.unread[0], file="answers")
    return Marks(report)


def kinds() -> list:
    """Every problem kind with its parameters (defaults, the values hand and calculator
    mode accept), what each mode draws and the mistakes ``check`` names: the
    :class:`worksheet.catalogue.KindInfo` that ``worksheet list KIND`` prints."""
    from .catalogue import kind_infos

    return kind_infos()


def build(*problems: str, spec: Any = None, seed: int | None = None, variants: int | None = None,
          title: str | None = None, **options):
    """What ``worksheet build`` makes, as documents: ``build("attention", "layer-norm",
    seed=7, causal=True)`` gives one :class:`~worksheet.document.Document` (sheet and key
    are its renderings); ``build(spec="exam.toml", variants=30)`` gives one per variant.
    Problems are kinds or ``KIND:key=value`` texts; options as the CLI's (``numbers``,
    ``seq_len``, ``heads``, ...), checked first, with the same rules."""
    from .build import build_document, build_variants, check_problems, resolve_build

    plan = resolve_build(spec, problems, seed=seed, options={k: _plain(v) for k, v in options.items()},
                         title=title, variants=variants)
    check_problems(plan.problems, plan.options)
    if plan.variants:
        return build_variants(plan.problems, plan.variants, **plan.document_args())
    return build_document(plan.problems, **plan.document_args())


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
        return self.steps[step]

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


def _entries(m: Any) -> Any:
    """A matrix as lists of ints and exact text (what an input or answer file reads to)."""
    if hasattr(m, "tolist"):  # numpy arrays and sympy matrices
        m = m.tolist()
    if isinstance(m, (list, tuple)):
        return [_entries(x) for x in m]
    return _plain(m)


def _plain(x: Any) -> Any:
    """One value as a file would give it: floats as their shortest text (exact decimal), -inf as -oo."""
    if isinstance(x, (bool, str, int)) or x is None:
        return x
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}"
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if hasattr(x, "dtype") and hasattr(x, "item"):  # a numpy scalar
        return _plain(x.item())
    if isinstance(x, float):
        return "-oo" if x == float("-inf") else repr(x)
    if getattr(x, "is_Number", False) or getattr(x, "free_symbols", None) == set():  # a sympy number
        return str(x)
    return x  # the reader names what it cannot take
