"""Cost guards for :mod:`worksheet.parse.parser`: estimates of the work
exact.py's constructors will do on a value (bits of rationals, trial divisions
for roots, tree children) and a float of each node, checked before the work is
done."""

from __future__ import annotations

import math
from fractions import Fraction

from ..exact import Add, Exact, Expr, Func, Mul, Pow

_SQUAREFREE_CAP = 100_000  # exact.roots stops trial division here (TRIAL_BOUND)


def _bits(q: Fraction) -> int:
    return max(q.numerator.bit_length(), q.denominator.bit_length())


def _weight(x: Exact) -> int:
    """Roughly how many bits of rationals ``mul``/``power`` of ``x`` may compute with."""
    if isinstance(x, Fraction):
        return _bits(x)
    if isinstance(x, Pow) and isinstance(x.base, Fraction):
        return math.ceil(_bits(x.base) * abs(x.exponent))
    if isinstance(x, Mul):
        return _bits(x.coeff) + sum(_weight(f) for f in x.factors)
    return 0


def _root_cost(x: Exact) -> int:
    """Trial divisions exact.py may redo for the rational roots at the top of ``x``."""
    if isinstance(x, Pow) and isinstance(x.base, Fraction):
        return _radicand_cost(x.base)  # mul() may merge n**(1/3) * n**(1/6) into sqrt(n)
    if isinstance(x, Mul):
        return sum(_root_cost(f) for f in x.factors)
    if isinstance(x, Func) and x.name == "exp":
        return _root_cost(x.arg)
    return 0


def _radicand_cost(q: Fraction) -> int:
    return min(math.isqrt(abs(q.numerator * q.denominator)) + 1, _SQUAREFREE_CAP)


def _children(x: Expr) -> tuple:
    if isinstance(x, Add):
        return (x.const, *x.terms)
    if isinstance(x, Mul):
        return (x.coeff, *x.factors)
    if isinstance(x, Pow):
        return (x.base, x.exponent)
    if isinstance(x, Func):
        return (x.arg,)
    raise TypeError(f"not an exact value: {x!r}")  # pragma: no cover


_FLOAT_FUNCS = {"exp": math.exp, "sin": math.sin, "cos": math.cos, "tanh": math.tanh}


def _node_float(x: Exact, values: list) -> float | None:
    """The float of ``x`` from its children's floats; None if not a finite real."""
    if any(v is None for v in values):
        return None
    try:
        if isinstance(x, Fraction):
            v = float(x)
        elif isinstance(x, Add):
            v = math.fsum(values)
        elif isinstance(x, Mul):
            v = math.prod(values)
        elif isinstance(x, Pow):
            v = values[0] ** values[1]
        else:
            v = _FLOAT_FUNCS[x.name](values[0])
    except (ArithmeticError, ValueError):
        return None
    return v if isinstance(v, float) and math.isfinite(v) else None
