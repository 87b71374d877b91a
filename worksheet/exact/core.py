"""The number core of the exact layer: rationals are plain Fractions.

Shared constants (a Fraction call costs time, and Fractions are immutable),
:func:`rational` with shared small integers, a float of a rational that never
raises, and the memo wrapper of the constructors (:func:`_memoised`).  No
expression types here: :mod:`.nodes` builds on this module.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["HALF", "ZERO", "ONE", "rational", "is_rational"]

HALF = Fraction(1, 2)
# shared constants: Fractions are immutable, and Fraction(0) costs a call each time
ZERO = Fraction(0)
ONE = Fraction(1)
_INTS = {k: Fraction(k) for k in range(-64, 65)}
_FLOAT_MIN = 2.2250738585072014e-308  # the smallest normal float64
_FLOAT_MAX = 1.7976931348623157e308
_HUGE_ARG = 2.0**40  # exp, tanh of more than this: inf/0, +-1 without mpmath's big work


def rational(numerator: int, denominator: int = 1) -> Fraction:
    """``Fraction(numerator, denominator)``; small integers are shared values
    (Fractions are immutable, and exact arithmetic makes many of them)."""
    if denominator == 1 and -64 <= numerator <= 64:
        return _INTS[numerator]
    return Fraction(numerator, denominator)


def is_rational(x) -> bool:
    return type(x) is Fraction or isinstance(x, (int, Fraction))


def _rat_float(q: Fraction) -> float:
    """float(q) without OverflowError: +-inf beyond the float range, 0.0 below it."""
    try:
        return q._numerator / q._denominator
    except OverflowError:
        return math.inf if q._numerator > 0 else -math.inf


_MEMO_MAX = 1 << 16


def _memo_key(xs: tuple) -> tuple:
    # Fractions hash slowly (a modular inverse each time): key them by their ints
    return tuple([(x._numerator, x._denominator) if type(x) is Fraction else x for x in xs])


def _memoised(build):
    """``build(args)`` remembered by the (structural) arguments: values are
    immutable and shared, so equal arguments may share one result, which then
    prints and converts to float once (a softmax makes the same sums, powers
    and e^q many times).  At most 65,536 results are kept per constructor."""
    table: dict = {}

    def memo(*xs):
        key = _memo_key(xs)
        out = table.get(key)
        if out is None:
            if len(table) >= _MEMO_MAX:
                table.clear()
            out = table[key] = build(xs)
        return out

    memo.__name__, memo.__doc__, memo.table = build.__name__.lstrip("_"), build.__doc__, table
    return memo
