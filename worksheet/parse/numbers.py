"""Plain numbers as a user types them in an input file, read exactly; the
error type and the stated limits of :mod:`worksheet.parse`.

Plain numbers (:func:`parse_number`, also the number tokens of
:func:`~worksheet.parse.parse_exact`)::

    number   := [sign] decimal | [sign] digits ws* '/' ws* digits
    decimal  := (digits ['.' digits*] | '.' digits) [('e' | 'E') [sign] digits]
    digits   := ASCII '0'-'9', at least one

so ``0.2`` is exactly ``1/5``, ``-.5``, ``1.``, ``2.5e-3``, ``1E2`` and
``-3/4`` are numbers; ``nan``, ``inf``, ``0x10``, ``1_000``, ``3/4/5`` are not.
At most 100 characters and a decimal exponent of magnitude at most 1000.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

from ..policy.limits import check_number

MAX_NUMBER_CHARS = 100  # a number (as text) is at most this long
MAX_DECIMAL_EXPONENT = 1000  # |k| in 1.5e<k>
MAX_TEXT_CHARS = 2000  # an answer for parse_exact
MAX_DEPTH = 50  # nested groups, function calls and ^ chains
MAX_POWER = 1000  # |p| and q of a rational exponent p/q
MAX_BITS = 10_000  # bits of a rational's numerator or denominator (~3000 digits)
MAX_RADICAND = 10**40  # numerator * denominator of a rational under a root
MAX_TREE_DEPTH = 120  # levels of the value's expression tree

_NON_FINITE = frozenset({"nan", "inf", "infinity", "oo", "∞"})


class ParseError(ValueError):
    """A value that cannot be read.  ``position`` is 1-based (None: the whole text)."""

    def __init__(self, reason: str, position: int | None = None):
        self.reason = reason
        self.position = position
        super().__init__(reason if position is None else f"{reason} at position {position}")


# An unsigned decimal.  No nested quantifiers and no two adjacent quantifiers can
# match the same characters, so matching is linear (no catastrophic backtracking).
_DECIMAL = (
    r"(?:(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]*))?|\.(?P<frac2>[0-9]+))"
    r"(?:[eE](?P<exp>[+-]?[0-9]+))?"
)
_NUMBER_RE = re.compile(r"(?P<sign>[+-]?)" + _DECIMAL + r"(?:\s*/\s*(?P<den>[0-9]+))?")


class _Decimal(NamedTuple):
    """The parts of a matched :data:`_DECIMAL`."""

    digits: str  # integer and fraction digits run together
    places: int  # digits after the point
    exponent: int  # the decimal exponent (0 without one)
    plain_int: bool  # digits only: no point, no exponent

    @classmethod
    def of(cls, m: re.Match) -> _Decimal:
        frac = m["frac"] if m["frac"] is not None else (m["frac2"] or "")
        exp_text = m["exp"]
        return cls(
            (m["int"] or "") + frac,
            len(frac),
            int(exp_text) if exp_text else 0,
            m["frac"] is None and m["frac2"] is None and exp_text is None,
        )

    def value(self) -> Fraction:
        n = int(self.digits)
        if self.plain_int:
            return Fraction(n)
        shift = self.exponent - self.places
        return Fraction(n * 10**shift) if shift >= 0 else Fraction(n, 10**-shift)


def parse_number(text: str) -> Fraction:
    """Read a number as a user types it in an input file, exactly.

    Accepts integers (``-3``, ``+4``), decimals (``0.2`` is exactly 1/5, ``-.5``,
    ``1.``, ``2.5e-3``, ``1E2``) and fractions of integers (``3/4``, ``-3 / 4``),
    with surrounding whitespace.  Raises :class:`ValueError` (a
    :class:`ParseError`) with a short message for anything else:
    ``empty text``, ``number too long`` (more than 100 characters),
    ``exponent too large`` (``1e1001``), ``not finite: 'inf'``,
    ``division by zero: '1/0'``, ``not a number: 'abc'``.  Raises
    :class:`TypeError` if ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_number needs a str, not {type(text).__name__}")
    if len(text) > MAX_NUMBER_CHARS:
        raise ParseError("number too long")
    s = text.strip()
    if not s:
        raise ParseError("empty text")
    m = _NUMBER_RE.fullmatch(s)
    if m is None:
        if s.lstrip("+-").lower() in _NON_FINITE and len(s) - len(s.lstrip("+-")) <= 1:
            raise ParseError(f"not finite: {text!r}")
        raise ParseError(f"not a number: {text!r}")
    num = _Decimal.of(m)
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        raise ParseError("exponent too large")
    value = num.value()
    if m["den"] is not None:
        if not num.plain_int:
            raise ParseError(f"not a number: {text!r}")
        if int(m["den"]) == 0:
            raise ParseError(f"division by zero: {text!r}")
        value /= int(m["den"])
    return -value if m["sign"] == "-" else value


def exact_from_json(value: object) -> Fraction:
    """An exact rational from a JSON value: ``int`` (exact) or ``str`` (:func:`parse_number`).

    ``bool``, ``float`` (the caller must read JSON floats as strings) and
    everything else raise :class:`ValueError`; so do ints of more than 100
    digits (``number too long``) and numbers outside the input range of
    :mod:`worksheet.policy.limits` (``|x| <= 10^6``, a denominator of at most
    ``10^12``): ``1e308``, ``10**99`` and ``1e-1000`` are refused here, before
    any arithmetic.
    """
    if isinstance(value, bool):
        raise ParseError(f"not a number: {str(value).lower()}")
    if isinstance(value, int):
        if abs(value) >= 10**MAX_NUMBER_CHARS:
            raise ParseError("number too long")
        number = Fraction(value)
    elif isinstance(value, str):
        number = parse_number(value)
    elif isinstance(value, float):
        raise ParseError(f"not exact: the float {value!r} (write the number as text)")
    else:
        raise ParseError(f"not a number: {type(value).__name__}")
    why = check_number(number)
    if why:
        raise ParseError(why)
    return number


def format_decimal_places(text: object) -> int | None:
    """Digits after the decimal point in a plain decimal or integer, else None.

    ``'0.88'`` -> 2, ``'3'`` -> 0, ``'-0.50'`` -> 2, ``'1.'`` -> 0 (an ``int``
    -> 0).  Scientific notation counts the places of the value's last written
    digit: ``'2.5e-3'`` -> 4, ``'1.5e1'`` -> 0, ``'1e2'`` -> -2 (negative: the
    last written digit is left of the point).  Fractions (``'3/4'``),
    expressions and anything :func:`parse_number` rejects give None.
    """
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return 0
    if not isinstance(text, str) or len(text) > MAX_NUMBER_CHARS:
        return None
    m = _NUMBER_RE.fullmatch(text.strip())
    if m is None or m["den"] is not None:
        return None
    num = _Decimal.of(m)
    if abs(num.exponent) > MAX_DECIMAL_EXPONENT:
        return None
    return num.places - num.exponent


# ---------------------------------------------------------------- what a decimal stands for
DIGITS = 50  # decimal digits of the high-precision comparison (worksheet check)

_CTX = None


def mp_context():
    """An mpmath context at 50 digits (mpmath comes with sympy; imported on first use)."""
    global _CTX
    if _CTX is None:
        import mpmath

        _CTX = mpmath.MPContext()
        _CTX.dps = DIGITS
    return _CTX


def decimal_tolerance(places: int, expected):
    """How far a plain decimal (written to any number of ``places``) may be
    from the ``expected`` value and still be right (the default rule): the
    tolerance every sheet prints, :data:`worksheet.policy.pencil.TOLERANCE`
    (0.001), plus ``1e-12 * max(1, |expected|)`` for float noise.  An mpmath
    number (:func:`mp_context`); ``worksheet check`` marks by it and
    ``worksheet.render.moodle`` gives Moodle this tolerance."""
    from ..policy.pencil import TOLERANCE

    del places  # one rule for every decimal: the one the sheet prints
    return mp_context().mpf(repr(TOLERANCE)) + 1e-12 * max(1, abs(expected))
