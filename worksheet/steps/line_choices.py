"""The numbers of a worked line: how a value is shown in it (exactly, or as a
decimal of how many places) and which entry a step works out.  The lines
themselves are trees, built by :mod:`worksheet.steps.line_trees` (which says
which helper to use when); this module holds the choices they share with the
checker and the tables.

* :data:`SHORT`: an exact value "reads well" in a line while its ``str`` has at
  most 40 characters; :data:`LONG_SUM`: a sum of more terms shows its first 3 and
  last 1.
* :func:`approx` (4 places), :func:`decimal_at` (more where a line's result needs
  them), :func:`fit_places` (the fewest places at which the printed numbers give
  the printed result), :func:`printed_at`, :func:`term_value`.
* Calculator mode (``numbers = "calculator"``, :func:`calculator`): decimals lead;
  an exact value goes into a line only if :func:`shown` says so (its LaTeX has at most
  :data:`worksheet.solution.problem.EXACT_SHOWN_CHARS` characters).
* :func:`nonzero_entry`, :func:`busiest_entry`, :func:`sum_entry`: the worked entry;
  :func:`max_not_zero`: a softmax row worth working.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from ..exact import NegInf, is_rational, sign, to_latex, to_str
from ..solution.number_format import decimal, terminating_places
from ..solution.problem import EXACT_SHOWN_CHARS, Matrix, Problem, shape

__all__ = [
    "SHORT",
    "LONG_SUM",
    "MOST_PLACES",
    "calculator",
    "approx",
    "term_value",
    "printed_at",
    "fit_places",
    "decimal_at",
    "nonzero_entry",
    "busiest_entry",
    "sum_entry",
    "max_not_zero",
    "shown",
]

SHORT = 40  # an exact entry "reads well" while its str() has at most this many characters
LONG_SUM = 6  # a worked sum of more terms than this shows its first 3 and last 1 (and says how many)
MOST_PLACES = 8  # a calculator line's rounded factors carry at most this many places


def calculator(p: Problem) -> bool:
    """A calculator sheet: its worked lines write numbers as decimals, as it gives them."""
    return p.params.get("numbers") == "calculator"


def approx(x, places: int = 4) -> str:
    return decimal(x, places)


def term_value(x, limit: int, digits: int) -> Fraction | None:
    """The value :func:`work_term` prints for ``x`` with ``digits``; None for an exact form."""
    if isinstance(x, NegInf):
        return None
    if is_rational(x):
        return Fraction(x)
    if len(to_str(x)) <= limit:
        return None
    return Fraction(approx(x, digits))


def printed_at(x, places: int) -> Fraction | None:
    """The value a line prints for ``x`` when its rounded numbers carry ``places``
    decimals: ``x`` itself when it is a decimal of at most 6 places (printed as
    it is), else ``x`` rounded to ``places``; None for a value printed as an exact form."""
    if isinstance(x, NegInf):
        return None
    if is_rational(x):
        q = Fraction(x)
        if terminating_places(q) is not None:
            return q
    return Fraction(decimal(x, places))


def fit_places(values: Sequence, combine, result, places: int = 4, at=None) -> int:
    """The fewest places, from ``places`` up to :data:`MOST_PLACES`, at which the rounded
    ``values`` printed on a line give ``result`` rounded to ``places`` again: ``combine``
    takes their printed values (exact Fractions) and returns the line's result, which
    must round to the printed ``result``.  A calculator key computes from unrounded
    values, so ``0.6130 \\cdot (-0.7842) \\approx -0.4808`` is false as printed (the
    printed factors give -0.4807); with 5 places, ``0.61304 \\cdot (-0.78425)`` gives it.
    ``at(x, p)``: how the line prints a value with p places (default :func:`printed_at`)."""
    at = at or printed_at
    want = decimal(result, places)
    for p in range(places, MOST_PLACES + 1):
        shown = [at(v, p) for v in values]
        if any(v is None for v in shown):
            return places
        if decimal(Fraction(combine(shown)), places) == want:
            return p
    return MOST_PLACES


def decimal_at(x, digits: int) -> str:
    """``x`` to 4 decimals, or to ``digits`` where those say more (a factor whose line needs them)."""
    four, more = decimal(x), decimal(x, digits)
    return four if digits <= 4 or Fraction(four) == Fraction(more) else more


def nonzero_entry(C: Matrix) -> tuple[int, int]:
    """The worked entry of a matrix step: (0, 1) (the second of the first row),
    unless it is 0 or masked; then the first entry in reading order that is
    neither (a worked entry that comes out 0 teaches nothing)."""
    n, m = shape(C)
    first = (0, min(1, m - 1))
    cells = [first] + [(i, j) for i in range(n) for j in range(m)]
    return next(((i, j) for i, j in cells if not isinstance(C[i][j], NegInf) and C[i][j] != 0), first)


def busiest_entry(A: Matrix, B: Matrix) -> tuple[int, int]:
    """The (i, j) of ``A B`` whose dot product has the most non-zero terms (the
    first such), so that a worked entry shows real arithmetic."""
    best, at = -1, (0, 0)
    for i, row in enumerate(A):
        for j in range(len(B[0])):
            k = sum(1 for x, r in zip(row, B) if x != 0 and r[j] != 0)
            if k > best:
                best, at = k, (i, j)
    return at


def sum_entry(A: Matrix, B: Matrix, C: Matrix) -> tuple[int, int]:
    """The worked entry of an entrywise sum ``C = A + B`` (a one-row ``B`` added
    to every row): the first, in reading order, whose result and both terms are
    non-zero; else whose result is; else (0, 0).  A result of 0, or a term of 0
    (the result then equals an input), teaches nothing."""
    n, m = shape(C)
    cells = [(i, j) for i in range(n) for j in range(m)]

    def b(i, j):
        return B[0][j] if len(B) == 1 else B[i][j]

    for ok in (lambda i, j: C[i][j] != 0 and A[i][j] != 0 and b(i, j) != 0, lambda i, j: C[i][j] != 0):
        at = next(((i, j) for i, j in cells if ok(i, j)), None)
        if at is not None:
            return at
    return (0, 0)


def max_not_zero(xs) -> bool:
    """The maximum of ``xs`` (exact, no -oo) is not 0, decided exactly: a softmax
    row whose maximum ``m_i`` is 0 subtracts nothing, a trivial worked line."""
    signs = [sign(x) for x in xs]
    return any(s > 0 for s in signs) or 0 not in signs


def shown(p: Problem, x) -> bool:
    """An exact value goes into a worked line: always in hand mode, in
    calculator mode only when short (see :data:`worksheet.solution.problem.EXACT_SHOWN_CHARS`)."""
    return p.params.get("numbers") != "calculator" or len(to_latex(x)) <= EXACT_SHOWN_CHARS
