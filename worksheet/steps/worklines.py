"""LaTeX of arithmetic for worked lines: numbers in products, entry symbols,
sums that elide their middle terms when long, and the choice between exact
and decimal printing.  Used by the step builders (:mod:`worksheet.steps.scaled_dot_product`,
which re-exports these names for the kinds) and :mod:`worksheet.steps.layer_steps`.

Which helper when
-----------------
A worked line shows one entry's arithmetic.  Pick by what the line prints:

* Exact throughout (hand mode, the attention steps): :func:`lx` for a number
  inside a product (negatives in parentheses), :func:`dot_latex` for a whole
  dot product ``a_1 b_1 + a_2 b_2``, ``to_latex`` for the result.
* Decimals where exact forms would be unreadable (the layer kinds, and long
  chains that carry 4-place values): :func:`work_term` for a number inside a
  line (integers, terminating decimals ``0.75``, short exact forms, else 4
  decimals, and it says whether it rounded), :func:`work_result` for the
  ``= value`` / ``\\approx value`` that ends the line, :func:`dot_work` for a
  whole dot product (``\\approx`` as soon as one term was rounded).  "Short"
  is :data:`SHORT`, 40 characters of the value's ``str``.
* A decimal only: :func:`approx` (4 places; ``\\approx`` is the caller's).
* Calculator mode (``numbers = "calculator"``): decimals lead.  Write an exact
  value into a line only if :func:`shown` says so: always in hand mode, in
  calculator mode while its LaTeX has at most
  :data:`worksheet.solution.problem.EXACT_SHOWN_CHARS` (32) characters; else
  ``\\approx`` and :func:`approx`.  The same limit decides, for a whole step,
  whether the key prints the exact matrix beside the decimals
  (:func:`worksheet.solution.problem.shows_exact`, stored as the step's ``exact_shown``).

:func:`entry` and :func:`nonzero_entry` / :func:`busiest_entry` name and pick
the worked entry; :func:`chain` writes ``a = b = c`` without repeated sides;
:func:`latex_text` puts a user's label into a formula, escaped.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from ..exact import NegInf, is_rational, sign, to_latex, to_str
from ..solution.number_format import decimal, given, terminating_places
from ..solution.problem import EXACT_SHOWN_CHARS, Matrix, Problem, shape

__all__ = [
    "SHORT",
    "LONG_SUM",
    "lx",
    "nx",
    "calculator",
    "join_terms",
    "terms_count",
    "dot_latex",
    "entry",
    "approx",
    "work_term",
    "work_result",
    "dot_work",
    "weighted_sum",
    "chain",
    "nonzero_entry",
    "busiest_entry",
    "sum_entry",
    "max_not_zero",
    "shown",
    "latex_text",
    "printed_at",
    "fit_places",
    "term_value",
    "decimal_at",
]

SHORT = 40  # an exact entry "reads well" while its str() has at most this many characters


def nx(x) -> str:
    """LaTeX of an exact number as the sheet prints a given one: a terminating
    rational as its decimal (0.1, not 1/10), any other value exactly."""
    return given(x) if type(x) is Fraction else to_latex(x)


def lx(x, decimals: bool = False) -> str:
    """LaTeX of an exact number, negative ones in parentheses (for products);
    ``decimals``: as :func:`nx` (a calculator sheet's worked line, whose
    given numbers are decimals), else exactly (fractions; a carried chain turns
    its own into decimals, :func:`worksheet.kinds.chain.decimal_latex`)."""
    s = nx(x) if decimals else to_latex(x)
    return f"({s})" if s.startswith("-") else s


LONG_SUM = 6  # a worked sum of more terms than this shows its first 3 and last 1 (and says how many)


def join_terms(terms: Sequence[str], sep: str = " + ") -> str:
    """``t_1 + t_2 + ... + t_n``; past :data:`LONG_SUM` terms the middle ones
    are elided: ``t_1 + t_2 + t_3 + \\dots + t_n`` (see :func:`terms_count`)."""
    terms = list(terms)
    if len(terms) > LONG_SUM:
        terms = terms[:3] + [r"\dots"] + terms[-1:]
    return sep.join(terms)


def terms_count(n: int) -> str:
    """``\\quad (64 terms)`` after a worked line whose sum of ``n`` terms was elided, else ''."""
    return rf" \quad (\text{{{n} terms}})" if n > LONG_SUM else ""


def dot_latex(a: Sequence, b: Sequence, decimals: bool = False) -> str:
    """``1 \\cdot 0 + 2 \\cdot 1 + (-1) \\cdot 1`` (long ones elided, :func:`join_terms`);
    ``decimals``: terminating numbers as decimals (:func:`lx`)."""
    return join_terms([f"{lx(x, decimals)} \\cdot {lx(y, decimals)}" for x, y in zip(a, b)])


def calculator(p: Problem) -> bool:
    """A calculator sheet: its worked lines write numbers as decimals, as it gives them."""
    return p.params.get("numbers") == "calculator"


def entry(sym: str, i: int, j: int) -> str:
    """``s_{12}`` for 0-based (i, j)."""
    return f"{sym}_{{{i + 1}{j + 1}}}" if max(i, j) < 9 else f"{sym}_{{{i + 1},{j + 1}}}"


def approx(x, places: int = 4) -> str:
    return decimal(x, places)


def work_term(x, limit: int = SHORT, places: int | None = None, digits: int = 4) -> tuple[str, bool]:
    """LaTeX of one number inside a worked line, and whether it was rounded.

    Integers print as integers, terminating rationals as decimals (as the
    sheet prints given numbers: ``0.75``, and the 4-place values a long chain
    carries), other rationals as fractions (``\\frac{1}{3}``); short
    irrational values exactly (``\\sin\\left(1\\right)``); anything longer as
    4 decimals (then the line says ``\\approx``).  Negative numbers and sums
    come in parentheses, ready for a product.  ``places``: a value of a carried
    chain, whose decimals print with (at least) that many places, ``-0.4060``.
    """
    if isinstance(x, NegInf):
        return r"(-\infty)", False
    if is_rational(x):
        q = Fraction(x)
        own = terminating_places(q)
        if q.denominator > 1 and own is not None:
            s = decimal(q, max(own, places or 0))  # exact: a terminating decimal with these places
            return (f"({s})" if q < 0 else s), False
        return lx(q), False
    if len(to_str(x)) <= limit:
        s = to_latex(x)
        return (rf"\left({s}\right)" if " " in s or s.startswith("-") else s), False
    s = approx(x, digits)  # digits: more than 4 where a line's result needs them (fit_places)
    return (f"({s})" if s.startswith("-") else s), True


def term_value(x, limit: int, digits: int) -> Fraction | None:
    """The value :func:`work_term` prints for ``x`` with ``digits``; None for an exact form."""
    if isinstance(x, NegInf):
        return None
    if is_rational(x):
        return Fraction(x)
    if len(to_str(x)) <= limit:
        return None
    return Fraction(approx(x, digits))


MOST_PLACES = 8  # a calculator line's rounded factors carry at most this many places


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


def weighted_sum(weights: Sequence, values: Sequence, result, carried: bool = False, decimals: bool = False) -> str:
    """``\\approx 0.2119 \\cdot (-1) + 0.5761 \\cdot 0 \\approx -0.2119``: the terms and
    result of one entry of ``A V``, the weights as the sheet's 4-place table has them.

    A weight or a result that is an integer prints as one (a masked row's
    weights ``1`` and ``0``; a result of ``-1``, not ``-1.0000``).  The
    relation is ``=`` where no weight was rounded: every weight an integer,
    or a decimal of at most 4 places that is its exact value (not so for
    ``carried`` weights, the 4-place values a rounding chain goes on with,
    which stand for a softmax's irrational values), else ``\\approx``.
    """

    def integer(x) -> bool:
        return is_rational(x) and Fraction(x).denominator == 1

    def exact(w) -> bool:
        return integer(w) or (not carried and is_rational(w) and terminating_places(Fraction(w), 4) is not None)

    rel = "=" if all(exact(w) for w in weights) else r"\approx"
    at = 4  # places of the rounded weights: as many as the printed result needs (fit_places)
    if all(is_rational(v) for v in values) and not integer(result):
        at = fit_places(
            weights,
            lambda ws: sum((w * Fraction(v) for w, v in zip(ws, values)), Fraction(0)),
            result,
            at=lambda w, p: Fraction(w) if integer(w) else Fraction(approx(w, p)),
        )

    def weight(w) -> str:
        return lx(w) if integer(w) else approx(w) if Fraction(approx(w)) == Fraction(approx(w, at)) else approx(w, at)

    terms = join_terms([f"{weight(w)} \\cdot {lx(v, decimals)}" for w, v in zip(weights, values)])
    res = to_latex(result) if integer(result) else approx(result)
    return f"{rel} {terms} {rel} {res}"


def work_result(x, limit: int = SHORT, places: int | None = None) -> str:
    """``= value`` for the end of a worked line: exact when short, else ``\\approx`` 4 decimals."""
    if isinstance(x, NegInf) or (is_rational(x) and len(to_str(x)) <= limit):
        s, _ = work_term(x, limit, places)
        return "= " + (s[1:-1] if s.startswith("(") and s.endswith(")") else s)
    if len(to_str(x)) <= limit:
        return f"= {to_latex(x)} \\approx {approx(x)}"
    return f"\\approx {approx(x)}"


def dot_work(
    lhs: str, a: Sequence, b: Sequence, result, *, plus=None, limit: int = SHORT, places: int | None = None
) -> str:
    """``lhs = a_1 b_1 + a_2 b_2 + ... (+ plus) = result``, one worked entry of a product.

    Numbers print as :func:`work_term` says (``limit=0``: every irrational
    number as 4 decimals; ``places``: carried decimals with 4 places); if any
    is rounded the line uses ``\\approx``, else a rational result is exact.
    """
    a, b = list(a), list(b)
    digits = 4  # the rounded numbers' places: as many as the printed result needs (fit_places)
    if is_rational(result) or len(to_str(result)) > limit:
        n = len(a)
        extra = [] if plus is None else [plus]
        digits = fit_places(
            a + b + extra,
            lambda v: sum((x * y for x, y in zip(v[:n], v[n : 2 * n])), Fraction(0)) + sum(v[2 * n :], Fraction(0)),
            result,
            at=lambda x, p: term_value(x, limit, p),
        )
    rounded = False
    terms = []
    for x, y in zip(a, b):
        (sx, rx), (sy, ry) = work_term(x, limit, places, digits), work_term(y, limit, places, digits)
        rounded = rounded or rx or ry
        terms.append(f"{sx} \\cdot {sy}")
    if plus is not None:
        s, r = work_term(plus, limit, digits=digits)
        rounded = rounded or r
        terms.append(s)
    res = work_result(result, 0 if rounded else SHORT if is_rational(result) else limit, places)
    if rounded and res.startswith("= "):
        res = "\\approx " + res[2:]
    rel = "\\approx" if rounded else "="
    return f"{lhs} {rel} {join_terms(terms)} {res}{terms_count(len(terms))}"


def chain(*sides: str) -> str:
    """``a = b = c``, each side once (``\\frac{5}{2} = \\frac{5}{2}`` says nothing)."""
    out = [sides[0]]
    for side in sides[1:]:
        if side != out[-1]:
            out.append(side)
    return " = ".join(out)


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


_TEXT_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\^{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\~{}",
}


def latex_text(s: str) -> str:
    """``\\text{...}`` of a label (a token) inside a LaTeX formula, specials escaped."""
    return r"\text{" + "".join(_TEXT_SPECIAL.get(c, c) for c in str(s)) + "}"
