"""The attention kind: exact vs numpy, hand-mode guarantees, lecture numbers."""

from fractions import Fraction as F

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

from worksheet.build import solve_example, solve_inputs
from worksheet.exact import NegInf, to_float, to_str, to_sympy
from worksheet.kinds import attention
from worksheet.solution.problem import matrix

entries = st.fractions(min_value=-3, max_value=3, max_denominator=4)


@st.composite
def qkv(draw):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 6))
    d = draw(st.integers(1, 8))
    dv = draw(st.integers(1, 4))
    mat = lambda r, c: tuple(tuple(draw(entries) for _ in range(c)) for _ in range(r))
    return {"Q": mat(n, d), "K": mat(m, d), "V": mat(m, dv)}


def numpy_attention(Q, K, V, causal):
    S = Q @ K.T / np.sqrt(K.shape[1])
    if causal:
        S = np.where(np.triu(np.ones_like(S), 1) > 0, -np.inf, S)
    W = np.exp(S - S.max(1, keepdims=True))
    W /= W.sum(1, keepdims=True)
    return W, W @ V


@settings(max_examples=40)
@given(qkv(), st.booleans())
def test_exact_matches_numpy_for_random_shapes(m, causal):
    if causal and len(m["Q"]) != len(m["K"]):
        m["K"], m["V"] = m["K"][:1] * len(m["Q"]), m["V"][:1] * len(m["Q"])
    p = solve_inputs("attention", m, {"causal": causal})
    f = {k: np.array([[float(x) for x in r] for r in v]) for k, v in m.items()}
    W, Z = numpy_attention(f["Q"], f["K"], f["V"], causal)
    exact_w = np.array([[to_float(x) for x in r] for r in p.step("weights").exact])
    exact_z = np.array([[to_float(x) for x in r] for r in p.step("output").exact])
    np.testing.assert_allclose(exact_w, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(exact_z, Z, rtol=1e-9, atol=1e-9)


@settings(max_examples=40)
@given(st.integers(0, 10**6), st.booleans())
def test_hand_mode_numbers_are_integers_and_rows_sum_to_one(seed, causal):
    params = attention.Params(causal=causal)
    p = attention.solve(attention.generate(np.random.default_rng(seed), params), params)
    for name in ("X", "W_Q", "W_K", "W_V"):
        assert all(isinstance(x, F) and x.denominator == 1 and abs(x) <= 2 for r in p[name].exact for x in r)
    for name in ("Q", "K", "V", "scores"):
        assert p.step(name).integral
    for row in p.step("scaled").exact:  # sqrt(d_k) = 2: halves
        assert all(x.denominator in (1, 2) for x in row)
    assert p.aids and len(p.aids[0].entries) <= 16  # the e^x table is printed
    for row in p.step("weights").value:
        assert row.sum() == pytest.approx(1, abs=1e-12)


def test_causal_weights_are_zero_above_diagonal():
    params = attention.Params(causal=True, seq_len=4)
    p = attention.solve(attention.generate(np.random.default_rng(3), params), params)
    W, M = p.step("weights").exact, p.step("masked").exact
    for i in range(4):
        for j in range(4):
            if j > i:
                assert isinstance(M[i][j], NegInf) and W[i][j] == 0
    assert to_str(M[0][1]) == "-oo"


def test_weights_rows_sum_to_exactly_one():
    params = attention.Params(causal=True)
    p = attention.solve(attention.generate(np.random.default_rng(5), params), params)
    for row in p.step("weights").exact:
        assert sympy.simplify(sum(to_sympy(x) for x in row) - 1) == 0


def test_step_names_in_order():
    params = attention.Params()
    p = attention.solve(attention.generate(np.random.default_rng(1), params), params)
    assert [s.name for s in p.steps] == ["Q", "K", "V", "scores", "scaled", "weights", "output"]
    params = attention.Params(causal=True)
    p = attention.solve(attention.generate(np.random.default_rng(1), params), params)
    assert [s.name for s in p.steps] == ["Q", "K", "V", "scores", "scaled", "masked", "weights", "output"]


def test_thinking_machines_reference_numbers():
    p = solve_example("thinking-machines")
    assert p.inputs["Q"].shape == (2, 64) and p.inputs["K"].shape == (2, 64)
    assert [to_str(x) for x in p.step("scores").exact[0]] == ["112", "96"]
    assert [to_str(x) for x in p.step("scaled").exact[0]] == ["14", "12"]
    w = p.step("weights")
    assert [to_str(x) for x in w.exact[0]] == [
        "1/(1 + exp(-2))",
        "exp(-2)/(1 + exp(-2))",
    ]  # e^{s - max}: exponents <= 0
    assert [round(v, 4) for v in w.value[0]] == [0.8808, 0.1192]


def test_masking_4x4_reference_numbers():
    p = solve_example("masking-4x4")
    w = p.step("weights")
    assert [to_str(x) for x in w.exact[0]] == ["1", "0", "0", "0"]
    assert [round(v, 4) for v in w.value[1]] == [0.6225, 0.3775, 0, 0]
    # [e^0.1, e^-0.4] / (e^0.1 + e^-0.4)
    e = sympy.exp
    assert sympy.simplify(to_sympy(w.exact[1][0]) - e(F(1, 10)) / (e(F(1, 10)) + e(F(-2, 5)))) == 0


def test_decimal_input_is_exact_and_any_d_k_stays_exact():
    p = solve_inputs("attention", {"Q": matrix([[F(1, 5), 1, 0]]), "K": matrix([[1, F(1, 5), 0]]), "V": matrix([[1]])})
    assert to_str(p.step("scores").exact[0][0]) == "2/5"
    assert to_str(p.step("scaled").exact[0][0]) == "2*sqrt(3)/15"


def test_work_writes_out_one_dot_product():
    p = solve_inputs(
        "attention", {"Q": matrix([[1, 2, -1]]), "K": matrix([[1, 1, 1], [0, 1, 1]]), "V": matrix([[1], [0]])}
    )
    assert r"s_{12} = q_{1} \cdot k_{2} = 1 \cdot 0 + 2 \cdot 1 + (-1) \cdot 1 = 1" in map(str, p.step("scores").work)


def test_hand_mode_rejects_non_square_d_k():
    with pytest.raises(Exception, match="perfect square"):
        attention.Params(d_k=3)
    attention.Params(d_k=3, numbers="calculator")  # fine


def test_calculator_mode_uses_one_decimal_entries():
    params = attention.Params(numbers="calculator", d_k=3)
    m = attention.generate(np.random.default_rng(2), params)
    assert all(x.denominator in (1, 2, 5, 10) for r in m["X"] for x in r)
    assert any(x.denominator != 1 for r in m["X"] for x in r)


# ---------------------------------------------------------------- worked lines as trees (issue 26)
@pytest.mark.parametrize(
    "kind, params",
    [
        ("attention", {}),
        ("attention", {"causal": True}),
        ("attention", {"numbers": "calculator"}),
        ("cross-attention", {}),
        ("cross-attention", {"numbers": "calculator"}),
    ],
)
def test_the_attention_chain_builds_its_formulas_lines_and_symbols_as_trees(kind, params):
    from worksheet.api import problem
    from worksheet.solution.maths import Node, read_latex

    p = problem(kind, 1, **params)
    for s in p.steps:
        assert all(isinstance(x, Node) for x in (s.formula, *s.work, s.symbol)), s.name
    for name in ("X_dec", "H_enc") if kind == "cross-attention" else ():
        assert isinstance(p.inputs[name].symbol, Node)
    for aid in p.aids:  # an e^x table's arguments: the tree of e^x, printed (e^0, e^{-\frac{1}{2}})
        assert all(read_latex(arg) == read_latex(arg.replace("e^0", "e^{0}")) for arg, _ in aid.entries)


def test_a_builders_symbols_may_be_latex_or_trees():
    from worksheet.solution.maths import build as m
    from worksheet.solution.maths import read_latex
    from worksheet.steps import scaled_dot_product as blocks

    def node(latex):
        (n,) = read_latex(latex).items
        return n

    W_Q = m.sym("W", sup="Q")
    assert blocks.subscripted("W^Q", ":,2") == blocks.subscripted(W_Q, ":,2") == node("W^Q_{:,2}")
    assert blocks.subscripted("{W^Q_1}", ":,2") == node("{W^Q_1}_{:,2}")  # a head's block of W^Q
    assert blocks.subscripted("x^\\mathrm{dec}", 1) == node("x^\\mathrm{dec}_{1}")
    assert blocks.capital("s'") == blocks.capital(m.sym("s", prime=1)) == node("S'")
    assert blocks.capital("{s'}^{(1)}") == node("{s'}^{(1)}")  # no letter at its base: as it is

    def scores(sym, a_sym, b_sym):
        p = solve_inputs("attention", {"Q": matrix([[1, 2]]), "K": matrix([[1, 1], [0, 3]]), "V": matrix([[1], [0]])})
        blocks.product_step(
            p,
            "again",
            p.step("scores").exact,
            matrix([[1], [2]]),
            np.array([[15.0]]),
            title="t",
            formula="S = Q K",
            sym=sym,
            a_sym=a_sym,
            b_sym=b_sym,
        )
        return p.step("again").work

    assert scores("q^{(1)}", "x", "{W^Q_1}") == scores(
        m.sym("q", sup="(1)"), m.sym("x"), m.sym(m.sym("W", sub=1, sup="Q"))
    )


def test_the_scaled_line_writes_each_side_once_and_the_mask_its_cases():
    p = solve_inputs("attention", {"Q": matrix([[1, 2]]), "K": matrix([[1, 1], [1, 2]]), "V": matrix([[1], [0]])})
    # d_k = 2: sqrt(2) is all there is to say; s_12 = 5, 5/sqrt(2) = 5 sqrt(2)/2
    assert [str(w) for w in p.step("scaled").work] == [
        r"s'_{12} = \frac{s_{12}}{\sqrt{2}} = \frac{5}{\sqrt{2}} = \frac{5 \sqrt{2}}{2} \approx 3.5355"
    ]
    Q, K = matrix([[1, 2, 0, 0], [0, 1, 0, 0]]), matrix([[1, 1, 0, 0], [1, 2, 0, 1]])
    p = solve_inputs("attention", {"Q": Q, "K": K, "V": matrix([[1], [0]])}, {"causal": True})
    # d_k = 4: sqrt(4) = 2 is a line; 5/2 is written once, not "= 5/2 = 5/2"
    assert [str(w) for w in p.step("scaled").work] == [r"\sqrt{4} = 2", r"s'_{12} = \frac{s_{12}}{2} = \frac{5}{2}"]
    assert str(p.step("masked").formula) == r"M_{ij} = \begin{cases} S'_{ij} & j \le i \\ -\infty & j > i \end{cases}"
    assert str(p.step("masked").work[0]) == r"M_{12} = -\infty \quad (j = 2 > i = 1)"


def test_a_calculator_line_writes_a_fraction_that_does_not_terminate_as_a_fraction():
    from worksheet.solution.maths import to_mathml_inner
    from worksheet.steps import line_trees as lines

    assert str(lines.nx(F(-1, 3))) == r"-\frac{1}{3}" and str(lines.nx(F(-1, 4))) == "-0.25"
    assert "<mfrac>" in to_mathml_inner(lines.nx(F(1, 3)))
