"""Small exact arithmetic for worked examples.

Why not sympy on the hot path: building and printing a 3 x 3 softmax with sympy
costs ~50 ms and prints ``\\frac{1}{e (e^{-2} + e^{-1} + 1)}``.  The values a
worksheet needs are few and simple, so we keep them in a tiny expression tree:

* rationals are plain :class:`fractions.Fraction` (fast, exact);
* everything else is an :class:`Expr`: ``Add``, ``Mul`` (a rational
  coefficient times factors), ``Pow`` (a rational power of an integer or of an
  expression; ``sqrt`` is ``Pow(m, 1/2)``) and ``Func`` (``exp``, ``sin``,
  ``cos``, ``tanh``);
* a masked score is the singleton :data:`NEG_INF` (``-oo``).

Every value prints in sympy's ``str`` syntax (``1/(1 + exp(-2))``, ``sqrt(3)``,
``-oo``) so that ``sympy.sympify`` of the printed string gives the same number,
prints in LaTeX (``\\frac{1}{1 + e^{-2}}``), converts to float, and converts to
sympy with :func:`to_sympy` for library users and tests.

There is deliberately no general simplifier: constructors fold rationals,
collect like terms, merge powers of the same base and rationalise ``1/sqrt(m)``.
Callers that know a nicer form (the softmax, see :func:`softmax_row`) build it
directly.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Union

__all__ = [
    "Expr", "Add", "Mul", "Pow", "Func", "NegInf", "NEG_INF", "Exact",
    "exact", "key", "rational", "sqrt", "exp", "sin", "cos", "tanh", "power",
    "to_float", "to_str", "to_latex", "to_sympy", "is_rational",
    "softmax_row", "ratio_of_exp_sums", "exp_combination",
]

HALF = Fraction(1, 2)
# shared constants: Fractions are immutable, and Fraction(0) costs a call each time
ZERO = Fraction(0)
ONE = Fraction(1)
_INTS = {k: Fraction(k) for k in range(-64, 65)}


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
    """Base of the non-rational exact values.  Immutable, hashable."""

    # _hash and _ckey: the hash and structural key, computed once;
    # _printed: {printer name: text}, filled on first print
    __slots__ = ("_hash", "_ckey", "_printed", "_fv")  # _fv: the float value, once

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

    # -- arithmetic --------------------------------------------------------
    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return add(self, mul(-1, other))

    def __rsub__(self, other):
        return add(other, mul(-1, self))

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    def __truediv__(self, other):
        return mul(self, power(other, -1))

    def __rtruediv__(self, other):
        return mul(other, power(self, -1))

    def __neg__(self):
        return mul(-1, self)

    def __pow__(self, e):
        return power(self, e)

    def __float__(self) -> float:
        try:
            return self._fv
        except AttributeError:
            self._fv = self._float()
            return self._fv

    def __str__(self) -> str:
        return to_str(self)

    def __repr__(self) -> str:
        return f"Exact({to_str(self)})"


Exact = Union[int, Fraction, Expr, NegInf]


# ---------------------------------------------------------------- node types
class Func(Expr):
    """``exp``, ``sin``, ``cos`` or ``tanh`` of an exact argument."""

    __slots__ = ("name", "arg")
    FLOAT = {"exp": math.exp, "sin": math.sin, "cos": math.cos, "tanh": math.tanh}

    def __init__(self, name: str, arg):
        self.name = name
        self.arg = arg

    def _key(self):
        return ("F", self.name, _k(self.arg))

    def _float(self):
        return self.FLOAT[self.name](float(self.arg))


class Pow(Expr):
    """``base ** exponent`` with a rational, non-integer or negative exponent."""

    __slots__ = ("base", "exponent")

    def __init__(self, base, exponent: Fraction):
        self.base = base
        self.exponent = exponent

    def _key(self):
        return ("P", _k(self.base), _k(self.exponent))

    def _float(self):
        return float(self.base) ** float(self.exponent)


class Mul(Expr):
    """``coeff * factor_1 * factor_2 ...`` (factors are Pow, Func or Add)."""

    __slots__ = ("coeff", "factors")

    def __init__(self, coeff: Fraction, factors: tuple):
        self.coeff = coeff
        self.factors = factors

    def _key(self):
        return ("M", _k(self.coeff), tuple(_k(f) for f in self.factors))

    def _float(self):
        out = float(self.coeff)
        for f in self.factors:
            out *= float(f)
        return out


class Add(Expr):
    """``const + term_1 + term_2 ...`` (terms are non-rational)."""

    __slots__ = ("const", "terms")

    def __init__(self, const: Fraction, terms: tuple):
        self.const = const
        self.terms = terms

    def _key(self):
        return ("A", _k(self.const), tuple(_k(t) for t in self.terms))

    def _float(self):
        return math.fsum([float(self.const), *(float(t) for t in self.terms)])


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


# ---------------------------------------------------------------- constructors
def exact(x) -> Exact:
    """Normalise an int/Fraction/Expr; ints become Fractions."""
    if type(x) is Fraction or isinstance(x, (Expr, NegInf, Fraction)):
        return x
    if isinstance(x, int):
        return rational(x)
    raise TypeError(f"not an exact value: {x!r}")


def rational(numerator: int, denominator: int = 1) -> Fraction:
    """``Fraction(numerator, denominator)``; small integers are shared values
    (Fractions are immutable, and exact arithmetic makes many of them)."""
    if denominator == 1 and -64 <= numerator <= 64:
        return _INTS[numerator]
    return Fraction(numerator, denominator)


def is_rational(x) -> bool:
    return type(x) is Fraction or isinstance(x, (int, Fraction))


def _split(x) -> tuple[Fraction, tuple]:
    """A term as (rational coefficient, factors)."""
    if isinstance(x, Mul):
        return x.coeff, x.factors
    return ONE, (x,)


def _term(coeff: Fraction, factors: tuple):
    if coeff == 0:
        return ZERO
    if not factors:
        return coeff
    if coeff == 1 and len(factors) == 1:
        return factors[0]
    return Mul(coeff, factors)


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


def _add(xs) -> Exact:
    """``add(*xs)``: the sum, rationals folded and like terms collected (order kept)."""
    const = ZERO
    collected: dict[tuple, list] = {}
    for x in xs:
        x = exact(x)
        items = x.terms if isinstance(x, Add) else (x,)
        if isinstance(x, Add):
            const += x.const
        for t in items:
            if isinstance(t, Fraction):
                const += t
                continue
            if not isinstance(t, Expr):
                raise TypeError(f"cannot add {t!r}")
            coeff, factors = _split(t)
            key = factors  # Exprs: cached hashes, equal iff structurally equal
            if key in collected:
                collected[key][0] += coeff
            else:
                collected[key] = [coeff, factors]
    terms = tuple(
        _term(c, f) for c, f in collected.values() if c != 0
    )
    if not terms:
        return const
    if const == 0 and len(terms) == 1:
        return terms[0]
    return Add(const, terms)


def _mul(xs) -> Exact:
    """``mul(*xs)``: the product, rationals folded and powers of one base merged."""
    coeff = ONE
    exp_arg = ZERO
    bases: dict = {}  # key -> [base, exponent]
    for x in xs:
        x = exact(x)
        if isinstance(x, Fraction):
            coeff *= x
            continue
        c, factors = _split(x)
        coeff *= c
        for f in factors:
            if isinstance(f, Func) and f.name == "exp":
                exp_arg = add(exp_arg, f.arg)  # e^a e^b = e^(a+b)
                continue
            base, e = (f.base, f.exponent) if isinstance(f, Pow) else (f, ONE)
            key = (base._numerator, base._denominator) if type(base) is Fraction else base
            if key in bases:
                bases[key][1] += e
            else:
                bases[key] = [base, e]
    if coeff == 0:
        return ZERO
    factors = [] if exp_arg == 0 else [exp(exp_arg)]
    for base, e in bases.values():
        if e == 0:
            continue
        if isinstance(base, Fraction):
            c, fs = _rational_power(base, e)
        else:
            c, fs = _split(power(base, e))
        coeff *= c
        factors.extend(fs)
    if coeff != 1 and len(factors) == 1 and isinstance(factors[0], Add):
        # c (a + b) = c a + c b: sums stay flat, so like terms cancel in add()
        # and -(a - b) never prints as the different -a - b
        total = factors[0]
        return add(coeff * total.const, *(mul(coeff, t) for t in total.terms))
    return _term(coeff, tuple(factors))


def _int_root(n: int, q: int):
    """The exact q-th root of a non-negative int, or None.

    A root below 2 (q >= bits of n) is decided at once; otherwise integer
    Newton steps (no float overflow or rounding, a few big-int powers).
    """
    if n < 2:
        return n
    if q == 2:
        r = math.isqrt(n)
        return r if r * r == n else None
    if q >= n.bit_length() or n.bit_length() > 20000:
        return None
    x = 1 << -(-n.bit_length() // q)  # >= the root; integer Newton from above
    while True:
        y = ((q - 1) * x + n // x ** (q - 1)) // q
        if y >= x:
            return x if x**q == n else None
        x = y


@lru_cache(maxsize=4096)
def _squarefree(n: int) -> tuple[int, int]:
    """n = outside**2 * inside with inside squarefree (trial division)."""
    outside, inside, f = 1, n, 2
    while f * f <= inside and f < 10**5:
        while inside % (f * f) == 0:
            inside //= f * f
            outside *= f
        f += 1
    return outside, inside


def _rational_power(b: Fraction, e: Fraction) -> tuple[Fraction, tuple]:
    """``b ** e`` as (rational coefficient, irrational factors), no recursion."""
    if e.denominator == 1:
        return b ** int(e), ()
    if b < 0:
        raise ValueError("root of a negative number")
    num = _int_root(b.numerator, e.denominator)
    den = _int_root(b.denominator, e.denominator)
    if num is not None and den is not None:
        return Fraction(num, den) ** e.numerator, ()
    if e.denominator == 2:
        # b**(k/2) = b**((k-1)/2) * sqrt(b);  sqrt(p/q) = out/q * sqrt(inside)
        out, inside = _squarefree(b.numerator * b.denominator)
        coeff = b ** ((e.numerator - 1) // 2) * Fraction(out, b.denominator)
        return coeff, ((Pow(Fraction(inside), HALF),) if inside != 1 else ())
    factors = tuple(
        Pow(Fraction(n), s * e) for n, s in ((b.numerator, 1), (b.denominator, -1)) if n != 1
    )
    return ONE, factors


def _power(args) -> Exact:
    """``power(base, e)``: ``base ** e`` for a rational exponent, folded where it is rational."""
    base, e = args
    base = exact(base)
    e = e if type(e) is Fraction else Fraction(e)
    if e == 0:
        return ONE
    if e == 1:
        return base
    if isinstance(base, Fraction):
        return _term(*_rational_power(base, e))
    whole = e.denominator == 1
    if isinstance(base, Mul) and (whole or (base.coeff > 0 and all(float(f) > 0 for f in base.factors))):
        # (c * f1 * f2) ** e  ->  c**e * f1**e * f2**e  (for a root only when each part is positive)
        return mul(power(base.coeff, e), *(power(f, e) for f in base.factors))
    if isinstance(base, Pow) and (whole or float(base.base) > 0):
        return power(base.base, base.exponent * e)  # (x^a)^e = x^(a e) needs x > 0 for a root
    if isinstance(base, Func) and base.name == "exp":
        return exp(mul(e, base.arg))
    if not whole and float(base) < 0:
        raise ValueError("root of a negative number")
    return Pow(base, e)


def sqrt(x) -> Exact:
    """Exact square root of a non-negative exact value."""
    return power(x, HALF)


def _func(name: str, zero_value, arg) -> Exact:
    arg = exact(arg)
    if isinstance(arg, NegInf):
        if name == "exp":
            return ZERO
        raise ValueError(f"{name}(-oo)")
    if arg == 0 and zero_value is not None:
        return rational(zero_value)
    return Func(name, arg)


def _exp(args) -> Exact:
    """``exp(x)``: e^x (e^0 = 1, e^-oo = 0)."""
    return _func("exp", 1, args[0])


def sin(x) -> Exact:
    return _func("sin", 0, x)


def cos(x) -> Exact:
    return _func("cos", 1, x)


def tanh(x) -> Exact:
    x = exact(x)
    if _neg(x) and not isinstance(x, NegInf):  # odd: tanh(-a) = -tanh(a), as sympy writes it
        return mul(-1, _func("tanh", 0, mul(-1, x)))
    return _func("tanh", 0, x)


# the public constructors, memoised: add(*xs), mul(*xs), power(base, e), exp(x)
add = _memoised(_add)
mul = _memoised(_mul)
power = _memoised(_power)
exp = _memoised(_exp)


# ---------------------------------------------------------------- evaluation
def to_float(x) -> float:
    if type(x) is Fraction:  # the common case, without Fraction's property calls
        return x._numerator / x._denominator
    if isinstance(x, Fraction):
        return x.numerator / x.denominator
    return float(x)


# ---------------------------------------------------------------- printing
def _str_rational(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


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


def _num_den(x: Mul) -> tuple[list, list, int, int]:
    """Split a product into numerator and denominator factors, and |coefficient|
    into its numerator and denominator."""
    num, den = [], []
    for f in x.factors:
        if isinstance(f, Pow) and f.exponent._numerator < 0:
            den.append(power(f.base, -f.exponent))
        else:
            num.append(f)
    return num, den, abs(x.coeff._numerator), x.coeff._denominator


class _Printer:
    """Shared shape of the str and LaTeX printers (sympy's printing pattern)."""

    name = ""

    def __call__(self, x) -> str:
        if type(x) is Fraction:
            key = (x._numerator, x._denominator)
            text = self._rationals.get(key)
            if text is None:
                if len(self._rationals) >= 1 << 14:
                    self._rationals.clear()
                text = self._rationals[key] = self.rational(x)
            return text
        if isinstance(x, Expr):
            # values are immutable and shared (add/mul are memoised), so each
            # prints once per printer: a key prints its values in md, tex and json
            try:
                printed = x._printed
            except AttributeError:
                printed = x._printed = {}
            text = printed.get(self.name)
            if text is None:
                text = printed[self.name] = getattr(self, "_" + type(x).__name__)(x)
            return text
        if isinstance(x, NegInf):
            return self.neg_inf
        return self.rational(exact(x))  # an int (or a subclass of Fraction)

    def _Add(self, x: Add) -> str:
        parts = [x.const] if x.const._numerator != 0 else []
        parts += list(x.terms)
        out = self(parts[0])
        for t in parts[1:]:
            if _neg(t):
                out += " - " + self(mul(-1, t))
            else:
                out += " + " + self(t)
        return out

    def _Mul(self, x: Mul) -> str:
        num, den, cn, cd = _num_den(x)
        sign = "-" if x.coeff._numerator < 0 else ""
        top = self.product(cn, num)
        if not den and cd == 1:
            return sign + top
        bottom = self.product(cd, den)
        return sign + self.fraction(top, bottom)

    def product(self, c: int, factors: list) -> str:
        """``c * f1 * f2``; a lone sum is left bare for the caller to group."""
        if c == 1 and len(factors) == 1:
            return self(factors[0])
        items = [] if c == 1 and factors else [self.rational(c)]
        items += [self.factor(f) for f in factors]
        return self.join(items)

    def factor(self, f) -> str:
        s = self(f)
        if isinstance(f, Add) or (type(f) is Fraction and f._denominator != 1):
            return self.paren(s)
        return s


class _StrPrinter(_Printer):
    """sympy-compatible ``str`` syntax."""

    name = "str"
    _rationals: dict = {}  # (numerator, denominator) -> text

    neg_inf = "-oo"

    def join(self, items):
        return "*".join(items)

    def rational(self, q):
        return _str_rational(q)

    def paren(self, s):
        return f"({s})"

    def fraction(self, top, bottom):
        top = f"({top})" if " " in top else top  # a*b/c is (a*b)/c already
        bottom = f"({bottom})" if any(c in bottom for c in " */") else bottom
        return f"{top}/{bottom}"

    def _Pow(self, x: Pow) -> str:
        if x.exponent == HALF:
            return f"sqrt({self(x.base)})"
        if x.exponent < 0:
            return f"1/{self.factor(power(x.base, -x.exponent))}"
        base = self(x.base)
        if not isinstance(x.base, Fraction) or x.base < 0 or x.base.denominator != 1:
            base = f"({base})"
        e = x.exponent
        return f"{base}**{_str_rational(e) if e.denominator == 1 else '(' + _str_rational(e) + ')'}"

    def _Func(self, x: Func) -> str:
        return f"{x.name}({self(x.arg)})"


class _LatexPrinter(_Printer):
    """LaTeX for sheets: ``\\frac{1}{1 + e^{-2}}``, ``\\sqrt{3}``."""

    name = "latex"
    _rationals: dict = {}

    neg_inf = r"-\infty"

    def join(self, items):
        # 2 \sqrt{3} reads better than 2 \cdot \sqrt{3}; keep \cdot between numbers
        out = items[0]
        for item in items[1:]:
            out += (r" \cdot " if item[:1].isdigit() else " ") + item
        return out

    def rational(self, q):
        if q.denominator == 1:
            return str(q.numerator)
        sign = "-" if q.numerator < 0 else ""
        return rf"{sign}\frac{{{abs(q.numerator)}}}{{{q.denominator}}}"

    def paren(self, s):
        return rf"\left({s}\right)"

    def fraction(self, top, bottom):
        return rf"\frac{{{top}}}{{{bottom}}}"

    def _Pow(self, x: Pow) -> str:
        if x.exponent == HALF:
            return rf"\sqrt{{{self(x.base)}}}"
        if x.exponent < 0:
            return rf"\frac{{1}}{{{self(power(x.base, -x.exponent))}}}"
        base = self(x.base)
        if not (isinstance(x.base, Fraction) and x.base > 0 and x.base.denominator == 1):
            base = self.paren(base)
        e = x.exponent
        e_s = str(e.numerator) if e.denominator == 1 else f"{e.numerator}/{e.denominator}"
        return f"{base}^{{{e_s}}}"

    def _Func(self, x: Func) -> str:
        if x.name == "exp":
            return "e" if x.arg is ONE or x.arg == 1 else f"e^{{{self(x.arg)}}}"
        return rf"\{x.name}\left({self(x.arg)}\right)"


to_str = _StrPrinter()
to_latex = _LatexPrinter()


# ---------------------------------------------------------------- sympy bridge
def to_sympy(x):
    """The same value as a sympy expression (imports sympy on first use)."""
    import sympy

    x = exact(x)
    if isinstance(x, NegInf):
        return -sympy.oo
    if isinstance(x, Fraction):
        return sympy.Rational(x.numerator, x.denominator)
    if isinstance(x, Add):
        return sympy.Add(to_sympy(x.const), *(to_sympy(t) for t in x.terms))
    if isinstance(x, Mul):
        return sympy.Mul(to_sympy(x.coeff), *(to_sympy(f) for f in x.factors))
    if isinstance(x, Pow):
        return sympy.Pow(to_sympy(x.base), to_sympy(x.exponent))
    if isinstance(x, Func):
        return getattr(sympy, x.name)(to_sympy(x.arg))
    raise TypeError(x)  # pragma: no cover


# ---------------------------------------------------------------- softmax
def exp_combination(pairs: Iterable[tuple]) -> Exact:
    """``sum_k c_k e_k`` for (coefficient, ``exp(d_k)``) pairs: the value
    ``add(*(mul(c, e) for c, e in pairs))`` gives, the same tree (tested), built
    directly when every coefficient is rational (an attention output has one
    such sum per entry: the memoised add/mul cost five times as much)."""
    pairs = list(pairs)
    if not all(type(c) is Fraction for c, _ in pairs):
        return add(*(mul(c, e) for c, e in pairs))
    const = ZERO
    coeffs: dict = {}  # e -> summed coefficient, in order of first (nonzero) appearance
    for c, e in pairs:
        if not c._numerator:
            continue  # 0 e^d is 0, and does not place e^d among the terms
        if type(e) is Fraction:  # e^0 = 1
            const += c * e
        elif e in coeffs:
            coeffs[e] += c
        else:
            coeffs[e] = c
    terms = tuple(_term(c, (e,)) for e, c in coeffs.items() if c != 0)
    if not terms:
        return const
    if const == 0 and len(terms) == 1:
        return terms[0]
    return Add(const, terms)


def ratio_of_exp_sums(num: Iterable[tuple], den: Iterable) -> Exact:
    """``(sum_j c_j e^{a_j}) / (sum_j e^{b_j})``, exponents exact.

    ``num`` holds (coefficient, exponent) pairs, ``den`` exponents.  Masked
    (``-oo``) exponents drop out, ``e^0`` is 1.
    """
    top = exp_combination((exact(c), exp(a)) for c, a in num if not isinstance(a, NegInf))
    bottom = add(*(exp(b) for b in den if not isinstance(b, NegInf)))
    if top == 0:
        return ZERO
    return mul(top, power(bottom, -1))


def softmax_row(row: list) -> list:
    """Exact softmax of one row, each weight as ``1 / sum_k e^{a_k - a_j}``.

    Masked entries (``-oo``) get weight exactly 0; the weights sum to 1
    exactly (as real numbers; each is written in its own simplest form).
    """
    out = []
    live = [a for a in row if not isinstance(a, NegInf)]
    rational = all(type(a) is Fraction for a in live)
    for a_j in row:
        if isinstance(a_j, NegInf):
            out.append(ZERO)
            continue
        diffs = [a_k - a_j for a_k in live] if rational else [add(a_k, mul(-1, a_j)) for a_k in live]
        out.append(mul(1, power(add(*(exp(d) for d in diffs)), -1)))
    return out
