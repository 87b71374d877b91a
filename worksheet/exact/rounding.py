"""Decimals out of exact values, the same on every machine.

* :func:`nearest`: the float64 nearest an exact value (correctly rounded, ties
  to even), what the JSON ``value`` and a Moodle answer hold;
* :func:`round_scaled`: ``x * 10^places`` rounded to an integer, half away
  from zero, what a table with ``places`` decimals prints (read off the
  correctly rounded double where that provably decides it, see
  :func:`_from_nearest`).

Both are decided, never guessed from a float computed along the way (whose
last bit depends on the CPU, libm and numpy build).  An exact value is
evaluated as a *midpoint and radius* in decimal arithmetic (the ``decimal``
module: correctly rounded ``+ - * /``, ``sqrt`` and ``exp``, in C) with a
rigorous error bound carried node by node, first with 30 digits; the answer is
taken when both ends of ``[mid - rad, mid + rad]`` round to the same double
(or the same N-place decimal).  Otherwise the digits are doubled and the value
evaluated again (Ziv's loop) up to 1920 digits, beyond which the midpoint is
rounded (the value is then within 10^-1900 of a rounding boundary: a zero or
tie the normal form does not see).  ``sin`` and ``cos`` are Taylor series in
integers after reduction by pi/2 (pi by Machin's formula), a root of an integer
up to the 32nd is an integer root; other roots go through mpmath intervals at
the matching precision.  Each node keeps its midpoint and radius, so a
softmax's shared sums are evaluated once.

Nothing here depends on libm or numpy: a float appears only where its error is
bounded and cannot change the answer (a Newton start that is checked, the
double read off for a table in :func:`_from_nearest`), so the result depends
only on the exact value.  Rationals are rounded with integer arithmetic.
"""

from __future__ import annotations

import decimal as _dec
import math
from decimal import Decimal
from fractions import Fraction

from .decimal_eval import DIGITS, PRECS, Hard, Prec, mid_rad
from .mp_eval import mp_float
from .nodes import Expr, NegInf

__all__ = ["nearest", "round_scaled", "decimal_places"]


# ---------------------------------------------------------------- the two roundings
def _decide(x: Expr, decide):
    """``decide(lo, hi, P)`` at rising precision until it answers (not None); else
    the midpoint at the highest precision.  (Every decimal operation here names
    its context: the thread's default context would round to 28 digits.)"""
    last = None
    for digits in DIGITS:
        P = PRECS[digits]
        try:
            v, r = mid_rad(x, P)
        except Hard:
            continue
        out = decide(P.lo.subtract(v, r), P.hi.add(v, r), P)
        if out is not None:
            return out
        last = v
    return last


def nearest(x) -> float:
    """The float64 nearest the exact value ``x`` (ties to even; +-inf beyond
    the range, 0.0 or a subnormal below it); ``-inf`` for -oo."""
    if type(x) is Fraction:
        try:
            return x._numerator / x._denominator  # int / int is correctly rounded
        except OverflowError:
            return math.inf if x._numerator > 0 else -math.inf
    if isinstance(x, NegInf):
        return -math.inf
    if isinstance(x, int):
        return nearest(Fraction(x))
    if not isinstance(x, Expr):
        return nearest(Fraction(x))

    def same(lo: Decimal, hi: Decimal, P: Prec):
        a, b = float(lo), float(hi)  # a decimal's float is correctly rounded
        return a if a == b and math.copysign(1.0, a) == math.copysign(1.0, b) else None

    out = _decide(x, same)
    if out is None:  # not even 30 digits could bound it (huge arguments): mpmath's float
        return mp_float(x)
    return out if type(out) is float else float(out)


def _half_away(q: Fraction) -> int:
    n, d = q._numerator, q._denominator
    k = (2 * abs(n) + d) // (2 * d)
    return k if n >= 0 else -k


def round_scaled(x, places: int) -> int:
    """``x * 10^places`` rounded to the nearest integer, half away from zero,
    decided exactly (for a rational, ties too)."""
    if type(x) is not Fraction and not isinstance(x, Expr):
        x = Fraction(x)
    if type(x) is Fraction or isinstance(x, Fraction):
        return _half_away(Fraction(x) * 10**places)
    k = _from_nearest(x, places)
    if k is not None:
        return k

    def same(lo: Decimal, hi: Decimal, P: Prec):
        a = lo.scaleb(places, P.lo).to_integral_value(_dec.ROUND_HALF_UP)
        b = hi.scaleb(places, P.hi).to_integral_value(_dec.ROUND_HALF_UP)
        return int(a) if a == b else None

    out = _decide(x, same)
    if out is None:  # a value no precision can bound (huge arguments): mpmath's float
        v = mp_float(x)
        if not math.isfinite(v):
            raise ValueError("too large to write with decimals")
        return _half_away(Fraction(v) * 10**places)
    if type(out) is int:
        return out
    return int(out.scaleb(places, PRECS[DIGITS[-1]].wide).to_integral_value(_dec.ROUND_HALF_UP))


def _from_nearest(x: Expr, places: int) -> int | None:
    """The rounding read off the correctly rounded double f of x, when that
    provably decides it: with t = |f| 10^places < 10^9, t is within 2.3e-7 of
    |x| 10^places (half an ulp of f, scaled, plus the rounding of the product),
    so when t's fraction is further than 1e-6 from 1/2, x rounds as t does.
    None otherwise (then decimals decide)."""
    try:
        f = x._fv  # the double, kept on the node (see numeric.to_float)
    except AttributeError:
        f = x._fv = nearest(x)
    if not (math.isfinite(f) and 0 <= places <= 15):
        return None
    t = abs(f) * 10.0**places
    if t >= 1e9:
        return None
    whole = math.floor(t)
    frac = t - whole  # exact
    if abs(frac - 0.5) <= 1e-6:
        return None
    k = int(whole) + (frac > 0.5)
    return -k if f < 0 else k


_POW10 = tuple(10**k for k in range(40))
_RATIONAL_TEXT: dict[tuple[int, int, int], str] = {}


def decimal_places(x, places: int) -> str:
    """``x`` with exactly ``places`` decimals, rounded half away from zero
    (``-0.0000`` is written ``0.0000``).  An expression keeps its text (values
    are immutable and shared: a key prints the same entry in several places)."""
    if type(x) is Fraction and places < 40:  # the common case, in integers (remembered)
        key = (x._numerator, x._denominator, places)
        text = _RATIONAL_TEXT.get(key)
        if text is None:
            n, d = x._numerator, x._denominator
            k = (2 * abs(n) * _POW10[places] + d) // (2 * d)
            if len(_RATIONAL_TEXT) >= 1 << 14:
                _RATIONAL_TEXT.clear()
            text = _RATIONAL_TEXT[key] = _digits(-k if n < 0 else k, places)
        return text
    if isinstance(x, Expr):
        try:
            printed = x._printed
        except AttributeError:
            printed = x._printed = {}
        text = printed.get(places)  # the printers' keys are names, never ints
        if text is None:
            text = printed[places] = _digits(round_scaled(x, places), places)
        return text
    return _digits(round_scaled(x, places), places)


def _digits(k: int, places: int) -> str:
    """The integer ``k`` scaled by 10^-places, as text."""
    digits = str(abs(k)).rjust(places + 1, "0")
    body = digits[:-places] + "." + digits[-places:] if places > 0 else digits
    return "-" + body if k < 0 else body
