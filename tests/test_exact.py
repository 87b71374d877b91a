"""The exact layer: values agree with sympy, printed strings round-trip."""

from fractions import Fraction as F

import pytest
import sympy
from hypothesis import given, settings, strategies as st

from worksheet.exact import (NEG_INF, add, cos, exp, mul, power, sin, softmax_row, sqrt, tanh,
                             to_float, to_latex, to_str, to_sympy)

small = st.fractions(min_value=-5, max_value=5, max_denominator=6)


@st.composite
def exprs(draw, depth=2):
    if depth == 0:
        return draw(small)
    a, b = draw(exprs(depth=depth - 1)), draw(exprs(depth=depth - 1))
    op = draw(st.sampled_from(["add", "mul", "exp", "sqrt", "sin", "cos", "tanh", "inv"]))
    if op == "add":
        return add(a, b)
    if op == "mul":
        return mul(a, b)
    if op == "sqrt":
        return sqrt(abs(draw(small)) + 1) * a
    if op == "inv":
        return power(add(2, exp(draw(small))), -1) * a
    return {"exp": exp, "sin": sin, "cos": cos, "tanh": tanh}[op](a)


@settings(max_examples=60)
@given(exprs())
def test_float_agrees_with_sympy(x):
    assert to_float(x) == pytest.approx(float(to_sympy(x)), rel=1e-9, abs=1e-12)


@settings(max_examples=25)
@given(exprs())
def test_str_is_sympy_syntax_for_the_same_value(x):
    back = sympy.sympify(to_str(x))  # our own output, never user text
    assert float(back) == pytest.approx(to_float(x), rel=1e-9, abs=1e-12)


def test_sqrt_rationalises_and_extracts_squares():
    assert to_str(sqrt(8)) == "2*sqrt(2)"
    assert to_str(sqrt(F(3, 2))) == "sqrt(6)/2"
    assert to_str(1 / sqrt(3)) == "sqrt(3)/3"
    assert sqrt(F(49, 4)) == F(7, 2)
    assert sqrt(3) * sqrt(3) == 3


def test_thinking_machines_softmax_is_exact():
    w = softmax_row([F(14), F(12)])
    assert [to_str(x) for x in w] == ["1/(1 + exp(-2))", "1/(1 + exp(2))"]
    assert [to_latex(x) for x in w] == [r"\frac{1}{1 + e^{-2}}", r"\frac{1}{1 + e^{2}}"]
    assert sympy.simplify(to_sympy(w[0]) + to_sympy(w[1]) - 1) == 0


@given(st.lists(st.one_of(small, st.just(NEG_INF)), min_size=1, max_size=5).filter(
    lambda r: any(x is not NEG_INF for x in r)))
def test_softmax_rows_sum_to_one_and_masked_weights_are_zero(row):
    w = softmax_row(row)
    assert sum(map(to_float, w)) == pytest.approx(1, abs=1e-12)
    assert all(x == 0 for x, s in zip(w, row) if s is NEG_INF)


def test_exact_sum_of_weights_is_one_symbolically():
    w = softmax_row([F(1, 2), F(-1, 3), NEG_INF, F(2)])
    assert sympy.simplify(sum(to_sympy(x) for x in w) - 1) == 0


def test_pe_argument_prints_readably():
    assert to_str(sin(power(10000, F(-2, 5)))) == "sin(1/10000**(2/5))"
    assert to_latex(sin(power(10000, F(-2, 5)))) == r"\sin\left(\frac{1}{10000^{2/5}}\right)"


def test_roots_of_negative_parts_keep_the_right_sign():
    import math

    x = add(1, mul(-1, exp(1)))  # 1 - e < 0
    assert to_float(sqrt(mul(x, x))) == pytest.approx(math.e - 1)  # |x|, not x
    assert to_float(sqrt(mul(-2, x))) == pytest.approx(math.sqrt(2 * (math.e - 1)))
    with pytest.raises(ValueError):
        sqrt(x)


def test_integer_roots_of_huge_numbers_are_fast_and_exact():
    import time

    from worksheet.exact import _int_root

    start = time.perf_counter()
    assert _int_root(3**1500, 3) == 3**500
    assert _int_root(2**1500 + 1, 5) is None
    assert _int_root(7, 10**6) is None
    assert _int_root(10**40, 2) == 10**20
    assert time.perf_counter() - start < 0.5


# -- the softmax fast paths build the same trees as the general add/mul

def _generic_softmax_matmul(S, V):
    out = []
    for row in S:
        live = [(k, x) for k, x in enumerate(row) if x is not NEG_INF]
        m = max((x for _, x in live), key=float)
        exps = [(k, exp(add(x, mul(-1, m)))) for k, x in live]
        inv = power(add(*(e for _, e in exps)), -1)
        tops = [add(*(mul(V[k][j], e) for k, e in exps)) for j in range(len(V[0]))]
        out.append(tuple(F(0) if t == 0 else mul(t, inv) for t in tops))
    return tuple(out)


@st.composite
def attention_rows(draw):
    n, m, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    entry = st.one_of(st.integers(-3, 3).map(F), small)
    if draw(st.booleans()):  # calculator mode with d_k = 2: scores over sqrt(2)
        entry = entry.map(lambda x: mul(x, power(sqrt(2), -1)))
    S = [[draw(entry) for _ in range(m)] for _ in range(n)]
    for i in range(n):  # mask some, keep one live entry per row
        for j in range(m):
            if j != i % m and draw(st.integers(0, 4)) == 0:
                S[i][j] = NEG_INF
    V = [[draw(st.sampled_from([F(0), F(1), F(-1), F(2), F(1, 2)])) for _ in range(d_v)] for _ in range(m)]
    return tuple(map(tuple, S)), tuple(map(tuple, V))


@settings(max_examples=300, deadline=None)
@given(attention_rows())
def test_softmax_matmul_builds_the_trees_of_add_and_mul(SV):
    from worksheet.blocks import softmax_matmul
    from worksheet.exact import key

    S, V = SV
    fast, generic = softmax_matmul(S, V), _generic_softmax_matmul(S, V)
    assert [[key(x) for x in row] for row in fast] == [[key(x) for x in row] for row in generic]
    assert [[to_str(x) for x in row] for row in fast] == [[to_str(x) for x in row] for row in generic]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([F(0), F(1), F(-1), F(3, 2)]),
                          st.sampled_from([F(0), F(-1), F(-1, 2), F(-2)])), max_size=6))
def test_exp_combination_is_the_sum_add_and_mul_give(pairs):
    from worksheet.exact import exp_combination, key

    es = [(c, exp(d)) for c, d in pairs]
    assert key(exp_combination(es)) == key(add(*(mul(c, e) for c, e in es)))
