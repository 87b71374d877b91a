"""Numbers out of exact values: floats that never raise, and exact signs.

``to_float`` is the correctly rounded float64 (:mod:`.rounding` decides it
with a decimal midpoint and radius at rising precision; mpmath at 80 bits only
where no precision bounds it, e.g. ``e^{2^{50}}``).  ``sign`` is decided exactly: from the tree
where it tells, else by interval arithmetic (outward-rounded floats, then
mpmath intervals at growing precision), never guessed from a float.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .core import _FLOAT_MAX, _rat_float
from .mp_eval import iv_context, iv_eval as _iv_eval
from .nodes import OPERATIONS, Add, Expr, Func, Mul, NegInf, Pow, exact
from .rounding import nearest

__all__ = ["to_float", "sign"]


# ---------------------------------------------------------------- evaluation
def to_float(x) -> float:
    """The float64 nearest an exact value, correctly rounded (decided by
    :func:`.rounding.nearest`, never from libm's last bit, so the same on every
    machine): ``inf`` for ``e^{1000}`` or ``10^{400}``, ``0.0`` for
    ``e^{-1000}``, ``-inf`` for -oo.  Never raises."""
    if type(x) is Fraction:  # the common case, without Fraction's property calls
        try:
            return x._numerator / x._denominator
        except OverflowError:
            return math.inf if x._numerator > 0 else -math.inf
    if isinstance(x, Fraction):
        return _rat_float(Fraction(x))
    if isinstance(x, int):
        return _rat_float(Fraction(x))
    if isinstance(x, Expr):  # what float(x) gives, without the call through Expr.__float__
        try:
            return x._fv
        except AttributeError:
            x._fv = nearest(x)
            return x._fv
    return float(x)


# ---------------------------------------------------------------- signs
def sign(x) -> int:
    """The exact sign (-1, 0 or 1) of an exact value.

    From the structure where it tells; else by interval arithmetic (floats
    rounded outwards, then mpmath intervals at 64, 128, ... 4096 bits).
    Raises ValueError if the sign is still undecided (a zero the normal form
    does not recognise): never a guess from a float.
    """
    if type(x) is Fraction:
        return (x._numerator > 0) - (x._numerator < 0)
    if isinstance(x, NegInf):
        return -1
    if not isinstance(x, Expr):
        x = exact(x)
        return sign(x)
    try:
        return x._sg
    except AttributeError:
        pass
    s = _structural_sign(x)
    if not s:
        lo, hi = _float_bounds(x)
        s = 1 if lo > 0 else -1 if hi < 0 else _mp_sign(x)
    x._sg = s
    return s


def _structural_sign(x) -> int:
    """The sign read off the tree (exp > 0, roots > 0, ...); 0: not known this way."""
    if type(x) is Fraction:
        return (x._numerator > 0) - (x._numerator < 0)
    try:
        return x._sg
    except AttributeError:
        pass
    if isinstance(x, Func):
        if x.name == "exp":
            return 1
        return _structural_sign(x.arg) if x.name == "tanh" else 0
    if isinstance(x, Pow):
        e = x.exponent
        if type(x.base) is Fraction or e._denominator != 1:
            return 1
        s = _structural_sign(x.base)
        return s if e._numerator % 2 else abs(s)
    if isinstance(x, Mul):
        s = (x.coeff._numerator > 0) - (x.coeff._numerator < 0)
        for f in x.factors:
            s *= _structural_sign(f)
        return s
    signs = {_structural_sign(t) for t in x.terms}
    if x.const:
        signs.add(1 if x.const > 0 else -1)
    return signs.pop() if len(signs) == 1 else 0


_EPS = 2.0**-50  # relative widening: a few ulps, more than libm's error


def _widen(lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] a few ulps wider; an overflowed bound inside the interval is
    clamped to the largest float (still a bound), nan makes it unknown."""
    if lo != lo or hi != hi:
        return -math.inf, math.inf
    lo = _FLOAT_MAX if lo == math.inf else lo - abs(lo) * _EPS - 5e-324
    hi = -_FLOAT_MAX if hi == -math.inf else hi + abs(hi) * _EPS + 5e-324
    return lo, hi


def _float_bounds(x) -> tuple[float, float]:
    """Float bounds lo <= x <= hi (outward rounded; +-inf where unknown)."""
    if type(x) is Fraction:
        v = _rat_float(x)
        return _widen(v, v)
    try:
        return x._iv
    except AttributeError:
        pass
    try:
        out = _bounds_of(x)
    except (ArithmeticError, ValueError):
        out = (-math.inf, math.inf)
    x._iv = out
    return out


def _ipow(lo: float, hi: float, e: Fraction) -> tuple[float, float]:
    """Bounds of x**e for lo <= x <= hi."""
    k = e.numerator
    if e.denominator != 1:
        lo = max(lo, 0.0)
    elif lo <= 0 <= hi:
        if k < 0:
            return -math.inf, math.inf
        if k % 2 == 0:
            return 0.0, max(_fpow(lo, e), _fpow(hi, e))
    a, b = _fpow(lo, e), _fpow(hi, e)
    return _widen(min(a, b), max(a, b))


def _fpow(v: float, e: Fraction) -> float:
    try:
        return (
            v ** _rat_float(e)
            if e.denominator != 1
            else v**e.numerator
            if abs(v) != math.inf
            else math.inf**e.numerator
            if v > 0
            else (-math.inf) ** e.numerator
        )
    except OverflowError:
        return math.inf if v > 0 or e.numerator % 2 == 0 else -math.inf
    except ZeroDivisionError:
        return math.inf


def _bounds_of(x) -> tuple[float, float]:
    if isinstance(x, Add):
        ls, hs = [_float_bounds(x.const)[0]], [_float_bounds(x.const)[1]]
        for t in x.terms:
            lo, hi = _float_bounds(t)
            ls.append(lo)
            hs.append(hi)
        return _widen(math.fsum(ls), math.fsum(hs))
    if isinstance(x, Mul):
        lo, hi = _float_bounds(x.coeff)
        for f in x.factors:
            a, b = _float_bounds(f)
            ps = (lo * a, lo * b, hi * a, hi * b)
            lo, hi = _widen(min(ps), max(ps))
        return lo, hi
    if isinstance(x, Pow):
        lo, hi = _float_bounds(x.base)
        return _ipow(lo, hi, x.exponent)
    lo, hi = _float_bounds(x.arg)
    if x.name in ("exp", "tanh"):
        f = _safe_exp if x.name == "exp" else math.tanh
        return _widen(f(lo), f(hi))
    f = math.sin if x.name == "sin" else math.cos
    d = math.cos if x.name == "sin" else lambda t: -math.sin(t)
    width = hi - lo
    if width < 1.0 and abs(d((lo + hi) / 2)) > width:  # monotone on [lo, hi]
        a, b = f(lo), f(hi)
        return _widen(min(a, b), max(a, b))
    return -1.0, 1.0


def _safe_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


_MP_PRECISIONS = (64, 128, 256, 512, 1024, 2048, 4096)


def _mp_sign(x) -> int:
    """The sign from mpmath intervals at growing precision (ValueError if never decided)."""
    for prec in _MP_PRECISIONS:
        try:
            v = _iv_eval(x, iv_context(prec))
        except (ArithmeticError, ValueError):
            continue
        if v.a > 0:
            return 1
        if v.b < 0:
            return -1
    raise ValueError(f"cannot decide the sign of {x} (it may be 0)")


OPERATIONS.to_float = to_float  # float() of an Expr
