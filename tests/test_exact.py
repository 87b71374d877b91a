"""The exact layer: values agree with sympy, printed strings round-trip."""

import math
from fractions import Fraction as F

import pytest
import sympy
from hypothesis import given, settings, strategies as st

from worksheet.exact import NEG_INF, add, cos, exp, mul, power, sin, sqrt, tanh, to_float, to_latex, to_str, to_sympy
from worksheet.steps.softmax_steps import softmax_row

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


@given(
    st.lists(st.one_of(small, st.just(NEG_INF)), min_size=1, max_size=5).filter(
        lambda r: any(x is not NEG_INF for x in r)
    )
)
def test_softmax_rows_sum_to_one_and_masked_weights_are_zero(row):
    w = softmax_row(row)
    assert sum(map(to_float, w)) == pytest.approx(1, abs=1e-12)
    assert all(x == 0 for x, s in zip(w, row) if s is NEG_INF)


def test_exact_sum_of_weights_is_one_symbolically():
    w = softmax_row([F(1, 2), F(-1, 3), NEG_INF, F(2)])
    assert sympy.simplify(sum(to_sympy(x) for x in w) - 1) == 0


def test_pe_argument_prints_in_the_canonical_root_form():
    # 1/10000**(2/5) = 10**(-8/5): exponents in (0, 1), the rest in the coefficient (as sympy)
    assert to_str(sin(power(10000, F(-2, 5)))) == "sin(10**(2/5)/100)"
    assert to_latex(sin(power(10000, F(-2, 5)))) == r"\sin\left(\frac{10^{2/5}}{100}\right)"
    assert power(10000, F(-2, 5)) == power(100, F(-4, 5))


def test_roots_of_negative_parts_keep_the_right_sign():
    import math

    x = add(1, mul(-1, exp(1)))  # 1 - e < 0
    assert to_float(sqrt(mul(x, x))) == pytest.approx(math.e - 1)  # |x|, not x
    assert to_float(sqrt(mul(-2, x))) == pytest.approx(math.sqrt(2 * (math.e - 1)))
    with pytest.raises(ValueError):
        sqrt(x)


def test_integer_roots_of_huge_numbers_are_exact():
    """Integer Newton steps, no float estimate (no timing here: CI machines differ)."""
    from worksheet.exact.roots import _int_root

    assert _int_root(3**1500, 3) == 3**500
    assert _int_root(2**1500 + 1, 5) is None
    assert _int_root(7, 10**6) is None
    assert _int_root(10**40, 2) == 10**20


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
    from worksheet.steps.scaled_dot_product import softmax_matmul
    from worksheet.exact import key

    S, V = SV
    fast, generic = softmax_matmul(S, V), _generic_softmax_matmul(S, V)
    assert [[key(x) for x in row] for row in fast] == [[key(x) for x in row] for row in generic]
    assert [[to_str(x) for x in row] for row in fast] == [[to_str(x) for x in row] for row in generic]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([F(0), F(1), F(-1), F(3, 2)]), st.sampled_from([F(0), F(-1), F(-1, 2), F(-2)])),
        max_size=6,
    )
)
def test_exp_combination_is_the_sum_add_and_mul_give(pairs):
    from worksheet.exact import key
    from worksheet.steps.softmax_steps import exp_combination

    es = [(c, exp(d)) for c, d in pairs]
    assert key(exp_combination(es)) == key(add(*(mul(c, e) for c, e in es)))


# -- issue 10 §3: floats of exact values never overflow


def test_floats_of_huge_and_tiny_values_are_honest_not_errors():
    import math

    assert to_float(1 / (1 + exp(729))) == pytest.approx(math.exp(-729), rel=1e-9)  # a subnormal, not 0
    assert to_float(power(add(1, exp(800)), -1)) == 0.0
    assert to_float(exp(-1000)) == 0.0
    assert to_float(exp(1000)) == math.inf and to_float(mul(-1, exp(1000))) == -math.inf
    assert to_float(mul(exp(800), power(add(1, exp(800)), -1))) == 1.0  # inf * 0 redone exactly
    assert to_float(F(10**400)) == math.inf and to_float(F(-(10**400))) == -math.inf
    assert to_float(F(1, 10**1000)) == 0.0 and to_float(F(10**400, 10**399 + 1)) == pytest.approx(10)
    assert to_float(mul(F(10**400), sqrt(2))) == math.inf
    assert to_float(mul(F(1, 10**400), exp(900))) == pytest.approx(math.exp(900 - 400 * math.log(10)))


def test_softmax_of_scores_far_apart_has_honest_weights():
    w = softmax_row([F(710), F(0)])
    assert [to_float(x) for x in w] == [1.0, pytest.approx(math.exp(-710), rel=1e-9)]
    w = softmax_row([F(0), F(2000), F(1)])
    assert [to_float(x) for x in w] == [0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    "kind, inputs",
    [
        ("self-attention-basic", {"X": [[20, 20], [1, 0]]}),
        ("softmax-scaling", {"scores": [[710, 0]]}),
        ("next-token", {"h": [[30, 30]], "W_vocab": [[12, 0, -1], [12, 0, 1]]}),
        ("attention", {"Q": [["1e5", 0], [0, 1]], "K": [[1, 0], [0, 1]], "V": [[1, 2], [3, 4]]}),
    ],
)
def test_solve_with_scores_more_than_709_apart_works(tmp_path, kind, inputs):
    import json

    from click.testing import CliRunner

    from worksheet.cli import main

    path = tmp_path / "in.json"
    path.write_text(json.dumps(inputs))
    r = CliRunner().invoke(main, ["solve", kind, "--input", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    steps = json.loads(r.output)["problems"][0]["steps"]
    softmax = [s for s in steps if s["name"] in ("weights", "probabilities", "softmax_raw")]
    assert softmax
    for step in softmax:  # row 1: one weight is 1 to float precision, the others (e^-709 and less) 0
        row = step["value"][0]
        assert sum(row) == pytest.approx(1) and max(row) == pytest.approx(1)


# -- issue 10 §4: the fuzz findings


def test_minus_infinity_times_a_number():
    assert mul(2, NEG_INF) is NEG_INF and mul(sqrt(2), NEG_INF) is NEG_INF
    for c in (-2, -1, mul(-1, exp(1))):
        with pytest.raises(ValueError, match=r"\+oo"):
            mul(c, NEG_INF)  # would be +oo: never printed as "-2 -\infty" or "--oo"
    with pytest.raises(ValueError, match="undefined"):
        mul(0, NEG_INF)
    with pytest.raises(ValueError):
        mul(NEG_INF, NEG_INF)
    assert to_str(mul(F(1, 2), NEG_INF)) == "-oo" and to_latex(mul(3, NEG_INF)) == r"-\infty"


def test_minus_infinity_in_sums_and_functions():
    assert add(NEG_INF, 1) is NEG_INF and add(1, exp(2), NEG_INF) is NEG_INF
    assert tanh(NEG_INF) == -1 and exp(NEG_INF) == 0 and power(NEG_INF, -1) == 0
    for f in (sin, cos, sqrt):
        with pytest.raises(ValueError):
            f(NEG_INF)


def test_softmax_of_an_all_masked_row_is_an_error():
    from worksheet.steps.softmax_steps import ratio_of_exp_sums

    with pytest.raises(ValueError, match="at least one unmasked"):
        softmax_row([NEG_INF, NEG_INF])
    with pytest.raises(ValueError, match="at least one unmasked"):
        ratio_of_exp_sums([(F(1), NEG_INF)], [NEG_INF])


def test_products_of_roots_merge_and_cancel():
    assert to_str(sqrt(2) * sqrt(6)) == "2*sqrt(3)"
    assert add(mul(sqrt(2), sqrt(3)), mul(-1, sqrt(6))) == 0
    with pytest.raises(ZeroDivisionError):
        power(add(mul(sqrt(2), sqrt(3)), mul(-1, sqrt(6))), -1)
    assert power(16, F(1, 3)) * power(4, F(1, 3)) == 4
    assert to_str(power(2, F(1, 3)) * power(3, F(1, 3))) == "6**(1/3)"
    assert to_str(power(12, F(1, 3)) * power(18, F(1, 3))) == "6"
    assert sqrt(2) * power(2, F(1, 3)) == power(2, F(5, 6))


def test_square_roots_reduce_beyond_the_trial_division_bound():
    big = 1_000_003  # a prime above the trial-division bound
    assert to_str(sqrt(2 * big * big)) == f"{big}*sqrt(2)"
    assert sqrt(F(big * big, 3)) == mul(F(big, 3), sqrt(3))
    p, q = 100_003, 100_019  # primes above the bound: their product is kept whole, correctly
    assert to_float(sqrt(p * q)) == pytest.approx(math.sqrt(p * q))
    assert sqrt(p * q) * sqrt(p) == mul(p, sqrt(q))  # common factors of kept parts are split
    assert sqrt(p * q) * sqrt(p * q) == p * q


def test_sums_are_canonical_whatever_the_order_of_their_terms():
    e, e2 = exp(1), exp(2)
    assert add(e, e2) == add(e2, e) and hash(add(e, e2)) == hash(add(e2, e))
    assert to_str(add(e, e2)) == to_str(add(e2, e)) == "exp(1) + exp(2)"
    assert mul(add(e, e2), power(add(e2, e), -1)) == 1
    assert to_str(add(exp(-2), 1, exp(-1))) == "1 + exp(-1) + exp(-2)"


def test_sin_cos_tanh_of_a_negative_argument_are_normalised():
    x = sqrt(2)
    assert cos(mul(-1, x)) == cos(x)
    assert sin(mul(-1, x)) == mul(-1, sin(x)) and to_str(sin(mul(-1, x))) == "-sin(sqrt(2))"
    assert tanh(F(-1, 2)) == mul(-1, tanh(F(1, 2)))
    assert cos(add(1, mul(-1, exp(1)))) == cos(add(-1, exp(1)))


def test_signs_are_decided_exactly_not_from_floats():
    from worksheet.exact import sign

    near = F(141421356237309504880168872420969807856967187537694, 10**50)  # sqrt(2) to 50 places, low
    assert sign(add(sqrt(2), -near)) == 1 and sign(add(near, mul(-1, sqrt(2)))) == -1
    assert to_float(add(sqrt(2), -near)) > 0
    with pytest.raises(ValueError, match="cannot decide the sign"):
        sign(add(mul(sin(1), sin(1)), mul(cos(1), cos(1)), -1))  # 0, which the normal form does not see


# -- issue 9 §3: an entry that is an integer prints as that integer


def test_ratio_of_proportional_sums_is_the_rational():
    top = add(-2, mul(-4, exp(-1)))
    bottom = add(1, mul(2, exp(-1)))
    assert mul(top, power(bottom, -1)) == -2 and to_str(top / bottom) == "-2"
    assert add(2, mul(2, exp(1))) / add(1, exp(1)) == 2
    assert to_str(add(F(1, 2), exp(-1)) / add(1, exp(-1))) == "(1/2 + exp(-1))/(1 + exp(-1))"


def test_attention_output_of_a_constant_value_column_is_that_integer():
    from worksheet.steps.scaled_dot_product import softmax_matmul

    S = ((F(0), F(-1), F(-1)), (F(1), NEG_INF, F(0)))
    V = ((F(-2), F(1)), (F(-2), F(0)), (F(-2), F(3)))
    Z = softmax_matmul(S, V)
    assert [to_str(row[0]) for row in Z] == ["-2", "-2"]
    assert to_str(Z[0][1]) == "(1 + 3*exp(-1))/(1 + 2*exp(-1))"


def test_hand_attention_key_prints_an_integer_for_a_constant_value_column(tmp_path):
    import json

    from click.testing import CliRunner

    from worksheet.cli import main

    path = tmp_path / "in.json"
    path.write_text(json.dumps({"Q": [[1, 0], [0, 1]], "K": [[2, 0], [0, 2]], "V": [[-2, 1], [-2, 3]]}))
    r = CliRunner().invoke(main, ["solve", "attention", "--input", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    out = next(s for s in json.loads(r.output)["problems"][0]["steps"] if s["name"] == "output")
    assert [row[0] for row in out["exact"]] == ["-2", "-2"]
