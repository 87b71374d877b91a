r"""Worked lines as trees: numbers in products, entry symbols, sums that
elide their middle terms when long, and the choice between exact and
decimal printing, as :mod:`worksheet.solution.maths` nodes that every
format prints with its own printer (``str()`` of a node is its LaTeX).
The choices of numbers are :mod:`worksheet.steps.line_choices`'.

Which helper when
-----------------
A worked line shows one entry's arithmetic.  Pick by what the line prints:

* Exact throughout (hand mode, the attention steps): :func:`lx` for a number
  inside a product (negatives in parentheses), :func:`dot_latex` for a whole
  dot product ``a_1 b_1 + a_2 b_2``, a ``Value`` for the result.
* Decimals where exact forms would be unreadable (the layer kinds, and long
  chains that carry 4-place values): :func:`work_term` for a number inside a
  line (integers, terminating decimals ``0.75``, short exact forms, else 4
  decimals, and it says whether it rounded), :func:`work_result` for the
  ``= value`` / ``≈ value`` that ends the line, :func:`dot_work` for a whole
  dot product (``≈`` as soon as one term was rounded).  "Short" is
  :data:`~worksheet.steps.line_choices.SHORT`, 40 characters of the value's ``str``.
* A decimal only: :func:`approx_number` (4 places; ``≈`` is the caller's).
* Calculator mode: decimals lead; write an exact value into a line only if
  :func:`worksheet.steps.line_choices.shown` says so.

:func:`entry` names the worked entry (``s_{12}``); :func:`chain` writes
``a = b = c`` without repeated sides; :func:`latex_text` puts a user's label
into a formula as a text leaf.
"""

from __future__ import annotations

from functools import lru_cache

from fractions import Fraction
from typing import Sequence

from ..exact import NegInf, is_rational, to_latex, to_str
from ..solution.maths import Maths, Node, Row, as_tree
from ..solution.maths.build import entry as _entry
from ..solution.maths.build import join, line, number, paren, text
from ..solution.maths.nodes import Fence, Ident, Op, Space, Value
from ..solution.number_format import decimal, given, terminating_places
from .line_choices import LONG_SUM, SHORT, approx, fit_places, term_value

__all__ = [
    "nx",
    "lx",
    "join_terms",
    "terms_count",
    "dot_latex",
    "entry",
    "approx_number",
    "work_term",
    "work_result",
    "dot_work",
    "weighted_sum",
    "chain",
    "latex_text",
    "unwrapped",
]


def _negative(x) -> bool:
    """Is the printed value of ``x`` led by a minus (so that it needs parentheses in a product)?"""
    return to_latex(x).startswith("-")


def nx(x) -> Node:
    """An exact number as the sheet prints a given one: a terminating rational
    as its decimal (0.1, not 1/10), any other value exactly."""
    if type(x) is Fraction and terminating_places(x) is not None:
        return number(given(x))
    return Value(x)


def lx(x, decimals: bool = False) -> Node:
    """An exact number, a negative one in parentheses (for products); ``decimals``: as :func:`nx`."""
    n = nx(x) if decimals else Value(x)
    return paren(n) if _negative(x) else n


def join_terms(terms: Sequence[Node], op: str = "+") -> Row:
    """``t_1 + t_2 + ... + t_n``; past :data:`LONG_SUM` terms the middle ones
    are elided: ``t_1 + t_2 + t_3 + … + t_n`` (see :func:`terms_count`)."""
    terms = list(terms)
    if len(terms) > LONG_SUM:
        terms = terms[:3] + [Ident("…")] + terms[-1:]
    return join(terms, op)


def terms_count(n: int) -> Row:
    """``\\quad (64 terms)`` after a worked line whose sum of ``n`` terms was elided, else nothing."""
    if n <= LONG_SUM:
        return Row()
    return Row((Space("1em"), Op("("), text(f"{n} terms"), Op(")")))


def dot_latex(a: Sequence, b: Sequence, decimals: bool = False) -> Row:
    """``1 ⋅ 0 + 2 ⋅ 1 + (−1) ⋅ 1`` (long ones elided); ``decimals``: as :func:`lx`."""
    return join_terms([line(lx(x, decimals), "⋅", lx(y, decimals)) for x, y in zip(a, b)])


def entry(sym: Maths, i: int, j: int) -> Node:
    """``s_{12}`` for 0-based (i, j) (``s_{10,2}`` past 9)."""
    return _entry(as_tree(sym), i, j)


def approx_number(x, places: int = 4) -> Node:
    """``x`` to ``places`` decimals, as a number in a line."""
    return number(approx(x, places))


def _decimal_node(s: str, negative: bool) -> Node:
    return paren(number(s)) if negative else number(s)


@lru_cache(maxsize=16384)
def _rational_term(num: int, den: int, places: int | None) -> Node:
    """A rational number ``num / den`` in a worked line (see :func:`work_term`); kept, as
    the same inputs and weights recur on every line (by its integers: a Fraction's own
    hash costs more than what it keeps)."""
    q = Fraction(num, den)
    own = terminating_places(q)
    if q.denominator > 1 and own is not None:
        return _decimal_node(decimal(q, max(own, places or 0)), q < 0)
    return lx(q)


def work_term(x, limit: int = SHORT, places: int | None = None, digits: int = 4) -> tuple[Node, bool]:
    """One number inside a worked line, and whether it was rounded (see
    :func:`work_term`: integers, terminating
    decimals, fractions, short exact forms, else ``digits`` decimals;
    negative numbers and sums in parentheses)."""
    if isinstance(x, NegInf):
        return paren(line("-", Ident("∞"))), False
    if is_rational(x):
        q = x if type(x) is Fraction else Fraction(x)
        return _rational_term(q.numerator, q.denominator, places), False
    if len(to_str(x)) <= limit:
        s = to_latex(x)
        return (Fence("(", Row((Value(x),)), ")") if " " in s or s.startswith("-") else Value(x)), False
    s = approx(x, digits)
    return _decimal_node(s, s.startswith("-")), True


def unwrapped(n: Node) -> Node:
    """A term without the parentheses :func:`work_term` put around it (a line's result)."""
    if type(n) is Row and len(n.items) >= 3 and n.items[0] == Op("(") and n.items[-1] == Op(")"):
        inner = n.items[1:-1]
        return inner[0] if len(inner) == 1 else Row(inner)
    return n


def work_result(x, limit: int = SHORT, places: int | None = None) -> Row:
    """``= value`` for the end of a worked line: exact when short, else ``≈`` 4 decimals."""
    if isinstance(x, NegInf) or (is_rational(x) and len(to_str(x)) <= limit):
        return line("=", unwrapped(work_term(x, limit, places)[0]))
    if len(to_str(x)) <= limit:
        return line("=", Value(x), "≈", approx_number(x))
    return line("≈", approx_number(x))


def dot_work(
    lhs: Maths, a: Sequence, b: Sequence, result, *, plus=None, limit: int = SHORT, places: int | None = None
) -> Row:
    """``lhs = a_1 b_1 + a_2 b_2 + ... (+ plus) = result``, one worked entry of a product
    ."""
    a, b = list(a), list(b)
    digits = 4
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
        terms.append(line(sx, "⋅", sy))
    if plus is not None:
        s, r = work_term(plus, limit, digits=digits)
        rounded = rounded or r
        terms.append(s)
    res = work_result(result, 0 if rounded else SHORT if is_rational(result) else limit, places)
    if rounded and res.items[0] == line("=").items[0]:
        res = line("≈", Row(res.items[1:]))
    return line(as_tree(lhs), "≈" if rounded else "=", join_terms(terms), res, terms_count(len(terms)))


def weighted_sum(weights: Sequence, values: Sequence, result, carried: bool = False, decimals: bool = False) -> Row:
    """``≈ 0.2119 ⋅ (−1) + 0.5761 ⋅ 0 ≈ −0.2119``: one entry of ``A V``
    ."""

    def integer(x) -> bool:
        return is_rational(x) and Fraction(x).denominator == 1

    def exact(w) -> bool:
        return integer(w) or (not carried and is_rational(w) and terminating_places(Fraction(w), 4) is not None)

    rel = "=" if all(exact(w) for w in weights) else "≈"
    at = 4
    if all(is_rational(v) for v in values) and not integer(result):
        at = fit_places(
            weights,
            lambda ws: sum((w * Fraction(v) for w, v in zip(ws, values)), Fraction(0)),
            result,
            at=lambda w, p: Fraction(w) if integer(w) else Fraction(approx(w, p)),
        )

    def weight(w) -> Node:
        if integer(w):
            return lx(w)
        same = Fraction(approx(w)) == Fraction(approx(w, at))
        return approx_number(w) if same else approx_number(w, at)

    terms = join_terms([line(weight(w), "⋅", lx(v, decimals)) for w, v in zip(weights, values)])
    res = Value(result) if integer(result) else approx_number(result)
    return line(rel, terms, rel, res)


def chain(*sides: Maths) -> Row:
    """``a = b = c``, each side once (``5/2 = 5/2`` says nothing)."""
    out = [as_tree(sides[0])]
    for side in sides[1:]:
        t = as_tree(side)
        if t != out[-1]:
            out.append(t)
    return join(out, "=")


def latex_text(s: str) -> Node:
    """A label (a token) inside a formula: a text leaf, shown as its own characters."""
    return text(s)
