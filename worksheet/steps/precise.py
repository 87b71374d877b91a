"""Precision-generic numpy: the float64 references and mistake rules, also run
at high precision.

Every kind's ``reference`` and every mistake rule computes with numpy.  Run on
float64 arrays it is the independent cross-check of the exact steps, exactly as
always (the functions here call the numpy ufunc on float arrays).  Run on
numpy *object* arrays of mpmath ``mpf`` (inside :func:`high_precision`, at
:data:`DPS` digits) the same code gives values that are the same on every
machine: mpmath uses no libm, so no CPU or numpy build changes a digit.  That
is what a number the project writes is taken from where it is not exact (the
flawed chain of find-the-mistake, the JSON ``value`` of a carried-rounded
step, the expectations of a ``check`` report, a generator's accept/reject).

numpy's matmul, ``+ - * /``, ``sum``, ``max``, ``where`` and comparisons work on
object arrays of mpf already; the functions below are the ones that do not
(``exp``, ``tanh``, ``sqrt``, ``sin``, ``cos``, ``isinf``, ``isnan``,
``isfinite``, ``norm``).  Arrays dispatch on their dtype (object: mpmath
entry by entry); a plain Python number (an ``int`` width, a Fraction
parameter) dispatches on the mode: mpmath inside :func:`high_precision`,
numpy outside.  Use :func:`number` for a constant that enters a computation
(``1 / temperature``) so it stays exact in the high-precision run.

:func:`to_mp` turns exact matrices (Fractions and the exact tree's nodes,
evaluated by :func:`worksheet.exact.mp_eval._mp_eval`) into mpf arrays.

Threads: every number is made by a private mpmath context of each thread, set
once to :data:`DPS` digits (:func:`context`), never by mpmath's global ``mp``,
whose precision other code changes for a while (``workprec``): a practice
server marks in several threads at once, and each gets the same digits.
"""

from __future__ import annotations

import contextvars
import threading
from contextlib import contextmanager
from fractions import Fraction

import mpmath
import numpy as np

from ..exact.mp_eval import _mp_eval
from ..exact.nodes import NegInf

__all__ = [
    "DPS",
    "MPF",
    "context",
    "high_precision",
    "is_high",
    "number",
    "to_mp",
    "as_mp",
    "to_float64",
    "exp",
    "tanh",
    "sqrt",
    "sin",
    "cos",
    "isinf",
    "isnan",
    "isfinite",
    "norm",
    "sigmoid",
]

DPS = 60  # decimal digits of the high-precision run (float(mpf) is then correctly rounded but for ties)

MPF = mpmath.ctx_mp_python._mpf  # the type of an mpf of any mpmath context
_HIGH = contextvars.ContextVar("worksheet_high_precision", default=False)
_LOCAL = threading.local()


def context():
    """This thread's mpmath context, at :data:`DPS` digits (never changed)."""
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        ctx = _LOCAL.ctx = mpmath.MPContext()
        ctx.dps = DPS
    return ctx


@contextmanager
def high_precision():
    """Inside: plain numbers (``number``, the widths given to ``sqrt``) go to mpmath."""
    token = _HIGH.set(True)
    try:
        yield
    finally:
        _HIGH.reset(token)


def is_high(x=None) -> bool:
    """Is ``x`` high precision (an object array, an mpf)? With no ``x``: the mode."""
    if x is None:
        return _HIGH.get()
    if isinstance(x, np.ndarray):
        return x.dtype == object
    return isinstance(x, MPF) or (_HIGH.get() and isinstance(x, (int, Fraction, float)))


def number(x):
    """A constant of a computation (int, Fraction, float): an mpf in the high
    mode, else a float (as the float64 reference always used it)."""
    if _HIGH.get():
        ctx = context()
        if isinstance(x, Fraction):
            return ctx.mpf(x.numerator) / x.denominator
        return ctx.mpf(x)
    return float(x)


def _mp_scalar(x):
    if type(x) is Fraction:  # the common case first: as _mp_eval makes it
        return context().mpf(x._numerator) / x._denominator
    if isinstance(x, MPF):
        return x
    ctx = context()
    if isinstance(x, NegInf):
        return ctx.mpf("-inf")
    if isinstance(x, np.integer):
        x = int(x)
    if isinstance(x, (Fraction, int)) or not isinstance(x, (float, np.floating)):
        return _mp_eval(Fraction(x) if isinstance(x, int) else x, ctx)
    return ctx.mpf(float(x))


def to_mp(matrix) -> np.ndarray:
    """An exact matrix (rows of Fractions, exact nodes, -oo) as an object array of mpf."""
    rows = [[_mp_scalar(x) for x in row] for row in matrix]
    out = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            out[i, j] = x
    return out


def as_mp(value) -> np.ndarray:
    """Any array-like value (floats, say a student's answer) as an object array
    of mpf: each float exactly as it is (its binary value)."""
    a = np.asarray(value)
    if a.dtype == object:
        return np.frompyfunc(_mp_scalar, 1, 1)(a).astype(object) if a.size else a
    return (
        np.frompyfunc(lambda v: context().mpf(float(v)), 1, 1)(a.astype(np.float64)).astype(object)
        if a.size
        else a.astype(object)
    )


RESOLUTION = 10.0 ** (20 - DPS)  # below it a high-precision result is 0 (see to_float64)


def to_float64(value) -> np.ndarray:
    """An array (object of mpf, or float) as float64: ``float(mpf)`` rounds
    correctly (half to even) from the high-precision value.  An entry below
    :data:`RESOLUTION` (1e-40) is 0: a cancellation the run cannot tell from 0
    (the mean of 0.1 and -0.1 leaves about 1e-62, binary 0.1 being inexact)."""
    a = np.asarray(value)
    if a.dtype != object:
        return np.asarray(a, dtype=np.float64)
    return np.asarray(np.frompyfunc(lambda v: 0.0 if abs(v) < RESOLUTION else float(v), 1, 1)(a), dtype=np.float64)


def _generic(name: str):
    """numpy's ``name`` on float arrays (looked up when called, so a test may
    stand a table-reading numpy in for ``np``), mpmath's entry by entry on object arrays."""

    def one(v):
        return getattr(context(), name)(_mp_scalar(v))

    ufunc = np.frompyfunc(one, 1, 1)

    def fn(x):
        if isinstance(x, np.ndarray) and x.dtype == object:
            return ufunc(x).astype(object) if x.size else x.copy()
        if not isinstance(x, np.ndarray) and is_high(x):
            return one(x)
        return getattr(np, name)(x)

    fn.__name__ = name
    fn.__doc__ = f"``numpy.{name}`` on float arrays, ``mpmath.{name}`` on object arrays."
    return fn


def _predicate(name: str, test):
    def fn(x):
        if isinstance(x, np.ndarray) and x.dtype == object:
            return np.frompyfunc(lambda v: bool(test(_mp_scalar(v))), 1, 1)(x).astype(bool)
        if isinstance(x, MPF):
            return bool(test(x))
        return getattr(np, name)(x)

    fn.__name__ = name
    return fn


exp = _generic("exp")
tanh = _generic("tanh")
sqrt = _generic("sqrt")
sin = _generic("sin")
cos = _generic("cos")
isinf = _predicate("isinf", lambda v: context().isinf(v))
isnan = _predicate("isnan", lambda v: context().isnan(v))
isfinite = _predicate("isfinite", lambda v: not (context().isinf(v) or context().isnan(v)))


def norm(x, axis=None):
    """``numpy.linalg.norm`` (2-norm of a vector or of each row with ``axis=1``)."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        return sqrt((x * x).sum(axis=axis))
    return np.linalg.norm(x, axis=axis)


def sigmoid(a):
    """The logistic σ without overflow for large |a| (float arrays: the float64
    formula the recurrent kinds always used)."""
    if isinstance(a, np.ndarray) and a.dtype == object:
        return np.frompyfunc(lambda v: 1 / (1 + context().exp(-_mp_scalar(v))), 1, 1)(a).astype(object)
    a = np.asarray(a, dtype=np.float64)
    return np.where(a >= 0, 1.0 / (1.0 + np.exp(-np.abs(a))), np.exp(-np.abs(a)) / (1.0 + np.exp(-np.abs(a))))


def power(base, exponent):
    """``numpy.power`` (float base and exponents); ``mpmath.power`` entry by entry
    when the exponents are an object array or the mode is high."""
    if (isinstance(exponent, np.ndarray) and exponent.dtype == object) or is_high(base):
        e = exponent if isinstance(exponent, np.ndarray) else np.asarray(exponent, dtype=object)
        b = _mp_scalar(base)
        return np.frompyfunc(lambda v: context().power(b, _mp_scalar(v)), 1, 1)(e).astype(object)
    return np.power(base, exponent)


def array(values) -> np.ndarray:
    """Plain numbers (ints, Fractions) as a float64 array, or in the high mode
    as an object array of mpf (exactly)."""
    if _HIGH.get():
        return np.frompyfunc(_mp_scalar, 1, 1)(np.asarray(values, dtype=object)).astype(object)
    return np.asarray(values, dtype=np.float64)


def arange(n: int) -> np.ndarray:
    """``numpy.arange(n, dtype=float64)``, or mpf integers in the high mode."""
    return array(list(range(n))) if _HIGH.get() else np.arange(n, dtype=np.float64)


def empty(shape, like) -> np.ndarray:
    """An array to fill of the precision of ``like`` (object for mpf, else float64)."""
    return np.empty(shape, dtype=object if is_high(like) else np.float64)
