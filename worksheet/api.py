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

Every argument is checked at the door (:mod:`worksheet.parse.arguments`): a wrong
type or shape (``None``, a kind name where a problem is expected, a matrix
nested too deep or holding itself) raises
:class:`~worksheet.policy.errors.ArgumentError`, a ``TypeError``; a value that
cannot work (``"abc"`` as an entry, NaN, infinity, a complex number, a
number too long to print) a ``ValueError`` subclass of
:class:`~worksheet.policy.errors.WorksheetError`; an unknown step name
:class:`~worksheet.policy.errors.UnknownStepError` (a ``LookupError``).  Each is one
line naming the argument.
"""

from __future__ import annotations

from typing import Any, Mapping

from .parse.arguments import kind_argument, mapping_argument, matrix_argument, option_value
from .build import ProblemSpec, build_document, solve_table
from .check.in_memory import Marks
from .check.in_memory import check_problem as check
from .solution.problem import Problem

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
