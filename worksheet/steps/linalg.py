"""Exact linear algebra on matrices of exact values (tuples of rows):
products, transposes, stacking, entrywise maps, the causal mask, and the
shape checks that name the matrices in their errors.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction

from ..policy.errors import ShapeError
from ..exact import NEG_INF, add, mul, rational
from ..solution.problem import Matrix, shape

__all__ = [
    "matmul",
    "transpose",
    "entrywise",
    "hstack",
    "columns",
    "add_row",
    "causal_mask",
    "require_matmul",
    "require_shape",
]


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """Exact ``A @ B`` (Fractions stay Fractions; sums of Exprs use exact.add)."""
    Bt = list(zip(*B))
    if all(type(x) is Fraction for row in A for x in row) and all(type(x) is Fraction for c in Bt for x in c):
        # integer arithmetic over a common denominator: one Fraction per entry
        # instead of one per product and partial sum (same values)
        da, Ai = _scaled(A)
        db, Bi = _scaled(Bt)
        den = da * db
        return tuple(tuple(rational(sum(map(operator.mul, row, col)), den) for col in Bi) for row in Ai)
    return tuple(tuple(add(*(mul(a, b) for a, b in zip(row, col))) for col in Bt) for row in A)


def _scaled(rows) -> tuple[int, list[list[int]]]:
    """Fraction rows as (d, integer rows) with rows = integer rows / d."""
    d = 1
    for row in rows:
        for x in row:
            q = x._denominator
            if d % q:
                d = d * q // math.gcd(d, q)
    if d == 1:
        return 1, [[x._numerator for x in row] for row in rows]
    return d, [[x._numerator * (d // x._denominator) for x in row] for row in rows]


def transpose(A: Matrix) -> Matrix:
    return tuple(zip(*A))


def entrywise(f, *Ms: Matrix) -> Matrix:
    return tuple(tuple(f(*xs) for xs in zip(*rows)) for rows in zip(*Ms))


def hstack(*Ms: Matrix) -> Matrix:
    return tuple(sum((tuple(r) for r in rows), ()) for rows in zip(*Ms))


def columns(A: Matrix, start: int, stop: int) -> Matrix:
    return tuple(tuple(row[start:stop]) for row in A)


def add_row(A: Matrix, b: Matrix) -> Matrix:
    """``A + b``: the one-row matrix ``b`` added to every row of ``A`` (a bias)."""
    (row,) = b
    return tuple(tuple(add(x, y) for x, y in zip(r, row)) for r in A)


def causal_mask(S: Matrix) -> Matrix:
    """Entries above the diagonal (j > i) become -oo."""
    return tuple(tuple(NEG_INF if j > i else x for j, x in enumerate(row)) for i, row in enumerate(S))


def require_matmul(a_name: str, A: Matrix, b_name: str, B: Matrix) -> None:
    """Raise ShapeError naming both matrices unless A @ B is defined."""
    (n, k), (k2, m) = shape(A), shape(B)
    if k != k2:
        raise ShapeError(
            f"{a_name} is {n} x {k} and {b_name} is {k2} x {m}: "
            f"{a_name} {b_name} needs the columns of {a_name} ({k}) to equal the rows of {b_name} ({k2})"
        )


def require_shape(name: str, A: Matrix, rows: int | None, cols: int | None, why: str = "") -> None:
    n, m = shape(A)
    if (rows is not None and n != rows) or (cols is not None and m != cols):
        want = f"{rows if rows is not None else 'any'} x {cols if cols is not None else 'any'}"
        raise ShapeError(f"{name} is {n} x {m} but must be {want}{': ' + why if why else ''}")
