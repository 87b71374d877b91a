"""The expression tree of the exact layer: the node types and structural keys.

A rational is a plain Fraction (:mod:`.core`); anything else is an
:class:`Expr` node: ``Add``, ``Mul``, ``Pow``, ``Func``; a masked score is the
singleton :data:`NEG_INF`.  This module only says what the nodes are; the
canonical form they must be in is made by the constructors of :mod:`.tree`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Union

from .core import rational

__all__ = ["NegInf", "NEG_INF", "Expr", "Exact", "Func", "Pow", "Mul", "Add", "key", "exact"]


class NegInf:
    """Minus infinity, the exact value of a masked score."""

    _instance = None
    __slots__ = ()

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __str__(self) -> str:
        return "-oo"

    __repr__ = __str__

    def __float__(self) -> float:
        return -math.inf

    def __reduce__(self):
        return (NegInf, ())


NEG_INF = NegInf()


class Expr:
    """Base of the non-rational exact values.  Immutable, hashable.

    Build values with the constructors of :mod:`.tree` (``add``, ``mul``,
    ``power``, ...), never with the node classes directly: only they give the
    canonical form.  The operators below call them; ``str`` is :func:`.printing.to_str`
    and ``float`` is :func:`.numeric.to_float` (through :data:`OPERATIONS`:
    those modules build on this one).
    """

    # _hash, _ckey: hash and structural key; _printed: {printer: text};
    # _fv: float; _ord: sort key; _sg: sign; _iv: float bounds; _dm: decimal
    # midpoint and radius (.rounding) (all computed once)
    __slots__ = ("_hash", "_ckey", "_printed", "_fv", "_ord", "_sg", "_iv", "_dm")

    # -- structure ---------------------------------------------------------
    def _key(self) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def key(self) -> tuple:
        """The structural key (equal keys = equal values), computed once."""
        try:
            return self._ckey
        except AttributeError:
            self._ckey = self._key()
            return self._ckey

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Expr) and self.key() == other.key())

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            self._hash = hash(self.key())
            return self._hash

    # -- arithmetic, float and text: the modules above this one (see OPERATIONS)
    def __add__(self, other):
        return OPERATIONS.add(self, other)

    def __radd__(self, other):
        return OPERATIONS.add(other, self)

    def __sub__(self, other):
        return OPERATIONS.add(self, OPERATIONS.mul(-1, other))

    def __rsub__(self, other):
        return OPERATIONS.add(other, OPERATIONS.mul(-1, self))

    def __mul__(self, other):
        return OPERATIONS.mul(self, other)

    def __rmul__(self, other):
        return OPERATIONS.mul(other, self)

    def __truediv__(self, other):
        return OPERATIONS.mul(self, OPERATIONS.power(other, -1))

    def __rtruediv__(self, other):
        return OPERATIONS.mul(other, OPERATIONS.power(self, -1))

    def __neg__(self):
        return OPERATIONS.mul(-1, self)

    def __pow__(self, e):
        return OPERATIONS.power(self, e)

    def __float__(self) -> float:
        try:
            return self._fv
        except AttributeError:
            return OPERATIONS.to_float(self)  # computes and keeps self._fv

    def __str__(self) -> str:
        return OPERATIONS.to_str(self)

    def __repr__(self) -> str:
        return f"Exact({OPERATIONS.to_str(self)})"


class _Operations:
    """What the operators, ``float`` and ``str`` of an :class:`Expr` call.

    They live in the modules that build on this one -- the constructors
    ``add``, ``mul``, ``power`` in :mod:`.tree`, ``to_float`` in :mod:`.numeric`,
    ``to_str`` in :mod:`.printing` -- and each of those modules fills in its
    own when it is imported (the package imports them all), so the node types
    import nothing above them and the arrows of the exact layer point one way.
    """

    add = mul = power = to_float = to_str = None


OPERATIONS = _Operations()


Exact = Union[int, Fraction, Expr, NegInf]


# ---------------------------------------------------------------- node types
class Func(Expr):
    """``exp``, ``sin``, ``cos`` or ``tanh`` of an exact argument."""

    __slots__ = ("name", "arg")

    def __init__(self, name: str, arg):
        self.name = name
        self.arg = arg

    def _key(self):
        return ("F", self.name, _k(self.arg))


class Pow(Expr):
    """``base ** exponent``: a rational base is an integer >= 2 (not a
    perfect power) with the exponent in (0, 1); an expression base has any
    rational exponent but 0 and 1 (a sum as base is primitive, see the module
    docstring)."""

    __slots__ = ("base", "exponent")

    def __init__(self, base, exponent: Fraction):
        self.base = base
        self.exponent = exponent

    def _key(self):
        return ("P", _k(self.base), _k(self.exponent))


class Mul(Expr):
    """``coeff * factor_1 * factor_2 ...`` (factors are Pow, Func or Add),
    sorted; with a sum among the factors the coefficient is 1, carried inside
    the first sum (``(1/2 + e^{-1}) / (1 + e^{-1})``)."""

    __slots__ = ("coeff", "factors", "_sp")

    def __init__(self, coeff: Fraction, factors: tuple):
        self.coeff = coeff
        self.factors = factors

    def _key(self):
        return ("M", _k(self.coeff), tuple(_k(f) for f in self.factors))


class Add(Expr):
    """``const + term_1 + term_2 ...`` (terms are non-rational), sorted."""

    __slots__ = ("const", "terms", "_prim")

    def __init__(self, const: Fraction, terms: tuple):
        self.const = const
        self.terms = terms

    def _key(self):
        return ("A", _k(self.const), tuple(_k(t) for t in self.terms))


def key(x):
    """A hashable structural key of an exact value: equal keys, equal values.
    Rationals become (numerator, denominator), which hash fast (a Fraction's
    hash takes a modular inverse each time); anything else (-oo, a label) is
    its own key."""
    if type(x) is Fraction:
        return (x._numerator, x._denominator)
    if isinstance(x, Expr):
        return x.key()
    if isinstance(x, int):
        return (x, 1)
    return x


_k = key


def exact(x) -> Exact:
    """Normalise an int/Fraction/Expr; ints become Fractions."""
    if type(x) is Fraction or isinstance(x, (Expr, NegInf, Fraction)):
        return x
    if isinstance(x, int):
        return rational(x)
    raise TypeError(f"not an exact value: {x!r}")


# The printers read signs off numerators (a Fraction's denominator is
# positive): Fraction comparisons are Python calls, and printing is hot.
def _neg(x) -> bool:
    """Does x print with a leading minus sign?"""
    if isinstance(x, Mul):
        return x.coeff._numerator < 0
    if type(x) is Fraction:
        return x._numerator < 0
    if isinstance(x, Add):
        first = x.terms[0] if x.const._numerator == 0 else x.const
        return _neg(first)
    if isinstance(x, Fraction):
        return x < 0
    return isinstance(x, NegInf)
