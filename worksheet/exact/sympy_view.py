"""Exact values as sympy expressions (sympy is the test oracle and a view for
library users; it is imported on first use, never on the hot path)."""

from __future__ import annotations

from fractions import Fraction

from ..policy.errors import MissingExtraError
from .nodes import Add, Func, Mul, NegInf, Pow, exact
from .printing import _num_den

__all__ = ["to_sympy"]


def to_sympy(x):
    """The same value as a sympy expression (imports sympy on first use; sympy is
    the optional extra ``sympy``, and the tests' oracle)."""
    try:
        import sympy
    except ImportError:
        raise MissingExtraError("to_sympy() needs sympy, an optional extra: pip install sympy") from None

    x = exact(x)
    if isinstance(x, NegInf):
        return -sympy.oo
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    if isinstance(x, Add):
        return sympy.Add(to_sympy(x.const), *(to_sympy(t) for t in x.terms))
    if isinstance(x, Mul):
        # numerator over denominator, each multiplied left to right as the
        # printed string reads (sympy distributes 2*(a + b) but not 2*a*(b + c))
        num, den, cn, cd = _num_den(x)
        items = ([] if cn == 1 and num else [sympy.Integer(cn)]) + [to_sympy(f) for f in num]
        if x.coeff < 0:
            items[0] = -items[0]
        top = _left_product(items)
        if not den and cd == 1:
            return top
        return top / _left_product(([] if cd == 1 and den else [sympy.Integer(cd)]) + [to_sympy(f) for f in den])
    if isinstance(x, Pow):
        return sympy.Pow(to_sympy(x.base), to_sympy(x.exponent))
    if isinstance(x, Func):
        return getattr(sympy, x.name)(to_sympy(x.arg))
    raise TypeError(x)  # pragma: no cover


def _left_product(items: list):
    out = items[0]
    for f in items[1:]:
        out = out * f
    return out
