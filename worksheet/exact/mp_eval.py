"""Exact values evaluated by mpmath, which uses no libm (the same on every
machine): an interval certain to hold the value (:func:`iv_eval`), and an
80-bit float (:func:`mp_float`) where no interval can be had (huge arguments).

Below :mod:`.numeric` and :mod:`.rounding`, which both build on it.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

from .core import _HUGE_ARG
from .nodes import Add, Mul, Pow

__all__ = ["iv_eval", "iv_context", "mp_float"]


_LOCAL = threading.local()


def mp_float(x) -> float:
    """mpmath at 80 bits (no libm: the same on every machine); the fallback of
    :func:`.rounding.nearest` for values it cannot bound (huge arguments).  Each
    thread has its own context, fixed at 80 bits (mpmath's global one would be
    shared: another thread could change its precision mid-way)."""
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        import mpmath

        ctx = _LOCAL.ctx = mpmath.MPContext()
        ctx.prec = 80
    v = _mp_eval(x, ctx)
    try:
        return float(v)
    except (OverflowError, ValueError):  # pragma: no cover - mpmath gives inf
        return math.inf if v > 0 else -math.inf


def iv_context(prec: int):
    """This thread's mpmath interval context at ``prec`` bits, made once and never
    changed: no call sets a precision that another thread (the practice server
    solves in a thread pool) or an outer call could see.  At most a handful of
    precisions are used (``numeric._MP_PRECISIONS``, ``decimal_eval``'s steps)."""
    cache = getattr(_LOCAL, "iv", None)
    if cache is None:
        cache = _LOCAL.iv = {}
    ctx = cache.get(prec)
    if ctx is None:
        if len(cache) >= 64:  # bounded: precisions are few, but never let it grow
            cache.clear()
        from mpmath.ctx_iv import MPIntervalContext

        ctx = cache[prec] = MPIntervalContext()
        ctx.prec = prec
    return ctx


def _mp_eval(x, mp):
    if type(x) is Fraction:
        return mp.mpf(x._numerator) / x._denominator
    if isinstance(x, Add):
        return mp.fsum([_mp_eval(x.const, mp), *(_mp_eval(t, mp) for t in x.terms)])
    if isinstance(x, Mul):
        out = _mp_eval(x.coeff, mp)
        for f in x.factors:
            out *= _mp_eval(f, mp)
        return out
    if isinstance(x, Pow):
        b, e = _mp_eval(x.base, mp), x.exponent
        return b**e.numerator if e.denominator == 1 else mp.root(b, e.denominator) ** e.numerator
    a = _mp_eval(x.arg, mp)
    if abs(a) > _HUGE_ARG:  # the value is known without mpmath's argument reduction
        if x.name == "exp":
            return mp.inf if a > 0 else mp.zero
        if x.name == "tanh":
            return mp.mpf(1) if a > 0 else mp.mpf(-1)
        if abs(a) > 2**4000:
            return mp.nan  # sin, cos of an astronomically large number: no honest float
    return getattr(mp, x.name)(a)


def iv_eval(x, iv):
    """An mpmath interval holding x (at iv's working precision)."""
    if type(x) is Fraction:
        return iv.mpf(x._numerator) / x._denominator
    if isinstance(x, Add):
        out = iv_eval(x.const, iv)
        for t in x.terms:
            out += iv_eval(t, iv)
        return out
    if isinstance(x, Mul):
        out = iv_eval(x.coeff, iv)
        for f in x.factors:
            out *= iv_eval(f, iv)
        return out
    if isinstance(x, Pow):
        b, e = iv_eval(x.base, iv), x.exponent
        if e.denominator == 1:
            return b**e.numerator
        return iv.exp(iv.log(b) * e.numerator / e.denominator)
    a = iv_eval(x.arg, iv)
    if not -_HUGE_ARG < a.a <= a.b < _HUGE_ARG:
        raise ValueError("argument too large for interval evaluation")
    if x.name == "tanh":
        return 1 - 2 / (iv.exp(2 * a) + 1)
    return getattr(iv, x.name)(a)
