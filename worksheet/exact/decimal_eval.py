"""Exact values as a decimal *midpoint and radius*: ``|x - mid| <= rad``, at a
chosen number of digits, the same on every machine (see :mod:`.rounding`,
which decides roundings with it).

Decimal arithmetic (the ``decimal`` module: correctly rounded ``+ - * /``,
``sqrt`` and ``exp``, in C) with a rigorous error bound carried node by node.
``sin`` and ``cos`` are Taylor series in integers after reduction by pi/2 (pi
by Machin's formula); a root of an integer up to the 32nd is an integer root;
other roots go through mpmath intervals (:mod:`.mp_eval`) at the matching
precision.  Each node keeps its midpoint and radius, so a softmax's shared
sums are evaluated once.
"""

from __future__ import annotations

import decimal as _dec
from decimal import Decimal
from fractions import Fraction

from .mp_eval import iv_context, iv_eval as _iv_eval
from .nodes import Add, Func, Mul, NegInf, Pow

__all__ = ["DIGITS", "PRECS", "Prec", "Hard", "mid_rad"]

_POW10 = tuple(10**k for k in range(40))

_DIGITS = (30, 60, 120, 240, 480, 960, 1920)
_BIG_ARG = Decimal(10) ** 6  # exp/tanh of more than this: handled without decimal's big work


class _Hard(ArithmeticError):
    """This precision cannot bound the value (a huge or non-finite partial result)."""


def _context(prec: int, rounding=_dec.ROUND_HALF_EVEN) -> _dec.Context:
    return _dec.Context(prec=prec, rounding=rounding, Emax=_dec.MAX_EMAX, Emin=_dec.MIN_EMIN, traps=[], flags=[])


class _Prec:
    """The contexts of one precision: values (to nearest), radii (rounded up),
    interval ends (floor, ceiling); ``u`` bounds the relative error of one
    correctly rounded operation."""

    def __init__(self, digits: int):
        self.digits = digits
        self.c = _context(digits)
        self.up = _context(12, _dec.ROUND_CEILING)
        self.lo = _context(digits + 10, _dec.ROUND_FLOOR)
        self.hi = _context(digits + 10, _dec.ROUND_CEILING)
        self.u = Decimal(10) ** (1 - digits)
        self.bits = int(digits * 3.33) + 16
        self.wide = _context(digits + 10)  # sin and cos work with 10 more digits
        self.reduction = Decimal(10) ** -(digits + 4)  # their error per multiple of pi/2


_PRECS = {d: _Prec(d) for d in _DIGITS}
_ZERO = Decimal(0)


def _finite(*xs: Decimal) -> None:
    for x in xs:
        if not x.is_finite():
            raise _Hard


# ---------------------------------------------------------------- midpoint and radius
def _rat(q: Fraction, P: _Prec) -> tuple[Decimal, Decimal]:
    n, d = q._numerator, q._denominator
    if d == 1 and n.bit_length() <= 3 * P.digits:
        return Decimal(n), _ZERO
    v = P.c.divide(Decimal(n), Decimal(d))
    return v, P.up.multiply(v.copy_abs(), P.u)


def _mr(x, P: _Prec) -> tuple[Decimal, Decimal]:
    """(mid, rad) with |x - mid| <= rad, at ``P.digits`` digits."""
    if type(x) is Fraction:
        return _rat(x, P)
    if isinstance(x, NegInf):
        raise _Hard
    try:
        cached = x._dm
    except AttributeError:
        cached = None
    if cached is not None and cached[0] >= P.digits:
        return cached[1], cached[2]
    v, r = _EVAL[type(x)](x, P)
    _finite(v, r)
    x._dm = (P.digits, v, r)
    return v, r


def _add(x: Add, P: _Prec):
    c, up = P.c, P.up
    v, r = _rat(x.const, P)
    size = v.copy_abs()
    for t in x.terms:
        tv, tr = _mr(t, P)
        v = c.add(v, tv)
        r = up.add(r, tr)
        size = up.add(size, tv.copy_abs())
    # each of the len(terms) additions errs by at most u * (a partial sum) <= u * size
    return v, up.add(r, up.multiply(size, P.u * len(x.terms)))


def _mul(x: Mul, P: _Prec):
    c, up = P.c, P.up
    factors = x.factors
    if x.coeff == 1:  # (a Fraction's == with an int is cheap) start from the first factor
        v, r = _mr(factors[0], P)
        factors = factors[1:]
    else:
        v, r = _rat(x.coeff, P)
    for f in factors:
        fv, fr = _mr(f, P)
        w = c.multiply(v, fv)
        # |ab - w| <= |a| rb + |b| ra + ra rb + u |w|
        err = up.multiply(w.copy_abs(), P.u)
        if fr:
            err = up.add(err, up.multiply(up.add(v.copy_abs(), r), fr))
        if r:
            err = up.add(err, up.multiply(fv.copy_abs(), r))
        r, v = err, w
    return v, r


def _int_power(v: Decimal, r: Decimal, k: int, P: _Prec):
    """(v +- r) ** k for an integer k != 0."""
    if k == 1:
        return v, r
    up = P.up
    if v == 0 or up.multiply(up.divide(r, v.copy_abs()), abs(k)) > Decimal("0.25"):
        raise _Hard  # too wide to bound this way: more digits
    rho = up.divide(r, v.copy_abs())
    w = P.c.power(v, k)
    _finite(w)
    # ((1 +- rho)^k - 1) <= 3 |k| rho while |k| rho <= 1/4; the power errs by <= (2|k| + 2) u
    rel = up.add(up.multiply(3 * abs(k), rho), up.multiply(2 * abs(k) + 2, P.u))
    return w, up.multiply(w.copy_abs(), rel)


def _iroot(n: int, q: int, start: int) -> int:
    """floor(n ** (1/q)) for integers n >= 0, q >= 2: Newton's method on integers
    from ``start``, which must be at least the root (the result is then exact
    whatever the start: a better start only saves steps)."""
    y = start
    while True:
        z = ((q - 1) * y + n // y ** (q - 1)) // q
        if z >= y:
            return y
        y = z


def _rat_root(b: int, p: int, q: int, P: _Prec):
    """b^(p/q) for integers b >= 2, 0 < p < q: an integer root, within one unit of
    the last of ``P.digits + 5`` decimals."""
    d = P.digits + 5
    n = b**p * 10 ** (q * d)
    try:  # a start just above the root from floats (any float error is far below 1e-9)
        start = int(b ** (p / q) * 10.0 ** min(d, 300) * (1 + 1e-9)) * 10 ** max(d - 300, 0) + 2
    except OverflowError:
        start = 1 << -(-n.bit_length() // q)
    if start**q < n:  # not above the root after all: a power of two that is
        start = 1 << -(-n.bit_length() // q)
    k = _iroot(n, q, start)  # b^(p/q) 10^d - 1 < k <= b^(p/q) 10^d
    v = P.c.divide(Decimal(k), Decimal(10) ** d)
    return v, P.up.add(P.up.multiply(v.copy_abs(), P.u), Decimal(10) ** -d)


def _pow(x: Pow, P: _Prec):
    e = x.exponent
    p, q = e._numerator, e._denominator
    if q == 1:
        return _int_power(*_mr(x.base, P), p, P)
    base = x.base
    if type(base) is Fraction and base._denominator == 1 and base._numerator >= 2 and 0 < p < q <= 32:
        return _rat_root(base._numerator, p, q, P)
    if q != 2:
        return _mp(x, P)
    bv, br = _mr(x.base, P)
    up = P.up
    low = P.lo.subtract(bv, br)
    if low <= 0:
        raise _Hard
    s = P.c.sqrt(bv)
    # |sqrt(b') - sqrt(b)| <= rb / (2 sqrt(b - rb)) <= rb / sqrt(b - rb); sqrt errs by <= u
    sr = up.add(up.divide(br, P.lo.sqrt(low)), up.multiply(s, P.u))
    return _int_power(s, sr, p, P)


_PI: dict[int, Decimal] = {}


def _pi(P: _Prec) -> Decimal:
    """pi/2 to ``P.digits + 10`` digits (within 10^-(digits + 5)), computed once per
    precision by Machin's formula in integers."""
    if P.digits not in _PI:
        d = P.digits + 20
        one = 10**d

        def arctan_inv(n: int) -> int:  # arctan(1/n) * 10^d, truncated terms
            total, term, k, sign = 0, one // n, 1, 1
            while term:
                total += sign * (term // k)
                term //= n * n
                k += 2
                sign = -sign
            return total

        _PI[P.digits] = P.lo.divide(Decimal(8 * arctan_inv(5) - 2 * arctan_inv(239)), Decimal(one))
    return _PI[P.digits]


def _sin_cos(x: Func, P: _Prec):
    """sin or cos of a decimal midpoint: reduced by the nearest multiple k of
    pi/2 (|r| <= pi/4 + a little), then Taylor series; |sin'|, |cos'| <= 1."""
    av, ar = _mr(x.arg, P)
    if abs(av) > _BIG_ARG:
        raise _Hard
    c = P.wide
    half_pi = _pi(P)
    k = int(c.divide(av, half_pi).to_integral_value(_dec.ROUND_HALF_EVEN))
    r = c.subtract(av, c.multiply(k, half_pi))
    quadrant = (k + (1 if x.name == "cos" else 0)) % 4  # sin(r + q pi/2)
    use_cos = quadrant % 2 == 1
    negative = quadrant >= 2
    # the Taylor series in integers, scaled by 10^D: each step's floor division errs
    # by less than one unit 10^-D, and |r| < 0.8 makes the terms shrink fast
    D = P.digits + 10
    one = _POW10[D] if D < 40 else 10**D
    R = int(r.scaleb(D, c).to_integral_value())  # within one unit of r
    R2 = R * R // one
    term = one if use_cos else R
    total, n = term, (0 if use_cos else 1)
    while term:
        term = -(term * R2 // one) // ((n + 1) * (n + 2)) if term > 0 else (-term * R2 // one) // ((n + 1) * (n + 2))
        total += term
        n += 2
    v = P.c.divide(Decimal(-total if negative else total), Decimal(one))
    # r errs by |k| 10^-(digits+5) (pi) plus roundings; the series by a unit per step
    err = up_add(P, ar, P.up.multiply(abs(k) + 100, P.reduction), P.up.multiply(v.copy_abs(), P.u))
    return v, err


def up_add(P: _Prec, *xs: Decimal) -> Decimal:
    out = _ZERO
    for x in xs:
        out = P.up.add(out, x)
    return out


def _func(x: Func, P: _Prec):
    name = x.name
    if name in ("sin", "cos"):
        return _sin_cos(x, P)
    av, ar = _mr(x.arg, P)
    up = P.up
    if abs(av) > _BIG_ARG or ar > Decimal("0.25"):
        raise _Hard
    if name == "exp":
        v = P.c.exp(av)
        # e^(a + d) = e^a (1 + t), |t| <= 2 |d| for |d| <= 1/4; exp errs by <= u
        return v, up.multiply(v.copy_abs(), up.add(up.multiply(3, ar), up.multiply(2, P.u)))
    # tanh(a) = 1 - 2 / (e^(2a) + 1): four roundings of a value at most 1, and |tanh'| <= 1
    c = P.c
    big = c.exp(c.multiply(2, av.copy_abs()))
    t = c.subtract(1, c.divide(2, c.add(big, 1)))
    if av < 0:
        t = t.copy_negate()
    return t, up.add(ar, up.multiply(8, P.u))


def _mp(x, P: _Prec):
    """Through an mpmath interval (sin, cos, general roots): the tree below
    ``x`` at ``P.bits`` bits, its ends turned into a decimal midpoint and radius."""
    try:
        ival = _iv_eval(x, iv_context(P.bits))
    except (ArithmeticError, ValueError):
        raise _Hard from None
    lo, hi = ival._mpi_
    a, b = _mpf_decimal(lo, P), _mpf_decimal(hi, P)
    c, up = P.c, P.up
    v = c.divide(c.add(a, b), 2)
    r = up.add(up.divide(up.subtract(b, a), 2), up.multiply(up.add(a.copy_abs(), b.copy_abs()), P.u))
    return v, up.add(r, up.multiply(v.copy_abs(), P.u))


def _mpf_decimal(m: tuple, P: _Prec) -> Decimal:
    """An mpf interval end (mpmath's raw tuple) as a decimal (one rounding, within u of it)."""
    sign, man, exp, _ = m
    if not man:
        if exp:  # inf or nan
            raise _Hard
        return _ZERO
    man = -man if sign else man
    if exp >= 0:
        return P.c.multiply(Decimal(man), P.c.power(Decimal(2), exp)) if exp > 64 else Decimal(man << exp)
    return P.c.divide(Decimal(man), Decimal(1 << -exp))


_EVAL = {Add: _add, Mul: _mul, Pow: _pow, Func: _func}


# the names :mod:`.rounding` uses
DIGITS, PRECS, Prec, Hard, mid_rad = _DIGITS, _PRECS, _Prec, _Hard, _mr
