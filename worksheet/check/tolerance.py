"""Tolerance: how close an answer's entry must be to the key's, compared to 50 digits.

An entry is compared at high precision (mpmath, imported on first use): the
value written (:class:`Given`) against the value expected (:class:`Expected`)
by :func:`close`.  A plain decimal or integer is right within the tolerance
the sheet prints, :data:`worksheet.policy.pencil.TOLERANCE` (0.001), of the key's
value, of the exact value or of the value the rounding chain gives
(:func:`decimal_tolerance`; see :mod:`worksheet.policy.pencil`); an exact form must
equal the key exactly (``EXACT_RTOL`` at 50 digits), or a float64
recomputation within ``FLOAT_RTOL``.  ``--rtol``/``--atol``
(:class:`Tolerance`) replace both rules by
``|given - expected| <= atol + rtol * |expected|``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..policy.errors import ParamError
from ..exact import Add, Func, Mul, Pow
from ..parse.numbers import DIGITS, decimal_tolerance, mp_context  # noqa: F401 (DIGITS: check's name too)

EXACT_RTOL = 1e-40  # "exactly equal" at 50 digits
FLOAT_RTOL = 1e-9  # an exact form against a float64 recomputation
MAX_FUNC_ARG = 1e5  # |x| in exp/sin/cos/tanh(x) we evaluate


@dataclass(frozen=True)
class Tolerance:
    """How close an entry must be.  Both None: the default rules (module docstring)."""

    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self):
        for name in ("rtol", "atol"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v >= 0):
                raise ParamError(f"--{name} must be a finite number >= 0, not {v}")

    @property
    def override(self) -> bool:
        return self.rtol is not None or self.atol is not None


# ---------------------------------------------------------------- high precision
def mp_value(x):
    """The value of an exact number to 50 digits (ValueError when out of range)."""
    ctx = mp_context()
    if isinstance(x, Fraction):
        return ctx.mpf(x.numerator) / x.denominator
    if isinstance(x, Add):
        return ctx.fsum([mp_value(x.const), *(mp_value(t) for t in x.terms)])
    if isinstance(x, Mul):
        out = mp_value(x.coeff)
        for f in x.factors:
            out *= mp_value(f)
        return out
    if isinstance(x, Pow):
        b, e = mp_value(x.base), x.exponent
        if e.denominator == 1:
            return b ** int(e)
        if b < 0:
            raise ValueError("root of a negative number")
        return b ** (ctx.mpf(e.numerator) / e.denominator)
    if isinstance(x, Func):
        a = mp_value(x.arg)
        if abs(a) > MAX_FUNC_ARG:
            raise ValueError(f"number too large: {x.name} of {ctx.nstr(a, 3)}")
        return getattr(ctx, x.name)(a)
    raise ValueError(f"not a number: {x!r}")  # pragma: no cover


@dataclass(frozen=True)
class Expected:
    """One expected entry: its value to 50 digits (None for -oo), how it was known, its label."""

    mp: Any  # mpmath mpf, or None for -oo
    precise: bool  # from an exact value (True) or a float64 (False)
    text: str  # for the report
    label: str | None = None  # a token label (its index is ``mp``)
    bad: bool = False  # nan / +inf: matches nothing
    rounding: float = 0.0  # how far the key itself rounded it (steps with "rounded": true)
    alt: Any = None  # a rounded step's exact string, carried rounded along the chain: also right
    aliases: tuple = ()  # other spellings of a label (a step's symbol), compared by fmt.label_key

    @property
    def neg_inf(self) -> bool:
        return self.mp is None and not self.bad

    @property
    def value(self) -> float | None:
        return None if self.mp is None else float(self.mp)


def expected_float(x: float) -> Expected:
    if x == -math.inf:
        return Expected(None, False, "-oo")
    if not math.isfinite(x):
        return Expected(None, False, str(x), bad=True)
    return Expected(mp_context().mpf(x), False, decimal_text(x))


def decimal_text(x: float) -> str:
    if x == -math.inf:
        return "-oo"
    if x != 0 and abs(x) < 5e-5:
        return f"{x:.4g}"
    return f"{x:.4f}".rstrip("0").rstrip(".") if "." in f"{x:.4f}" else f"{x:.4f}"


@dataclass(frozen=True)
class Given:
    """One entry of an answer: the text written, its exact value and its precision."""

    text: str
    mp: Any = None  # mpf; None for -oo or a label
    places: int | None = None  # decimal places of a plain decimal/integer; None: an exact form
    neg_inf: bool = False
    label: str | None = None

    @property
    def rounding(self) -> float:
        """How far the value written may be from the one the student had: half a unit in
        the last place of a decimal (at most 0.005); 0 for integers and exact forms."""
        if self.places is None or self.places <= 0:
            return 0.0
        return min(0.5 * 10.0**-self.places, 0.005)

    @property
    def value(self) -> float:
        if self.neg_inf:
            return -math.inf
        if self.mp is None:
            return math.nan
        try:
            return float(self.mp)
        except (OverflowError, ValueError):  # pragma: no cover - mpmath gives inf
            return math.inf


def close(g: Given, e: Expected, tol: Tolerance, extra: float = 0.0) -> bool:
    """Is the given entry right for the expected one under ``tol``?

    ``extra`` widens the tolerance by how far the rounding of a student's
    earlier answers can move a value recomputed from them (carried forward).
    """
    if e.bad:
        return False
    if e.label is not None and g.label is not None:
        from ..solution.number_format import label_key

        return g.label.casefold() == e.label.casefold() or label_key(g.label) in (label_key(e.label), *e.aliases)
    if g.label is not None:
        return False
    if e.label is not None:  # a number for a label: its number as the sheet prints it, from 1
        return g.mp is not None and g.mp == e.mp + 1
    if g.neg_inf or e.neg_inf:
        return g.neg_inf and e.neg_inf
    if _near(g, e.mp, e.precise, e.rounding, tol, extra):
        return True
    return e.alt is not None and _near(g, e.alt, True, 0.0, tol, extra)


def _near(g: Given, target, precise: bool, rounding: float, tol: Tolerance, extra: float) -> bool:
    diff = abs(g.mp - target)
    size = abs(target)
    if tol.override:
        return diff <= (tol.atol or 0.0) + (tol.rtol or 0.0) * size + extra
    if g.places is not None:
        return diff <= decimal_tolerance(g.places, size) + extra
    rtol = EXACT_RTOL if precise else FLOAT_RTOL
    return diff <= max(rtol * max(1, size), rounding) + extra
