"""sympy as the oracle of the exact layer.

Random expression trees are built twice: through worksheet.exact's public
API, and with the same operations in sympy.  They must agree to 50 digits;
the printed string must sympify to the same sympy value as ``to_sympy``
(``sympify`` on our own output only, never user text); a value sympy
evaluates to a rational must be that rational, printed as such.  And the
normal form is canonical: the same value built in another order is the same
object (equal, same hash, same strings).
"""

from fractions import Fraction as F

import pytest
import sympy
from hypothesis import given, settings, strategies as st

from worksheet.exact import (
    NEG_INF,
    add,
    cos,
    exp,
    mul,
    power,
    sign,
    sin,
    sqrt,
    tanh,
    to_float,
    to_latex,
    to_str,
    to_sympy,
)

small = st.fractions(min_value=-4, max_value=4, max_denominator=4)
EXPONENTS = [F(-2), F(-1), F(2), F(3), F(1, 2), F(-1, 2), F(1, 3), F(2, 3), F(-1, 3), F(3, 2)]


def _S(q):
    return sympy.Rational(q.numerator, q.denominator)


@st.composite
def trees(draw, depth=3):
    """(exact value, the same value built in sympy)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        kind = draw(st.sampled_from(["rational", "exp", "sqrt"]))
        q = draw(small)
        if kind == "rational":
            return q, _S(q)
        if kind == "exp":
            return exp(q), sympy.exp(_S(q))
        r = abs(q) + draw(st.integers(1, 12))
        return sqrt(r), sympy.sqrt(_S(r))
    op = draw(st.sampled_from(["add", "sub", "mul", "div", "power", "sqrt", "sin", "cos", "tanh"]))
    a, A = draw(trees(depth=depth - 1))
    if op in ("add", "sub", "mul", "div"):
        b, B = draw(trees(depth=depth - 1))
        if op == "add":
            return add(a, b), A + B
        if op == "sub":
            return add(a, mul(-1, b)), A - B
        if op == "mul":
            return mul(a, b), A * B
        if b == 0:
            return a, A
        return mul(a, power(b, -1)), A / B
    if op in ("power", "sqrt"):
        e = draw(st.sampled_from(EXPONENTS)) if op == "power" else F(1, 2)
        if a == 0 and e < 0:
            return a, A
        if e.denominator != 1 and sign(a) < 0:
            a, A = mul(-1, a), -A
        return power(a, e), A ** _S(e)
    if to_float(a) > 50 or to_float(a) < -50:  # keep sin/cos/tanh arguments in a sane range
        return a, A
    return {"sin": sin, "cos": cos, "tanh": tanh}[op](a), getattr(sympy, op)(A)


def _close(x, y, digits=40):
    return abs(x - y) <= sympy.Float(10) ** -digits * (1 + abs(y))


@settings(max_examples=60, deadline=None)
@given(trees())
def test_value_agrees_with_sympy_to_fifty_digits(pair):
    x, X = pair
    ours, theirs = sympy.N(to_sympy(x), 50), sympy.N(X, 50)
    assert _close(ours, theirs), (to_str(x), X)
    assert to_float(x) == pytest.approx(float(theirs), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(trees())
def test_printed_string_sympifies_to_the_same_sympy_value(pair):
    x, _ = pair
    assert sympy.sympify(to_str(x)) == to_sympy(x)  # sympify of our own output, never user text


@settings(max_examples=60, deadline=None)
@given(trees())
def test_what_sympy_evaluates_to_a_rational_is_that_rational_and_prints_so(pair):
    x, X = pair
    if X.is_Rational:
        assert isinstance(x, F) and x == F(int(X.p), int(X.q))
        assert to_str(x) == str(X)
    if X.is_Integer:
        assert to_str(x) == str(int(X)) and to_latex(x) == str(int(X))


@settings(max_examples=60, deadline=None)
@given(trees())
def test_sign_is_exact(pair):
    x, X = pair
    value = sympy.N(X, 60)
    if x == 0:
        assert abs(value) < sympy.Float(10) ** -50
    else:
        assert sign(x) == (1 if value > 0 else -1)


# -- the normal form does not depend on the order of the arguments


def _same(a, b):
    assert a == b and hash(a) == hash(b)
    assert to_str(a) == to_str(b) and to_latex(a) == to_latex(b)


@settings(max_examples=60, deadline=None)
@given(st.lists(trees(depth=2), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_sums_and_products_are_the_same_object_in_any_order(pairs, rnd):
    xs = [x for x, _ in pairs]
    ys = list(xs)
    rnd.shuffle(ys)
    _same(add(*xs), add(*ys))
    _same(mul(*xs), mul(*ys))
    nested = add(xs[0], add(*xs[1:])) if len(xs) > 1 else xs[0]
    _same(add(*xs), nested)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(small, small), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_a_sum_of_exponentials_over_itself_in_another_order_is_one(pairs, rnd):
    terms = [mul(c, exp(d)) for c, d in pairs]
    shuffled = list(terms)
    rnd.shuffle(shuffled)
    total = add(*terms)
    if total != 0:
        assert mul(total, power(add(*shuffled), -1)) == 1


# -- -oo, where it is meaningful, against sympy's limits


@settings(max_examples=40, deadline=None)
@given(trees(depth=2))
def test_minus_infinity_follows_sympy(pair):
    x, X = pair
    assert add(NEG_INF, x) is NEG_INF and -sympy.oo + X == -sympy.oo
    if x != 0:
        s = sign(x)
        if s > 0:
            assert mul(x, NEG_INF) is NEG_INF and X * -sympy.oo == -sympy.oo
        else:
            with pytest.raises(ValueError):
                mul(x, NEG_INF)  # +oo: not a value of the model
    assert exp(NEG_INF) == 0 and sympy.exp(-sympy.oo) == 0
    assert tanh(NEG_INF) == -1 and sympy.tanh(-sympy.oo) == -1
