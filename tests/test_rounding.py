"""worksheet.exact.rounding: the decimals every file writes, decided from the exact
value (docs/reference.md, "How decimals are made").  The oracle is sympy at 80 digits,
turned into the nearest double or N-place decimal with exact integer arithmetic."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
import sympy

from worksheet.exact import NEG_INF, add, cos, exp, mul, power, sin, sqrt, tanh, to_float, to_sympy
from worksheet.exact.nodes import Expr
from worksheet.exact.decimal_eval import PRECS as _PRECS
from worksheet.exact.decimal_eval import mid_rad as _mr
from worksheet.exact.rounding import decimal_places, nearest, round_scaled
from worksheet.solution.number_format import decimal

F = Fraction


def _exact_fraction(x, digits: int = 80) -> Fraction:
    """The exact value to ``digits`` significant digits, as a Fraction (sympy's
    evalf, then its mpf's mantissa and exponent: no float on the way)."""
    m = sympy.Float(to_sympy(x).evalf(digits), digits)._mpf_
    sign, man, exp2, _ = m
    q = Fraction(man) * (Fraction(2) ** exp2)
    return -q if sign else q


def _random_values(seed: int, n: int) -> list:
    rnd = random.Random(seed)

    def q(lo=-400, hi=400, den=97):
        return F(rnd.randint(lo, hi), rnd.randint(1, den))

    out = []
    for _ in range(n):
        a, b, c = exp(q()), exp(q()), exp(q())
        out += [
            mul(a, power(add(1, b, c), -1)),  # a softmax entry
            add(mul(q(), a), mul(q(), b), q()),  # a weighted sum, with cancellation
            tanh(q(-60, 60, 13)),
            sin(q(-(10**4), 10**4, 999)),
            cos(q(-(10**4), 10**4, 999)),
            power(rnd.randint(2, 10**6), F(rnd.randint(1, 6), 7)),  # a root of an integer
            sqrt(add(1, a)),
            mul(sqrt(rnd.randint(2, 99)), tanh(q(-9, 9, 7))),
            power(add(2, b), -3),
        ]
    return [x for x in out if isinstance(x, Expr)]


VALUES = _random_values(2026, 40) + [power(3, F(1, 509)), power(10, F(3, 31)), power(999983, F(3, 7))]


def test_nearest_is_the_correctly_rounded_double():
    for x in VALUES:
        want = float(_exact_fraction(x))  # Fraction -> float is correctly rounded
        assert nearest(x) == want and to_float(x) == want, x


@pytest.mark.parametrize("places", [0, 2, 4, 6, 12, 20])
def test_round_scaled_is_the_exact_value_rounded_half_away_from_zero(places):
    for x in VALUES:
        scaled = _exact_fraction(x, 80 + places) * 10**places
        k = math.floor(abs(scaled) + F(1, 2))
        assert round_scaled(x, places) == (k if scaled > 0 else -k), (x, places)


def test_every_radius_holds_at_every_precision():
    """|x - mid| <= rad at 30, 60 and 120 digits (fresh values at each)."""
    for digits, seed in ((30, 1), (60, 2), (120, 3)):
        for x in _random_values(seed, 6):
            mid, rad = _mr(x, _PRECS[digits])
            ref = _exact_fraction(x, digits + 60)
            assert abs(Fraction(mid) - ref) <= Fraction(rad), (digits, x)


def test_rationals_and_ties_are_rounded_exactly_half_away_from_zero():
    assert decimal(F(1, 20000)) == "0.0001" and decimal(F(-1, 20000)) == "-0.0001"
    assert decimal(F(-3, 20000)) == "-0.0002" and decimal(F(5, 2), 0) == "3"
    assert decimal(F(1, 32)) == "0.0313"  # the float 0.03125 would print 0.0312
    assert decimal(F(-1, 10**9)) == "0.0000"  # never "-0.0000"
    assert decimal(F(7)) == "7.0000" and decimal_places(F(-7, 2), 1) == "-3.5"
    assert nearest(F(1, 3)) == 1 / 3 and nearest(F(10**400)) == math.inf


def test_values_at_the_ends_of_the_float_range():
    assert nearest(exp(F(1000))) == math.inf and nearest(exp(F(-1000))) == 0.0
    assert nearest(exp(F(-745))) == 5e-324  # a subnormal, correctly rounded
    assert nearest(mul(-1, exp(F(-1000)))) == 0.0 and math.copysign(1, nearest(mul(-1, exp(F(-1000))))) == -1
    assert nearest(NEG_INF) == -math.inf
    assert decimal(exp(F(1000))) == "inf" and decimal(NEG_INF) == "-inf"
    assert nearest(exp(F(2**45))) == math.inf  # beyond any decimal evaluation: mpmath's answer


def test_a_value_near_a_rounding_boundary_takes_more_digits():
    """Values within 10^-45 of a rounding boundary (20 places): 30 digits cannot
    tell the side, so Ziv's loop takes more and still rounds them exactly."""
    x = add(F(1, 3), mul(F(1, 10**40), exp(F(-1))))
    assert round_scaled(x, 20) == 33333333333333333333
    assert round_scaled(add(F(1, 2 * 10**20), mul(F(1, 10**45), exp(F(-1)))), 20) == 1  # just above a tie
    assert round_scaled(add(F(1, 2 * 10**20), mul(F(-1, 10**45), exp(F(-1)))), 20) == 0  # just below it
