"""The canonical normal form: the constructors ``add``, ``mul``, ``power``,
``exp``, ``sqrt``, ``sin``, ``cos``, ``tanh`` give one tree per value whatever
the order of their arguments (see the package docstring for the rules), so
equal values are equal objects with equal hashes and equal strings, and a
value that is rational is a Fraction.

``add``, ``mul``, ``power`` and ``exp`` are memoised (:func:`.core._memoised`):
their tables are module-level and exist once, here.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .core import _INTS, HALF, ONE, ZERO, _memoised
from .nodes import NEG_INF, OPERATIONS, Add, Exact, Expr, Func, Mul, NegInf, Pow, _neg, exact
from .numeric import sign, to_float
from .roots import radical_parts

__all__ = ["add", "mul", "power", "exp", "sqrt", "sin", "cos", "tanh"]


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
                        coeff, factors = coeff * c, factors[:k] + (p,) + factors[k + 1 :]
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
                factors = factors[:k] + (_scale_add(f, coeff),) + factors[k + 1 :]
                coeff = ONE
                break
    return Mul(coeff, factors)


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


# long: the canonical product: one case per node type, so the normal form is read in one place
def _mul(xs) -> Exact:  # noqa: C901, PLR0915
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
        raise ValueError("a negative number times -oo is +oo, which is not a value here (only -oo, a masked score)")
    return NEG_INF


def _radicals(rads) -> tuple[Fraction, list]:
    """``prod b ** e`` for rational b > 0: (rational coefficient, sorted root
    factors ``Pow(m, g/d)``), see :func:`.roots.radical_parts`."""
    coeff, parts = radical_parts(rads)
    factors = [Pow(m, e) for m, e in parts]
    if len(factors) > 1:
        factors.sort(key=_order)
    return coeff, factors


# long: the canonical power: one case per node type, so the normal form is read in one place
def _power(args) -> Exact:  # noqa: C901
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
            return base**e._numerator
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
OPERATIONS.add, OPERATIONS.mul, OPERATIONS.power = add, mul, power  # Expr's operators
exp = _memoised(_exp)
