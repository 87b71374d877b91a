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
sympy with :func:`to_sympy` for library users and tests (sympy is the test
oracle: ``tests/test_exact_oracle.py``).

The normal form is canonical: the constructors give one tree per value
whatever the order of the arguments, so equal values are equal objects with
equal hashes and equal strings, and a value that is rational is a Fraction.

* ``add`` folds rationals, collects like terms and sorts the terms by a total
  order on their structure (:func:`_order`): exponentials by the size of the
  exponent, ``1 + e^{-1} + e^{-2}``, ``2 + e + e^{2}``.
* ``mul`` folds rationals, merges powers of one base (``e^a e^b = e^{a+b}``)
  and sorts its factors.  Rational powers of rationals are kept over prime
  factors and printed grouped by root (``sqrt(2) sqrt(6) = 2 sqrt(3)``,
  ``16^{1/3} 4^{1/3} = 4``, ``1/10000^{2/5} = 10^{2/5}/100``), with exponents
  in (0, 1) and the rest pulled into the coefficient (so ``1/sqrt(3)`` is
  ``sqrt(3)/3``).  Trial division stops at 10^5 (:data:`TRIAL_BOUND`): a
  cofactor left over is kept as one base after taking out exact powers and
  common factors, so a root whose radicand has two distinct prime factors above
  10^5 is correct but may not be fully merged with other roots.
* A sum that is a base (``1/(1 + 2 e^{-1})``) is kept *primitive*: integer
  coefficients with no common factor and a positive leading one, the content
  going to the coefficient; so a ratio of proportional sums is rational
  (``(-2 - 4 e^{-1}) / (1 + 2 e^{-1}) = -2``).  A product with a sum factor
  (exponent 1) carries its coefficient inside that sum:
  ``(1/2 + e^{-1}) / (1 + e^{-1})``.
* ``sin(-x) = -sin(x)``, ``tanh(-x) = -tanh(x)``, ``cos(-x) = cos(x)``
  (``-x`` read off the printed sign).

Signs are decided exactly (:func:`sign`): from the structure where it tells
(a sum of exponentials is positive), else by interval arithmetic, first in
outward-rounded floats, then with mpmath intervals at growing precision; a
value whose sign stays undecided up to 4096 bits (a zero the normal form does
not see, e.g. ``sin(1)^2 + cos(1)^2 - 1``) raises ValueError rather than guess.

``-oo`` (a masked score) obeys ``-oo + x = -oo``, ``c (-oo) = -oo`` for
``c > 0``, ``e^{-oo} = 0``, ``tanh(-oo) = -1``, ``1/(-oo) = 0``.  Anything
that would be undefined or ``+oo`` (``0 (-oo)``, ``-1 (-oo)``, ``sin(-oo)``)
raises ValueError: masked scores are never negated or zeroed.  A softmax row
with no unmasked entry raises ValueError.

Floats (:func:`to_float`) never raise: ``e^{1000}`` is ``inf``, ``e^{-1000}``
and ``1/(1 + e^{729})`` are ``0.0`` (or the subnormal float they are),
``10^{400}`` is ``inf``.  A value whose float64 evaluation leaves the normal
range anywhere in its tree is evaluated again with mpmath.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Union

__all__ = [
    "Expr", "Add", "Mul", "Pow", "Func", "NegInf", "NEG_INF", "Exact",
    "exact", "key", "rational", "sqrt", "exp", "sin", "cos", "tanh", "power",
    "add", "mul", "sign", "to_float", "to_str", "to_latex", "to_sympy", "is_rational",
    "softmax_row", "ratio_of_exp_sums", "exp_combination", "over_sum",
]

HALF = Fraction(1, 2)
# shared constants: Fractions are immutable, and Fraction(0) costs a call each time
ZERO = Fraction(0)
ONE = Fraction(1)
_INTS = {k: Fraction(k) for k in range(-64, 65)}
TRIAL_BOUND = 100_000  # roots: prime factors are looked for up to here
_FLOAT_MIN = 2.2250738585072014e-308  # the smallest normal float64
_FLOAT_MAX = 1.7976931348623157e308
_HUGE_ARG = 2.0 ** 40  # exp, tanh of more than this: inf/0, +-1 without mpmath's big work


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

    # _hash, _ckey: hash and structural key; _printed: {printer: text};
    # _fv: float; _ord: sort key; _sg: sign; _iv: float bounds (all computed once)
    __slots__ = ("_hash", "_ckey", "_printed", "_fv", "_ord", "_sg", "_iv")

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
            self._fv = _honest_float(self)
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
        return self.FLOAT[self.name](to_float(self.arg))


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

    def _float(self):
        b = to_float(self.base)
        if not _FLOAT_MIN <= abs(b) < math.inf:
            raise OverflowError  # a subnormal base has lost bits: _honest_float redoes it with mpmath
        return b ** _rat_float(self.exponent)


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

    def _float(self):
        out = _rat_float(self.coeff)
        for f in self.factors:
            out *= to_float(f)
            if not _FLOAT_MIN <= abs(out) < math.inf:
                raise OverflowError  # left the normal range: _honest_float redoes it with mpmath
        return out


class Add(Expr):
    """``const + term_1 + term_2 ...`` (terms are non-rational), sorted."""

    __slots__ = ("const", "terms", "_prim")

    def __init__(self, const: Fraction, terms: tuple):
        self.const = const
        self.terms = terms

    def _key(self):
        return ("A", _k(self.const), tuple(_k(t) for t in self.terms))

    def _float(self):
        return math.fsum([_rat_float(self.const), *(to_float(t) for t in self.terms)])


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

_FUNC_RANK = {"sin": 0, "cos": 1, "tanh": 2}


def _order(x) -> tuple:
    """A total order on exact values (for sorting terms and factors).

    Ranks: rationals, ``exp`` (smaller exponent first by size, a positive one
    before a negative one: ``1 + e + e^{-1} + e^{2}``), rational powers, the
    other functions, products, sums; ties by structure.  Tuples of one rank
    have the same shape, so any two keys compare.
    """
    if type(x) is Fraction:
        return (0, x)
    if isinstance(x, NegInf):
        return (-1,)
    try:
        return x._ord
    except AttributeError:
        pass
    if isinstance(x, Func):
        if x.name == "exp":
            v = to_float(x.arg)
            out = (1, abs(v), -v, _order(x.arg))
        else:
            out = (3, _FUNC_RANK[x.name], _order(x.arg))
    elif isinstance(x, Pow):
        out = (2, _order(x.base), x.exponent)
    elif isinstance(x, Mul):
        out = (4, tuple(_order(f) for f in x.factors), x.coeff)
    else:
        out = (5, tuple(_order(t) for t in x.terms), x.const)
    x._ord = out
    return out


def _term_order(factors: tuple) -> tuple:
    """Sort key of a term of a sum: its factors (its coefficient left out)."""
    return tuple([_order(f) for f in factors])


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


def _primitive(x: Add) -> tuple[Fraction, Add]:
    """``x = c * p`` with ``p`` primitive: integer coefficients without a common
    factor, the leading one (the constant, else the first term) positive."""
    try:
        return x._prim
    except AttributeError:
        pass
    coeffs = [x.const, *(t.coeff if isinstance(t, Mul) else ONE for t in x.terms)]
    g = l = 0
    for q in coeffs:
        g = math.gcd(g, q._numerator)
        l = q._denominator if not l else l * q._denominator // math.gcd(l, q._denominator)
    lead = coeffs[0] if coeffs[0]._numerator else coeffs[1]
    c = Fraction(-g if lead._numerator < 0 else g, l)
    x._prim = (ONE, x) if c == 1 else (c, _scale_add(x, 1 / c))
    if c != 1:
        x._prim[1]._prim = (ONE, x._prim[1])
    return x._prim


def _scale_add(x: Add, c: Fraction) -> Add:
    """``c * x`` for a sum and a nonzero rational (terms keep their order)."""
    return Add(x.const * c, tuple(_term(s * c, f) for s, f in map(_split, x.terms)))


def _split(x) -> tuple[Fraction, tuple]:
    """A term as (rational coefficient, factors), a sum factor made primitive."""
    if isinstance(x, Add):
        c, p = _primitive(x)
        return c, (p,)
    if isinstance(x, Mul):
        try:
            return x._sp
        except AttributeError:
            coeff, factors = x.coeff, x.factors
            for k, f in enumerate(factors):
                if isinstance(f, Add):
                    c, p = _primitive(f)
                    if c != 1:
                        coeff, factors = coeff * c, factors[:k] + (p,) + factors[k + 1:]
            x._sp = (coeff, factors)
            return x._sp
    return ONE, (x,)


def _term(coeff: Fraction, factors: tuple):
    """``coeff * factors`` (factors sorted, sum factors primitive): the
    coefficient goes inside the first sum factor, if any."""
    if coeff == 0:
        return ZERO
    if not factors:
        return coeff
    if coeff == 1 and len(factors) == 1:
        return factors[0]
    if coeff != 1:
        for k, f in enumerate(factors):
            if isinstance(f, Add):
                if len(factors) == 1:
                    return _scale_add(f, coeff)
                factors = factors[:k] + (_scale_add(f, coeff),) + factors[k + 1:]
                coeff = ONE
                break
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
    """``add(*xs)``: the sum, rationals folded, like terms collected, terms sorted.
    ``-oo + x = -oo``."""
    const = ZERO
    collected: dict[tuple, Fraction] = {}
    neg_inf = False
    for x in xs:
        x = exact(x)
        if type(x) is Fraction:
            const += x
            continue
        if isinstance(x, Add):
            const += x.const
            items = x.terms
        elif isinstance(x, Expr):
            items = (x,)
        elif isinstance(x, NegInf):
            neg_inf = True
            continue
        else:
            const += x  # a Fraction subclass
            continue
        for t in items:
            coeff, factors = _split(t)  # Exprs: cached hashes, equal iff structurally equal
            c = collected.get(factors)
            collected[factors] = coeff if c is None else c + coeff
    if neg_inf:
        return NEG_INF
    live = [(f, c) for f, c in collected.items() if c]
    if not live:
        return const
    if len(live) > 1:
        live.sort(key=lambda fc: _term_order(fc[0]))
    terms = tuple([_term(c, f) for f, c in live])
    if const == 0 and len(terms) == 1:
        return terms[0]
    return Add(const, terms)


def _mul(xs) -> Exact:
    """``mul(*xs)``: the product, rationals folded, powers of one base merged
    (proportional sums too), factors sorted.  ``c (-oo) = -oo`` for ``c > 0``."""
    coeff = ONE
    exp_args = []
    rads = []  # (rational base, exponent)
    bases: dict = {}  # Expr base -> summed exponent
    neg_inf = 0
    for x in xs:
        x = exact(x)
        if type(x) is Fraction:
            coeff *= x
            continue
        if isinstance(x, NegInf):
            neg_inf += 1
            continue
        if not isinstance(x, Expr):
            coeff *= x
            continue
        c, factors = _split(x)
        coeff *= c
        for f in factors:
            if type(f) is Func and f.name == "exp":
                exp_args.append(f.arg)  # e^a e^b = e^(a+b)
                continue
            if type(f) is Pow:
                base, e = f.base, f.exponent
                if type(base) is Fraction:
                    rads.append((base, e))
                    continue
            else:
                base, e = f, ONE
            e0 = bases.get(base)
            bases[base] = e if e0 is None else e0 + e
    if neg_inf:
        return _mul_neg_inf(neg_inf, coeff, xs)
    if coeff == 0:
        return ZERO
    factors = []
    if exp_args:
        arg = exp_args[0] if len(exp_args) == 1 else add(*exp_args)
        if arg != 0:
            factors.append(exp(arg))
    if rads:
        if len(rads) == 1 and rads[0][0]._denominator == 1 and 0 < rads[0][1] < 1:
            factors.append(Pow(*rads[0]))  # one canonical root: nothing to merge
        else:
            c, fs = _radicals(rads)
            coeff *= c
            factors.extend(fs)
    for base, e in bases.items():
        if not e:
            continue
        if e == 1 and not isinstance(base, Add):
            factors.append(base)
            continue
        c, fs = _split(power(base, e))
        coeff *= c
        factors.extend(fs)
    if len(factors) > 1:
        factors.sort(key=_order)
    return _term(coeff, tuple(factors))


def _mul_neg_inf(count: int, coeff: Fraction, xs) -> Exact:
    if count > 1:
        raise ValueError("(-oo) * (-oo) is +oo, which is not a value here (only -oo, a masked score)")
    rest = mul(*(x for x in xs if not isinstance(x, NegInf)))
    s = sign(rest)
    if s == 0:
        raise ValueError("0 * (-oo) is undefined")
    if s < 0:
        raise ValueError("a negative number times -oo is +oo, which is not a value here "
                         "(only -oo, a masked score)")
    return NEG_INF


# -- rational powers of rationals
_PRIMES: list = []


def _primes() -> list:
    """The primes below TRIAL_BOUND (a sieve, built on first use)."""
    if not _PRIMES:
        n = TRIAL_BOUND
        sieve = bytearray([1]) * n
        sieve[0:2] = b"\0\0"
        for p in range(2, math.isqrt(n) + 1):
            if sieve[p]:
                sieve[p * p::p] = bytes(len(range(p * p, n, p)))
        _PRIMES.extend(p for p in range(n) if sieve[p])
    return _PRIMES


@lru_cache(maxsize=4096)
def _factor(n: int) -> tuple[tuple[int, int], ...]:
    """``n >= 2`` as ((base, multiplicity), ...): primes below TRIAL_BOUND, and
    what is left as one base that is not a perfect power (prime if below
    TRIAL_BOUND**2)."""
    out = []
    if n < 10**8:
        candidates = range(2, math.isqrt(n) + 1)
    else:
        candidates = _primes()
    for p in candidates:
        if p * p > n:
            break
        if n % p == 0:
            k = 0
            while n % p == 0:
                n //= p
                k += 1
            out.append((p, k))
    if n > 1:
        root, k = _perfect_power(n)
        out.append((root, k))
    return tuple(out)


def _perfect_power(n: int) -> tuple[int, int]:
    """``n = root ** k`` with the largest k (root not a perfect power)."""
    if n < TRIAL_BOUND * TRIAL_BOUND:
        return n, 1  # n has no prime factor below the bound: n is prime
    for k in range(n.bit_length(), 1, -1):
        r = _int_root(n, k)
        if r is not None:
            return r, k
    return n, 1


def _radicals(rads) -> tuple[Fraction, list]:
    """``prod b ** e`` for rational b > 0: (rational coefficient, root factors).

    Exponents are summed per prime; the whole part of each goes to the
    coefficient; what is left, in (0, 1), is grouped by root: primes p with
    exponents n_p / d give one factor ``m ** (g/d)``, g = gcd(n_p),
    ``m = prod p ** (n_p / g)``.
    """
    coeff = ONE
    exps: dict[int, Fraction] = {}
    for b, e in rads:
        if e._denominator == 1:
            coeff *= b ** e._numerator
            continue
        if b < 0:
            raise ValueError("root of a negative number")
        if b == 0:
            if e < 0:
                raise ZeroDivisionError("0 to a negative power")
            return ZERO, []
        for n, s in ((b._numerator, e), (b._denominator, -e)):
            if n != 1:
                for p, k in _factor(n):
                    exps[p] = exps.get(p, 0) + k * s
    if len(exps) > 1 and max(exps) >= TRIAL_BOUND * TRIAL_BOUND:
        exps = _coprime(exps)
    groups: dict[int, list] = {}
    for p, r in exps.items():
        whole = r.numerator // r.denominator
        if whole:
            coeff *= Fraction(p) ** whole
        r -= whole
        if r:
            groups.setdefault(r.denominator, []).append((p, r.numerator))
    factors = []
    for d in sorted(groups):
        items = groups[d]
        g = 0
        for _, n in items:
            g = math.gcd(g, n)
        m = 1
        for p, n in items:
            m *= p ** (n // g)
        factors.append(Pow(rational(m), Fraction(g, d)))
    if len(factors) > 1:
        factors.sort(key=_order)
    return coeff, factors


def _coprime(exps: dict) -> dict:
    """Split large bases on their common factors until they are pairwise coprime."""
    exps = dict(exps)
    while True:
        keys = sorted(exps)
        big = [p for p in keys if p >= TRIAL_BOUND * TRIAL_BOUND]  # only these may be composite
        pair = next(((a, b) for a in big for b in keys if b != a and math.gcd(a, b) > 1), None)
        if pair is None:
            return {p: r for p, r in exps.items() if r}
        a, b = pair
        g = math.gcd(a, b)
        ea, eb = exps.pop(a), exps.pop(b)
        for n, r in ((g, ea + eb), (a // g, ea), (b // g, eb)):
            if n > 1:
                for p, k in _factor(n):
                    exps[p] = exps.get(p, 0) + k * r


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


def _power(args) -> Exact:
    """``power(base, e)``: ``base ** e`` for a rational exponent, folded where it is rational."""
    base, e = args
    base = exact(base)
    e = e if type(e) is Fraction else Fraction(e)
    if e == 0:
        return ONE
    if e == 1:
        return base
    if type(base) is Fraction or not isinstance(base, (Expr, NegInf)):
        if e._denominator == 1:
            if base == 0 and e < 0:
                raise ZeroDivisionError("division by zero")
            return base ** e._numerator
        c, fs = _radicals([(base, e)])
        return _term(c, tuple(fs))
    if isinstance(base, NegInf):
        if e._denominator == 1 and e < 0:
            return ZERO  # 1 / (-oo)
        if e._denominator == 1 and e._numerator % 2:
            return NEG_INF
        raise ValueError(f"(-oo)**({e}) is not a value here")
    whole = e._denominator == 1
    if isinstance(base, Func) and base.name == "exp":
        return exp(mul(e, base.arg))
    if whole:
        if e < 0 and sign(base) == 0:  # pragma: no cover - sign() raises first
            raise ZeroDivisionError("division by zero")
        if isinstance(base, Mul):
            c, fs = _split(base)
            return mul(power(c, e), *(power(f, e) for f in fs))
        if isinstance(base, Pow):
            return power(base.base, base.exponent * e)
        if isinstance(base, Add):
            c, p = _primitive(base)
            if e < 0:
                sign(p)  # a zero the normal form missed raises here, not later
            return Pow(p, e) if c == 1 else mul(power(c, e), Pow(p, e))
        return Pow(base, e)
    # a root: the base must be positive, then each part may be rooted apart
    if sign(base) < 0:
        raise ValueError("root of a negative number")
    if isinstance(base, Pow):
        inner = base.base if type(base.base) is Fraction or sign(base.base) > 0 else mul(-1, base.base)
        return power(inner, base.exponent * e)  # (x^a)^e = |x|^(a e) for x^a > 0
    if isinstance(base, Mul):
        c, fs = _split(base)
        parts = [abs(c)]
        for f in fs:
            if sign(f) > 0:
                parts.append(f)
            elif isinstance(f, Add):
                parts.append(mul(-1, f))
            elif isinstance(f, Pow) and isinstance(f.base, Add) and f.exponent._denominator == 1:
                parts.append(Pow(mul(-1, f.base), f.exponent) if f.exponent._numerator % 2 else f)
            else:
                return Pow(base, e)  # a negative function value: keep the product whole
        return mul(*(power(f, e) for f in parts))
    if isinstance(base, Add):
        c, p = _primitive(base)
        if c < 0:
            c, p = -c, _scale_add(p, -ONE)
        return Pow(p, e) if c == 1 else mul(power(c, e), Pow(p, e))
    return Pow(base, e)


def sqrt(x) -> Exact:
    """Exact square root of a non-negative exact value."""
    return power(x, HALF)


_AT_ZERO = {"exp": 1, "sin": 0, "cos": 1, "tanh": 0}
_AT_NEG_INF = {"exp": ZERO, "tanh": -ONE}


def _func(name: str, arg) -> Exact:
    """``name(arg)``: exact at 0 and at -oo; sin and tanh odd, cos even."""
    arg = exact(arg)
    if isinstance(arg, NegInf):
        if name in _AT_NEG_INF:
            return _AT_NEG_INF[name]
        raise ValueError(f"{name}(-oo) is undefined")
    if type(arg) is Fraction and not arg._numerator:
        return _INTS[_AT_ZERO[name]]
    if name != "exp" and _neg(arg):
        inner = Func(name, mul(-1, arg))
        return inner if name == "cos" else mul(-1, inner)
    return Func(name, arg)


def _exp(args) -> Exact:
    """``exp(x)``: e^x (e^0 = 1, e^-oo = 0)."""
    return _func("exp", args[0])


def sin(x) -> Exact:
    """``sin(x)``, with ``sin(-x) = -sin(x)``."""
    return _func("sin", x)


def cos(x) -> Exact:
    """``cos(x)``, with ``cos(-x) = cos(x)``."""
    return _func("cos", x)


def tanh(x) -> Exact:
    """``tanh(x)``, with ``tanh(-x) = -tanh(x)`` (as sympy writes it) and ``tanh(-oo) = -1``."""
    return _func("tanh", x)


# the public constructors, memoised: add(*xs), mul(*xs), power(base, e), exp(x)
add = _memoised(_add)
mul = _memoised(_mul)
power = _memoised(_power)
exp = _memoised(_exp)


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


_EPS = 2.0 ** -50  # relative widening: a few ulps, more than libm's error


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
        return v ** _rat_float(e) if e.denominator != 1 else v ** e.numerator if abs(v) != math.inf \
            else math.inf ** e.numerator if v > 0 else (-math.inf) ** e.numerator
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
    from mpmath import iv

    saved = iv.prec
    try:
        for prec in _MP_PRECISIONS:
            iv.prec = prec
            try:
                v = _iv_eval(x, iv)
            except (ArithmeticError, ValueError):
                continue
            if v.a > 0:
                return 1
            if v.b < 0:
                return -1
    finally:
        iv.prec = saved
    raise ValueError(f"cannot decide the sign of {to_str(x)} (it may be 0)")


def _iv_eval(x, iv):
    """An mpmath interval holding x (at iv's working precision)."""
    if type(x) is Fraction:
        return iv.mpf(x._numerator) / x._denominator
    if isinstance(x, Add):
        out = _iv_eval(x.const, iv)
        for t in x.terms:
            out += _iv_eval(t, iv)
        return out
    if isinstance(x, Mul):
        out = _iv_eval(x.coeff, iv)
        for f in x.factors:
            out *= _iv_eval(f, iv)
        return out
    if isinstance(x, Pow):
        b, e = _iv_eval(x.base, iv), x.exponent
        if e.denominator == 1:
            return b ** e.numerator
        return iv.exp(iv.log(b) * e.numerator / e.denominator)
    a = _iv_eval(x.arg, iv)
    if not -_HUGE_ARG < a.a <= a.b < _HUGE_ARG:
        raise ValueError("argument too large for interval evaluation")
    if x.name == "tanh":
        return 1 - 2 / (iv.exp(2 * a) + 1)
    return getattr(iv, x.name)(a)


# ---------------------------------------------------------------- evaluation
def _rat_float(q: Fraction) -> float:
    """float(q) without OverflowError: +-inf beyond the float range, 0.0 below it."""
    try:
        return q._numerator / q._denominator
    except OverflowError:
        return math.inf if q._numerator > 0 else -math.inf


def to_float(x) -> float:
    """The float64 nearest an exact value, as well as float64 can say it:
    ``inf`` for ``e^{1000}`` or ``10^{400}``, ``0.0`` for ``e^{-1000}``,
    ``-inf`` for -oo.  Never raises."""
    if type(x) is Fraction:  # the common case, without Fraction's property calls
        try:
            return x._numerator / x._denominator
        except OverflowError:
            return math.inf if x._numerator > 0 else -math.inf
    if isinstance(x, Fraction):
        return _rat_float(Fraction(x))
    if isinstance(x, int):
        return _rat_float(Fraction(x))
    return float(x)


def _honest_float(x: Expr) -> float:
    """float(x): float64 arithmetic while the value, the partial products of
    a Mul and the base of a Pow are normal floats; otherwise (overflow,
    underflow, inf * 0) mpmath at 80 bits.  (A sum absorbs a term that
    underflowed to 0 with an error below 1e-308.)"""
    try:
        v = x._float()
        if _FLOAT_MIN <= abs(v) < math.inf:
            return v
    except (OverflowError, ValueError, ZeroDivisionError):
        pass
    return _mp_float(x)


def _mp_float(x) -> float:
    import mpmath

    with mpmath.workprec(80):
        v = _mp_eval(x, mpmath)
    try:
        return float(v)
    except (OverflowError, ValueError):  # pragma: no cover - mpmath gives inf
        return math.inf if v > 0 else -math.inf


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
        return b ** e.numerator if e.denominator == 1 else mp.root(b, e.denominator) ** e.numerator
    a = _mp_eval(x.arg, mp)
    if abs(a) > _HUGE_ARG:  # the value is known without mpmath's argument reduction
        if x.name == "exp":
            return mp.inf if a > 0 else mp.zero
        if x.name == "tanh":
            return mp.mpf(1) if a > 0 else mp.mpf(-1)
        if abs(a) > 2 ** 4000:
            return mp.nan  # sin, cos of an astronomically large number: no honest float
    return getattr(mp, x.name)(a)


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
    coeffs: dict = {}  # e -> summed coefficient
    for c, e in pairs:
        if not c._numerator:
            continue  # 0 e^d is 0
        if type(e) is Fraction:  # e^0 = 1
            const += c * e
        elif e in coeffs:
            coeffs[e] += c
        else:
            coeffs[e] = c
    live = [(e, c) for e, c in coeffs.items() if c]
    if len(live) > 1:
        live.sort(key=lambda ec: _order(ec[0]))
    terms = tuple([e if c == 1 else Mul(c, (e,)) for e, c in live])
    if not terms:
        return const
    if const == 0 and len(terms) == 1:
        return terms[0]
    return Add(const, terms)


def ratio_of_exp_sums(num: Iterable[tuple], den: Iterable) -> Exact:
    """``(sum_j c_j e^{a_j}) / (sum_j e^{b_j})``, exponents exact.

    ``num`` holds (coefficient, exponent) pairs, ``den`` exponents.  Masked
    (``-oo``) exponents drop out, ``e^0`` is 1.  A ratio of proportional sums
    is the rational it is.  Raises ValueError if every exponent of ``den`` is
    masked.
    """
    den = [b for b in den if not isinstance(b, NegInf)]
    if not den:
        raise ValueError("softmax of a row with every entry masked (-oo): "
                         "every row needs at least one unmasked entry")
    top = exp_combination((exact(c), exp(a)) for c, a in num if not isinstance(a, NegInf))
    bottom = add(*(exp(b) for b in den))
    if top == 0:
        return ZERO
    return mul(top, power(bottom, -1))


def over_sum(top, inv, total) -> Exact:
    """``mul(top, inv)`` for ``inv = power(total, -1)``, ``total`` a sum of
    exponentials: the same tree (tested), built directly in the cases a
    softmax row gives (a memoised mul of a new sum costs its structural key).
    A ``top`` proportional to ``total`` gives the rational ratio."""
    if isinstance(total, Add) and isinstance(inv, Pow) and (inv.base is total or inv.base == total):
        if type(top) is Fraction:
            return inv if top == 1 else Mul(top, (inv,))
        if isinstance(top, Func) and top.name == "exp":
            return Mul(ONE, (top, inv))
        if isinstance(top, Mul) and len(top.factors) == 1 and isinstance(top.factors[0], Func) \
                and top.factors[0].name == "exp":
            return Mul(top.coeff, (top.factors[0], inv))
        if isinstance(top, Add):
            c = _proportional(top, total)
            return Mul(ONE, (inv, top)) if c is None else c
    return mul(top, inv)


def _proportional(a: Add, b: Add):
    """The rational c with ``a = c b``, or None (no new sums built)."""
    if len(a.terms) != len(b.terms) or bool(a.const) != bool(b.const):
        return None
    c = None
    if b.const:
        c = a.const / b.const
    for s, t in zip(a.terms, b.terms):
        (ca, fa), (cb, fb) = _split(s), _split(t)
        if fa != fb:
            return None
        if c is None:
            c = ca / cb
        elif ca != c * cb:
            return None
    return c


def softmax_row(row: list) -> list:
    """Exact softmax of one row, each weight as ``1 / sum_k e^{a_k - a_j}``.

    Masked entries (``-oo``) get weight exactly 0; the weights sum to 1
    exactly (as real numbers; each is written in its own simplest form).
    Raises ValueError if every entry is masked (the softmax is undefined).
    """
    out = []
    live = [a for a in row if not isinstance(a, NegInf)]
    if not live:
        raise ValueError("softmax of a row with every entry masked (-oo): "
                         "every row needs at least one unmasked entry")
    rational = all(type(a) is Fraction for a in live)
    for a_j in row:
        if isinstance(a_j, NegInf):
            out.append(ZERO)
            continue
        diffs = [a_k - a_j for a_k in live] if rational else [add(a_k, mul(-1, a_j)) for a_k in live]
        out.append(power(add(*(exp(d) for d in diffs)), -1))
    return out
