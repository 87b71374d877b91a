"""LaTeX of arithmetic for worked lines: numbers in products, entry symbols,
and sums that elide their middle terms when long.  Shared by
:mod:`worksheet.blocks` (which re-exports these names) and
:mod:`worksheet.layer_blocks`.
"""

from __future__ import annotations

from typing import Sequence

from .exact import to_latex
from .fmt import decimal


def lx(x) -> str:
    """LaTeX of an exact number, negative ones in parentheses (for products)."""
    s = to_latex(x)
    return f"({s})" if s.startswith("-") else s


LONG_SUM = 8  # a worked sum of more terms than this shows its first 3 and last 1 (and says how many)


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


def dot_latex(a: Sequence, b: Sequence) -> str:
    """``1 \\cdot 0 + 2 \\cdot 1 + (-1) \\cdot 1`` (long ones elided, :func:`join_terms`)."""
    return join_terms([f"{lx(x)} \\cdot {lx(y)}" for x, y in zip(a, b)])


def entry(sym: str, i: int, j: int) -> str:
    """``s_{12}`` for 0-based (i, j)."""
    return f"{sym}_{{{i + 1}{j + 1}}}" if max(i, j) < 9 else f"{sym}_{{{i + 1},{j + 1}}}"


def approx(x, places: int = 4) -> str:
    return decimal(x, places)
